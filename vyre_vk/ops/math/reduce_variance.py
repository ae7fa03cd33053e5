"""`vyre-libs::math::reduce_variance`: population variance of ``n`` f32 values into ``output[0]``
(port of vyre-libs/src/math/reduce_variance.rs, the tiled program, ``bessel = false``).

Workgroup [256,1,1]. In workgroup 0 each lane runs Welford over its strided slice
(``idx = chunk*256 + local``: ``n_i += 1; delta = x - M1; M1 += delta / f32(n_i);
M2 += delta * (x - M1)``) and stages ``(n_i, M1, M2)`` in ``var_n_scratch`` (u32),
``var_m1_scratch``, ``var_m2_scratch``; then a pairwise Welford merge tree (strides 128..1, a
barrier after each): ``M1 = select(n == 0, 0, (na*M1a + nb*M1b)/n)``,
``M2 = (M2a + M2b) + delta^2 * select(n == 0, 0, na*nb/n)``; lane 0 stores
``M2 / f32(n)``. ``n == 0`` is rejected (vyre builds a trapping program).

Example::

    >>> [b.name for b in reduce_variance("input", "output", 256).buffers]
    ['input', 'var_n_scratch', 'var_m1_scratch', 'var_m2_scratch', 'output']
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import out_decl, ro_decl
from ..registry import register_case
from ..wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::reduce_variance"
REDUCE_VARIANCE_TILE = 256
EMPTY_REDUCTION_FIX = ("Fix: reduce_variance n=0 is invalid; pass at least one input element or route empty "
                       "reductions to a caller-defined identity.")
# 4 ULP: elementary f32 ops only (vyre's program budget; a backend may contract a*b+c).
ULP = 4


def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def reduce_variance(input: str, output: str, n: int, bessel: bool = False) -> Program:
    if n == 0:
        raise OpParamError(EMPTY_REDUCTION_FIX)
    tile = REDUCE_VARIANCE_TILE
    chunks = -(-n // tile)
    v, u32, f32 = Expr.var, Expr.u32, Expr.f32
    local = v("local")
    wg0 = Expr.eq(Expr.workgroup_x(), u32(0))
    body = [
        Node.let_bind("local", Expr.local_x()),
        Node.if_then(wg0, [
            Node.let_bind("n_i", u32(0)),
            Node.let_bind("M1_i", f32(0.0)),
            Node.let_bind("M2_i", f32(0.0)),
            Node.loop_for("chunk", u32(0), u32(chunks), [
                Node.let_bind("idx", Expr.add(Expr.mul(v("chunk"), u32(tile)), local)),
                Node.if_then(Expr.lt(v("idx"), u32(n)), [
                    Node.let_bind("x", Expr.load(input, v("idx"))),
                    Node.assign("n_i", Expr.add(v("n_i"), u32(1))),
                    Node.let_bind("delta", Expr.sub(v("x"), v("M1_i"))),
                    Node.assign("M1_i", Expr.add(v("M1_i"), Expr.div(v("delta"), Expr.cast(DataType.F32, v("n_i"))))),
                    Node.let_bind("delta2", Expr.sub(v("x"), v("M1_i"))),
                    Node.assign("M2_i", Expr.add(v("M2_i"), Expr.mul(v("delta"), v("delta2")))),
                ]),
            ]),
            Node.store("var_n_scratch", local, v("n_i")),
            Node.store("var_m1_scratch", local, v("M1_i")),
            Node.store("var_m2_scratch", local, v("M2_i")),
        ]),
        Node.barrier(),
    ]
    stride = _next_pow2(tile) // 2
    while stride > 0:
        other = Expr.add(local, u32(stride))
        empty = Expr.eq(v("combined_n"), u32(0))
        body.append(Node.if_then(Expr.and_(wg0, Expr.lt(local, u32(stride))), [
            Node.if_then(Expr.lt(other, u32(tile)), [
                Node.let_bind("n_a", Expr.load("var_n_scratch", local)),
                Node.let_bind("M1_a", Expr.load("var_m1_scratch", local)),
                Node.let_bind("M2_a", Expr.load("var_m2_scratch", local)),
                Node.let_bind("n_b", Expr.load("var_n_scratch", other)),
                Node.let_bind("M1_b", Expr.load("var_m1_scratch", other)),
                Node.let_bind("M2_b", Expr.load("var_m2_scratch", other)),
                Node.let_bind("combined_n", Expr.add(v("n_a"), v("n_b"))),
                Node.let_bind("n_a_f", Expr.cast(DataType.F32, v("n_a"))),
                Node.let_bind("n_b_f", Expr.cast(DataType.F32, v("n_b"))),
                Node.let_bind("combined_n_f", Expr.cast(DataType.F32, v("combined_n"))),
                Node.let_bind("delta", Expr.sub(v("M1_b"), v("M1_a"))),
                Node.let_bind("combined_M1", Expr.select(empty, f32(0.0), Expr.div(
                    Expr.add(Expr.mul(v("n_a_f"), v("M1_a")), Expr.mul(v("n_b_f"), v("M1_b"))), v("combined_n_f")))),
                Node.let_bind("term", Expr.mul(Expr.mul(v("delta"), v("delta")), Expr.select(
                    empty, f32(0.0), Expr.div(Expr.mul(v("n_a_f"), v("n_b_f")), v("combined_n_f"))))),
                Node.let_bind("combined_M2", Expr.add(Expr.add(v("M2_a"), v("M2_b")), v("term"))),
                Node.store("var_n_scratch", local, v("combined_n")),
                Node.store("var_m1_scratch", local, v("combined_M1")),
                Node.store("var_m2_scratch", local, v("combined_M2")),
            ]),
        ]))
        body.append(Node.barrier())
        stride //= 2
    total_n = Expr.load("var_n_scratch", u32(0))
    denom = Expr.cast(DataType.F32, Expr.sub(total_n, u32(1)) if bessel else total_n)
    body.append(Node.if_then(Expr.and_(wg0, Expr.eq(local, u32(0))), [
        Node.store(output, u32(0), Expr.div(Expr.load("var_m2_scratch", u32(0)), denom))]))
    return Program.wrapped(
        [ro_decl(input, 0, n), BufferDecl.workgroup("var_n_scratch", tile, DataType.U32),
         BufferDecl.workgroup("var_m1_scratch", tile, DataType.F32),
         BufferDecl.workgroup("var_m2_scratch", tile, DataType.F32), out_decl(output, 1, 1)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 256) -> Program:
    return reduce_variance("input", "output", n)


ENTRY = register_case(OP_ID, _build, [pack_f32_slice([2.0] * 256)], [pack_f32_slice([0.0])], category="math", ulp=ULP,
                      bench=dict(n=1 << 24))
