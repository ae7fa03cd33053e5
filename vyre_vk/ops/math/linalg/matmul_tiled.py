"""`vyre-libs::math::matmul_tiled` and `vyre-libs::math::matmul_bias_tiled`: cooperative tiled
wrapping u32 GEMM ``out[r,c] = (bias[c] +) sum_kk a[r*k+kk]*b[kk*n+c]`` through workgroup memory
(port of vyre-libs/src/math/linalg/matmul_tiled/, the cooperative path).

Geometry (shape.rs, program.rs): a workgroup shape ``[wx,wy,wz]`` (default [16,16,1]) gives an
output tile of ``out_rows = wy*wz`` by ``out_cols = wx`` cells, one per lane; the program is
dispatched *flat* with workgroup ``[lanes,1,1]`` (``lanes = wx*wy*wz``). Workgroup ``t`` owns the
tile ``(t / tile_cols, t % tile_cols)``, ``tile_cols = ceil(n/out_cols)``. The output buffer is
padded to ``row_tiles*col_tiles*lanes`` elements so vyre's grid rule (max result count / lanes)
launches exactly one workgroup per tile; ``with_output_byte_range`` returns the logical m*n.
(Inputs count too, since workgroup memory forces the full span: a larger ``b`` launches extra
workgroups whose tile lies past row m; every cell store is guarded, so they only stage tiles.)

Body (body.rs, tile_coords.rs): per k-tile of width ``tile``, ``load_passes`` strided passes
stage ``a[tile_row_base.., k_base..]`` into ``matmul_a_tile`` (out_rows x tile) and
``b[k_base.., tile_col_base..]`` into ``matmul_b_tile`` (tile x out_cols), zero outside the
matrices; barrier; ``acc += a_tile[local_row*tile+t] * b_tile[t*out_cols+local_col]`` for
in-bounds cells; barrier. The body sits in ``Region(semiring_gemm, parent=<op id>)`` inside the
op's Region. Only u32 is ported: vyre's f16/bf16 inputs select the tensor-core MMA path, and its
cooperative body writes u32 zero literals into the tiles and the accumulator, so an f32 build is
ill-typed upstream (tests/ops/math/test_matmul_tiled.py shows our validator rejecting it).

Example::

    >>> p = matmul_tiled("a", "b", "out", 2, 2, 2, 2)
    >>> p.workgroup_size, [(b.name, b.count) for b in p.buffers], p.buffers[-1].output_byte_range
    ((256, 1, 1), [('a', 4), ('b', 4), ('matmul_a_tile', 32), ('matmul_b_tile', 32), ('out', 256)], (0, 16))
"""
from __future__ import annotations

from typing import Optional, Sequence

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap, wrap_child
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_u32_slice
from .matmul import bias_vector_expected, bias_vector_inputs
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::matmul_tiled"
OP_ID_BIAS = "vyre-libs::math::matmul_bias_tiled"
#: vyre-primitives/src/math/semiring_gemm.rs OP_ID: the child Region holding the kernel body.
SEMIRING_GEMM_OP_ID = "vyre-primitives::math::semiring_gemm"
DEFAULT_WORKGROUP = (16, 16, 1)
A_TILE, B_TILE = "matmul_a_tile", "matmul_b_tile"
U32_MAX = 0xFFFFFFFF
# u32 results (wrapping multiply-add): byte-exact, no f32 window.
ULP = None


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _count(op_id: str, name: str, *dims: int) -> int:
    total = 1
    for d in dims:
        total *= d
    if total > U32_MAX:
        raise OpParamError(f"Fix: {op_id}: ElementCountOverflow for `{name}` shape {list(dims)}; "
                         "reduce the matrix or workgroup dimensions so the count fits in u32.")
    return total


def auto_tile(k: int) -> int:
    """vyre's `MatmulTiled::auto` k-tile for u32 inputs: the largest power of two <= clamp(k, 1, 32)."""
    bounded = min(max(k, 1), 32)
    return 1 << (bounded.bit_length() - 1)


def output_tile_coordinates(n: int, out_rows: int, out_cols: int, lanes: int,
                            lane_row: str, lane_col: str, row: str, col: str) -> list:
    """Lets binding this lane's output cell (tile_coords.rs bind_output_tile_coordinates; the flat
    workgroup has x_lanes = lanes, y_lanes = 1)."""
    local = Expr.var("local")
    return [
        Node.let_bind("local", Expr.add(Expr.add(Expr.local_x(), Expr.mul(Expr.local_y(), Expr.u32(lanes))),
                                        Expr.mul(Expr.local_z(), Expr.u32(lanes)))),
        Node.let_bind("tile_block", Expr.workgroup_x()),
        Node.let_bind("tile_cols", Expr.u32(_ceil_div(n, out_cols))),
        Node.let_bind("tile_row_base", Expr.mul(Expr.div(Expr.var("tile_block"), Expr.var("tile_cols")),
                                                Expr.u32(out_rows))),
        Node.let_bind("tile_col_base", Expr.mul(Expr.rem(Expr.var("tile_block"), Expr.var("tile_cols")),
                                                Expr.u32(out_cols))),
        Node.let_bind(lane_row, Expr.div(local, Expr.u32(out_cols))),
        Node.let_bind(lane_col, Expr.rem(local, Expr.u32(out_cols))),
        Node.let_bind(row, Expr.add(Expr.var("tile_row_base"), Expr.var(lane_row))),
        Node.let_bind(col, Expr.add(Expr.var("tile_col_base"), Expr.var(lane_col))),
    ]


