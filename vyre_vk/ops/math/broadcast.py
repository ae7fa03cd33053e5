"""`vyre-libs::math::broadcast`: ``dst[i] = src[0]`` for ``i < n`` on u32
(port of vyre-libs/src/math/broadcast/broadcast.rs). Workgroup [64,1,1]; ``dst`` is an output
with ``count = n`` and output byte range ``0..4n``; ``n == 0`` is rejected.

Example::

    >>> [(b.name, b.count) for b in broadcast("src", "dst", 4).buffers]
    [('src', 1), ('dst', 4)]
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program
from ..builder import elementwise_program, out_decl, ro_decl
from ..registry import register_op
from ..wire import pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::broadcast"
# u32 result: byte-exact (no f32 window).
ULP = None


def broadcast(src: str, dst: str, n: int) -> Program:
    if n == 0:
        raise OpParamError("Fix: broadcast requires n > 0.")
    buffers = [ro_decl(src, 0, 1, DataType.U32), out_decl(dst, 1, n, DataType.U32).with_output_byte_range(0, 4 * n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(dst, Expr.var("idx"), Expr.load(src, Expr.u32(0)))],
                               index="idx")


def _build(n: int = 4) -> Program:
    return broadcast("src", "dst", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_u32_slice([42])]],
    expected_output=lambda: [[pack_u32_slice([42, 42, 42, 42])]],
    category="math", ulp=ULP,
    bench=dict(n=1 << 24),
)
