"""`vyre-libs::math::dot`: wrapping u32 dot product ``out[0] = sum_i lhs[i]*rhs[i]``
(port of vyre-libs/src/math/linalg/dot.rs, the tiled program).

``tile = 256`` (workgroup [256,1,1]); in workgroup 0 each lane accumulates its strided slice
(``idx = chunk*256 + local``) into ``dot_scratch``, barrier, a u32 tree sum (first workgroup
only), and lane 0 stores ``dot_scratch[0]``. ``n == 0`` is rejected (vyre: FINDING-V7-TEST-009-DOT).

Example::

    >>> p = dot("lhs", "rhs", "out", 256)
    >>> p.workgroup_size, [b.name for b in p.buffers]
    ((256, 1, 1), ['lhs', 'rhs', 'dot_scratch', 'out'])
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, strided_accumulate_child
from ...primitives import FIRST_WORKGROUP, sum_u32_child
from ...registry import register_op
from ...wire import pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::dot"
DOT_TILE = 256
# u32 result: byte-exact (no f32 window).
ULP = None


def dot(lhs: str, rhs: str, out: str, n: int) -> Program:
    if n == 0:
        raise OpParamError(f"Fix: {OP_ID} build failed: n == 0 (empty reductions are rejected); pass n >= 1.")
    tile = DOT_TILE
    chunks = -(-n // tile)
    local = Expr.var("local")
    body = [
        Node.let_bind("local", Expr.local_x()),
        strided_accumulate_child(OP_ID, tile, chunks, n, "local_acc", Expr.u32(0), "dot_scratch",
                                 lambda idx, acc: Expr.add(acc, Expr.mul(Expr.load(lhs, idx), Expr.load(rhs, idx)))),
        Node.barrier(),
        sum_u32_child(OP_ID, tile, "dot_scratch", FIRST_WORKGROUP),
        Node.if_then(Expr.and_(Expr.eq(Expr.workgroup_x(), Expr.u32(0)), Expr.eq(local, Expr.u32(0))), [
            Node.store(out, Expr.u32(0), Expr.load("dot_scratch", Expr.u32(0)))]),
    ]
    return Program.wrapped(
        [ro_decl(lhs, 0, n, DataType.U32), ro_decl(rhs, 1, n, DataType.U32),
         BufferDecl.workgroup("dot_scratch", tile, DataType.U32), out_decl(out, 2, 1, DataType.U32)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 256) -> Program:
    return dot("lhs", "rhs", "out", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[bytes(256 * 4), bytes(256 * 4)]],
    expected_output=lambda: [[pack_u32_slice([0])]],
    category="math", ulp=ULP,
    bench=dict(n=1 << 24),
)
