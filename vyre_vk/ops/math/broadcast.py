"""`vyre-libs::math::broadcast`: ``dst[i] = src[0]`` for ``i < n`` on u32
(port of vyre-libs/src/math/broadcast/broadcast.rs). Workgroup [64,1,1]; ``dst`` is an output
with ``count = n`` and output byte range ``0..4n``; ``n == 0`` is rejected.

Example::

    >>> [(b.name, b.count) for b in broadcast("src", "dst", 4).buffers]
    [('src', 1), ('dst', 4)]
"""
from __future__ import annotations

from ...ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..registry import OpEntry, register
from ..wire import pack_u32_slice

OP_ID = "vyre-libs::math::broadcast"
# u32 result: byte-exact (no f32 window).
ULP = None


def broadcast(src: str, dst: str, n: int) -> Program:
    if n == 0:
        raise ValueError("Fix: broadcast requires n > 0.")
    idx = Expr.var("idx")
    body = [
        Node.let_bind("idx", Expr.gid_x()),
        Node.if_then(Expr.lt(idx, Expr.u32(n)), [Node.store(dst, idx, Expr.load(src, Expr.u32(0)))]),
    ]
    return Program.wrapped(
        [BufferDecl.storage(src, 0, BufferAccess.ReadOnly, DataType.U32).with_count(1),
         BufferDecl.output(dst, 1, DataType.U32).with_count(n).with_output_byte_range(0, 4 * n)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 4) -> Program:
    return broadcast("src", "dst", n)


ENTRY = register(OpEntry(
    id=OP_ID, build=_build, builder=_build, params={"n": 4},
    test_inputs=lambda: [[pack_u32_slice([42])]],
    expected_output=lambda: [[pack_u32_slice([42, 42, 42, 42])]],
    category="math", ulp=ULP,
))