def _stage(tile_buf: str, limit: int, linear: str, split: int, outer: tuple, inner: tuple, lanes: int,
           src: str, src_row: str, src_col: str, rows: int, cols: int) -> list:
    """One staging step of a load pass: tile slot `linear` (< `limit`) = (outer, inner) =
    (linear / split, linear % split) is zeroed, then copied from src[src_row, src_col] (a
    rows x cols row-major matrix) when that lies inside it. outer/inner = (let name, base var)."""
    (outer_name, outer_base), (inner_name, inner_base) = outer, inner
    lin = Expr.var(linear)
    return [
        Node.let_bind(linear, Expr.add(Expr.var("local"), Expr.mul(Expr.var("load_pass"), Expr.u32(lanes)))),
        Node.if_then(Expr.lt(lin, Expr.u32(limit)), [
            Node.let_bind(outer_name, Expr.div(lin, Expr.u32(split))),
            Node.let_bind(inner_name, Expr.rem(lin, Expr.u32(split))),
            Node.let_bind(src_row, Expr.add(Expr.var(outer_base), Expr.var(outer_name))),
            Node.let_bind(src_col, Expr.add(Expr.var(inner_base), Expr.var(inner_name))),
            Node.store(tile_buf, lin, Expr.u32(0)),
            Node.if_then(Expr.and_(Expr.lt(Expr.var(src_row), Expr.u32(rows)),
                                   Expr.lt(Expr.var(src_col), Expr.u32(cols))), [
                Node.store(tile_buf, lin, Expr.load(src, Expr.add(Expr.mul(Expr.var(src_row), Expr.u32(cols)),
                                                                  Expr.var(src_col))))]),
        ]),
    ]


def cooperative_matmul_body(a: str, b: str, bias: Optional[str], out: str, m: int, k: int, n: int,
                            k_tile: int, out_rows: int, out_cols: int, lanes: int) -> list:
    """The shared kernel body of both variants (body.rs cooperative_matmul_body)."""
    a_values, b_values = out_rows * k_tile, k_tile * out_cols
    tile_count = _ceil_div(k, k_tile)
    load_passes = max(_ceil_div(max(a_values, b_values), lanes), 1)
    row, col = Expr.var("row"), Expr.var("col")
    in_bounds = Expr.and_(Expr.lt(row, Expr.u32(m)), Expr.lt(col, Expr.u32(n)))
    tile_k = Expr.var("tile_k")
    body = output_tile_coordinates(n, out_rows, out_cols, lanes, "local_row", "local_col", "row", "col")
    body.append(Node.let_bind("acc", Expr.u32(0)))
    if bias is not None:
        body.append(Node.if_then(in_bounds, [Node.assign("acc", Expr.load(bias, col))]))
    # a tile: out_rows x k_tile of a (m x k); b tile: k_tile x out_cols of b (k x n)
    stage_a = _stage(A_TILE, a_values, "a_linear", k_tile, ("a_local_row", "tile_row_base"),
                     ("a_local_k", "k_base"), lanes, a, "a_row", "a_k", m, k)
    stage_b = _stage(B_TILE, b_values, "b_linear", out_cols, ("b_local_k", "k_base"),
                     ("b_local_col", "tile_col_base"), lanes, b, "b_k", "b_col", k, n)
    product = Expr.mul(Expr.load(A_TILE, Expr.add(Expr.mul(Expr.var("local_row"), Expr.u32(k_tile)), tile_k)),
                       Expr.load(B_TILE, Expr.add(Expr.mul(tile_k, Expr.u32(out_cols)), Expr.var("local_col"))))
    body.append(Node.loop_for("tile_idx", Expr.u32(0), Expr.u32(tile_count), [
        Node.let_bind("k_base", Expr.mul(Expr.var("tile_idx"), Expr.u32(k_tile))),
        Node.loop_for("load_pass", Expr.u32(0), Expr.u32(load_passes), stage_a + stage_b),
        Node.barrier(),  # tiles staged before any lane reads them
        Node.loop_for("tile_k", Expr.u32(0), Expr.u32(k_tile), [
            Node.if_then(in_bounds, [Node.assign("acc", Expr.add(Expr.var("acc"), product))])]),
        Node.barrier(),  # every lane done reading before the next k-tile overwrites them
    ]))
    body.append(Node.if_then(in_bounds, [Node.store(out, Expr.add(Expr.mul(row, Expr.u32(n)), col), Expr.var("acc"))]))
    return body


