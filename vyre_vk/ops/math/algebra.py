"""`vyre-libs::math::algebra::{join, meet, minplus_mul, bool_semiring_matmul, sketch_mix}`:
semiring / lattice primitives over u32 (port of vyre-libs/src/math/algebra.rs).

- ``join`` / ``meet`` / ``minplus_mul``: vyre-libs' elementwise binary u32 skeleton
  (``let idx = gid.x; if idx < n { out[idx] = f(a[idx], b[idx]) }``, workgroup [64,1,1]) with
  ``f`` = ``a | b``, ``a & b`` and ``SaturatingAdd(a, b)`` (u32::MAX is the semiring's infinity).
- ``sketch_mix``: the elementwise unary skeleton with Thomas Wang's 32-bit mix
  (``h += ~(h << 15); h ^= h >> 12; h += h << 2; h ^= h >> 4; h *= 2057; h ^= h >> 16``, wrapping).
- ``bool_semiring_matmul``: ``out[r, c] = OR_k (a[r, k] != 0 && b[k, c] != 0)`` as 0/1. Two
  programs, as in vyre: when ``rows*cols <= 64`` and ``inner <= 64`` one invocation
  (workgroup [1,1,1], ``if gid.x == 0``) stores every cell as an unrolled OR of selects over
  literal indices; otherwise one invocation per cell (workgroup [64,1,1]) loops over ``k``.

Every Region generator is the op id (``wrap_anonymous``). Aliased buffer names raise
``ValueError`` (vyre's ``TensorRefError::NameCollision``).

Example::

    >>> p = bool_semiring_matmul("a", "b", "out", 2, 3, 2)
    >>> p.workgroup_size, [(b.name, b.binding, b.count) for b in p.buffers]
    ((1, 1, 1), [('a', 0, 6), ('b', 1, 6), ('out', 2, 4)])
    >>> bool_semiring_matmul("a", "b", "out", 9, 3, 9).workgroup_size
    (64, 1, 1)
"""
from __future__ import annotations

from ...ir import BinOp, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import out_decl, ro_decl
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .elementwise import check_unique_names, u32_elementwise_binary, u32_elementwise_unary

JOIN_OP_ID = "vyre-libs::math::algebra::join"
MEET_OP_ID = "vyre-libs::math::algebra::meet"
MINPLUS_MUL_OP_ID = "vyre-libs::math::algebra::minplus_mul"
BOOL_MATMUL_OP_ID = "vyre-libs::math::algebra::bool_semiring_matmul"
SKETCH_MIX_OP_ID = "vyre-libs::math::algebra::sketch_mix"
# u32 results: byte-exact (no f32 window).
ULP = None

# vyre unrolls the boolean matmul into one invocation up to this many cells and inner terms.
UNROLL_LIMIT = 64