def _program(op_id: str, a: str, b: str, bias: Optional[str], out: str, m: int, k: int, n: int, tile: int,
             workgroup_size: Sequence[int], generator: Optional[str], dtype: DataType) -> Program:
    """build_matmul_tiled_program's cooperative branch, for any element type (vyre's typing)."""
    names = [a, b] + ([bias] if bias is not None else []) + [out]
    if len(set(names)) != len(names):
        raise OpParamError(f"Fix: {op_id}: NameCollision among buffers {names}; give every tensor its own name.")
    if tile == 0:
        raise OpParamError(f"Fix: {op_id}: ShapeMismatch for `tile`: found [0], expected [1]; pass tile >= 1.")
    if m == 0 or n == 0:
        # vyre builds a zero-count output here (which its wire format then rejects)
        raise OpParamError(f"Fix: {op_id}: empty output {m}x{n}; pass m >= 1 and n >= 1.")
    for name, dims in ((a, (m, k)), (b, (k, n)), (out, (m, n))):
        _count(op_id, name, *dims)
    wg = tuple(int(v) for v in workgroup_size)
    if len(wg) != 3:
        raise OpParamError(f"Fix: {op_id}: workgroup size {wg} must have three entries, e.g. (16, 16, 1).")
    out_cols, out_rows = max(wg[0], 1), max(wg[1], 1) * max(wg[2], 1)
    lanes = _count(op_id, "matmul_workgroup", out_rows, out_cols)
    a_tile = _count(op_id, A_TILE, out_rows, tile)
    b_tile = _count(op_id, B_TILE, tile, out_cols)
    padded = _count(op_id, "matmul_tiled_launch_lanes", _ceil_div(m, out_rows), _ceil_div(n, out_cols), lanes)
    gen = generator or op_id
    kernel = cooperative_matmul_body(a, b, bias, out, m, k, n, tile, out_rows, out_cols, lanes)
    buffers = [ro_decl(a, 0, m * k, dtype), ro_decl(b, 1, k * n, dtype)]
    if bias is not None:
        buffers.append(ro_decl(bias, 2, n, dtype))
    buffers += [BufferDecl.workgroup(A_TILE, a_tile, dtype), BufferDecl.workgroup(B_TILE, b_tile, dtype),
                out_decl(out, 3 if bias is not None else 2, padded, dtype)
                .with_output_byte_range(0, m * n * 4)]
    return Program.wrapped(buffers, (lanes, 1, 1),
                           [wrap(gen, [wrap_child(SEMIRING_GEMM_OP_ID, gen, kernel)], None)])


def _check_dtype(op_id: str, dtype: DataType) -> None:
    if dtype is not DataType.U32:
        raise OpParamError(
            f"Fix: {op_id}: dtype {dtype.value} is not ported; pass DataType.U32. (vyre sends f16/bf16 "
            "to a tensor-core MMA body, and its cooperative body is u32-typed, so f32 does not validate.)")


def matmul_tiled(a: str, b: str, out: str, m: int, k: int, n: int, tile: int, *,
                 workgroup_size: Sequence[int] = DEFAULT_WORKGROUP, generator: Optional[str] = None,
                 dtype: DataType = DataType.U32) -> Program:
    """``out = a @ b`` (m x k times k x n, row-major, wrapping u32), k split into `tile`-wide
    tiles; `workgroup_size` / `generator` are vyre's `with_workgroup_size` / `with_region_generator`."""
    _check_dtype(OP_ID, dtype)
    return _program(OP_ID, a, b, None, out, m, k, n, tile, workgroup_size, generator, dtype)


def matmul_bias_tiled(a: str, b: str, bias: str, out: str, m: int, k: int, n: int, tile: int, *,
                      workgroup_size: Sequence[int] = DEFAULT_WORKGROUP, generator: Optional[str] = None,
                      dtype: DataType = DataType.U32) -> Program:
    """``out = a @ b + bias`` (bias broadcast over rows); otherwise as :func:`matmul_tiled`."""
    _check_dtype(OP_ID_BIAS, dtype)
    return _program(OP_ID_BIAS, a, b, bias, out, m, k, n, tile, workgroup_size, generator, dtype)


def _build(m: int = 2, k: int = 2, n: int = 2, tile: int = 2) -> Program:
    return matmul_tiled("a", "b", "out", m, k, n, tile)


def _build_bias(m: int = 2, k: int = 2, n: int = 2, tile: int = 2) -> Program:
    return matmul_bias_tiled("a", "b", "bias", "out", m, k, n, tile)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [bias_vector_inputs()[0][:2]],
    expected_output=lambda: [[pack_u32_slice([19, 22, 43, 50])]],
    category="math", ulp=ULP,
    bench=dict(m=1024, k=1024, n=1024, tile=16),
)

ENTRY_BIAS = register_op(
    OP_ID_BIAS, _build_bias,
    test_inputs=bias_vector_inputs,
    expected_output=bias_vector_expected,
    category="math", ulp=ULP,
    bench=dict(m=1024, k=1024, n=1024, tile=16),
)