def lattice_join(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = a[i] | b[i]`` (lattice supremum of bitsets)."""
    return u32_elementwise_binary(JOIN_OP_ID, a, b, out, size, Expr.bitor)


def lattice_meet(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = a[i] & b[i]`` (lattice infimum of bitsets)."""
    return u32_elementwise_binary(MEET_OP_ID, a, b, out, size, Expr.bitand)


def semiring_min_plus_mul(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = a[i] +sat b[i]``: (min, +) multiplication with u32::MAX as infinity."""
    return u32_elementwise_binary(MINPLUS_MUL_OP_ID, a, b, out, size,
                                  lambda x, y: Expr.binop(BinOp.SaturatingAdd, x, y))


def _wang_mix(h: Expr) -> Expr:
    h = Expr.add(h, Expr.bitnot(Expr.shl(h, Expr.u32(15))))
    h = Expr.bitxor(h, Expr.shr(h, Expr.u32(12)))
    h = Expr.add(h, Expr.shl(h, Expr.u32(2)))
    h = Expr.bitxor(h, Expr.shr(h, Expr.u32(4)))
    h = Expr.mul(h, Expr.u32(2057))
    return Expr.bitxor(h, Expr.shr(h, Expr.u32(16)))


def sketch_mix(input: str, out: str, size: int) -> Program:
    """``out[i] = wang_mix(input[i])`` (a tree expression: each step repeats the previous one)."""
    return u32_elementwise_unary(SKETCH_MIX_OP_ID, input, out, size, _wang_mix)


def _nonzero_bit(cond: Expr, then: Expr) -> Expr:
    return Expr.select(cond, then, Expr.u32(0))


def bool_semiring_matmul(a: str, b: str, out: str, rows: int, inner: int, cols: int) -> Program:
    """``out[r*cols + c] = 1`` if some ``k`` has ``a[r*inner + k] != 0`` and ``b[k*cols + c] != 0``, else 0."""
    check_unique_names(BOOL_MATMUL_OP_ID, a, b, out)
    a_count, b_count, out_count = rows * inner, inner * cols, rows * cols
    if max(a_count, b_count, out_count) > 0xFFFFFFFF:
        raise OpParamError(f"{BOOL_MATMUL_OP_ID}: element count overflows u32 for [{rows}, {inner}, {cols}]. "
                         "Fix: shard the matrices.")
    u32 = DataType.U32
    buffers = [ro_decl(a, 0, max(a_count, 1), u32), ro_decl(b, 1, max(b_count, 1), u32),
               out_decl(out, 2, max(out_count, 1), u32)]
    if out_count <= UNROLL_LIMIT and inner <= UNROLL_LIMIT:
        # Small shapes: one invocation, every index a literal (no div/mod, no loop).
        stores = []
        for r in range(rows):
            for c in range(cols):
                cell = Expr.u32(0)
                for k in range(inner):
                    a_nz = Expr.ne(Expr.load(a, Expr.u32(r * inner + k)), Expr.u32(0))
                    b_nz = Expr.ne(Expr.load(b, Expr.u32(k * cols + c)), Expr.u32(0))
                    cell = Expr.bitor(cell, _nonzero_bit(a_nz, _nonzero_bit(b_nz, Expr.u32(1))))
                stores.append(Node.store(out, Expr.u32(r * cols + c), cell))
        return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous(
            BOOL_MATMUL_OP_ID, [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), stores)])])

    cell = Expr.gid_x()
    row, col, k, acc = (Expr.var(n) for n in ("bool_mm_row", "bool_mm_col", "bool_mm_k", "bool_mm_acc"))
    body = [Node.if_then(Expr.lt(cell, Expr.u32(out_count)), [
        Node.let_bind("bool_mm_row", Expr.div(cell, Expr.u32(max(cols, 1)))),
        Node.let_bind("bool_mm_col", Expr.rem(cell, Expr.u32(max(cols, 1)))),
        Node.let_bind("bool_mm_acc", Expr.u32(0)),
        Node.loop_for("bool_mm_k", Expr.u32(0), Expr.u32(inner), [
            Node.let_bind("bool_mm_a_idx", Expr.add(Expr.mul(row, Expr.u32(inner)), k)),
            Node.let_bind("bool_mm_b_idx", Expr.add(Expr.mul(k, Expr.u32(cols)), col)),
            Node.assign("bool_mm_acc", Expr.bitor(acc, _nonzero_bit(
                Expr.and_(Expr.ne(Expr.load(a, Expr.var("bool_mm_a_idx")), Expr.u32(0)),
                          Expr.ne(Expr.load(b, Expr.var("bool_mm_b_idx")), Expr.u32(0))),
                Expr.u32(1)))),
        ]),
        Node.store(out, cell, acc),
    ])]
    return Program.wrapped(buffers, (64, 1, 1), [wrap_anonymous(BOOL_MATMUL_OP_ID, body)])


def _build_join(size: int = 4) -> Program:
    return lattice_join("a", "b", "out", size)


def _build_meet(size: int = 4) -> Program:
    return lattice_meet("a", "b", "out", size)


def _build_sketch(size: int = 4) -> Program:
    return sketch_mix("input", "out", size)


def _build_minplus(size: int = 4) -> Program:
    return semiring_min_plus_mul("a", "b", "out", size)


def _build_bool_mm(rows: int = 2, inner: int = 3, cols: int = 2) -> Program:
    return bool_semiring_matmul("a", "b", "out", rows, inner, cols)


_LATTICE_A = [0x0000FFFF, 0xAAAAAAAA, 0x00000000, 0xFFFFFFFF]
_LATTICE_B = [0xFFFF0000, 0x55555555, 0x00000000, 0x00000000]
_U32_MAX = 0xFFFFFFFF

JOIN_ENTRY = register_case(JOIN_OP_ID, _build_join, [pack_u32_slice(_LATTICE_A), pack_u32_slice(_LATTICE_B)],
                           [pack_u32_slice([0xFFFFFFFF, 0xFFFFFFFF, 0x00000000, 0xFFFFFFFF])], category="math",
                           ulp=ULP, bench=dict(size=1 << 24))

MEET_ENTRY = register_case(MEET_OP_ID, _build_meet, [pack_u32_slice(_LATTICE_A), pack_u32_slice(_LATTICE_B)],
                           [pack_u32_slice([0x00000000, 0x00000000, 0x00000000, 0x00000000])], category="math",
                           ulp=ULP, bench=dict(size=1 << 24))

MINPLUS_MUL_ENTRY = register_case(MINPLUS_MUL_OP_ID, _build_minplus,
                                  [pack_u32_slice([10, 20, _U32_MAX, _U32_MAX - 1]), pack_u32_slice([1, 2, 3, 4])],
                                  [pack_u32_slice([11, 22, _U32_MAX, _U32_MAX])], category="math", ulp=ULP,
                                  bench=dict(size=1 << 24))

BOOL_MATMUL_ENTRY = register_case(BOOL_MATMUL_OP_ID, _build_bool_mm,
                                  [pack_u32_slice([1, 0, 1, 0, 1, 0]), pack_u32_slice([0, 1, 1, 0, 0, 0])],
                                  [pack_u32_slice([0, 1, 1, 0])], category="math", ulp=ULP,
                                  bench=dict(rows=512, inner=512, cols=512))

# vyre computes these with a Rust closure of the same mix: mix(1), mix(2), mix(3), mix(4).
SKETCH_MIX_ENTRY = register_case(SKETCH_MIX_OP_ID, _build_sketch, [pack_u32_slice([1, 2, 3, 4])],
                                 [pack_u32_slice([0xBD55FC18, 0xF04F52F1, 0xD2EF712C, 0x855AA83B])], category="math",
                                 ulp=ULP, bench=dict(size=1 << 24))
