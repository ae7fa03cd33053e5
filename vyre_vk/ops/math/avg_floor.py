"""`vyre-libs::math::avg_floor`: ``out[i] = floor((a[i] + b[i]) / 2)`` on u32 without overflow,
written ``(a & b) + ((a ^ b) >> 1)`` (port of vyre-libs/src/math/avg_floor.rs). The u32 binary
elementwise skeleton: ``a``, ``b`` ro (bindings 0, 1), ``out`` output (2), count ``size``,
workgroup [64,1,1].

Example::

    >>> [(b.name, b.binding, b.count) for b in avg_floor("a", "b", "out", 4).buffers]
    [('a', 0, 4), ('b', 1, 4), ('out', 2, 4)]
"""
from __future__ import annotations

from ...ir import Expr, Program
from ..registry import register_op
from ..wire import pack_u32_slice
from .elementwise import u32_elementwise_binary

OP_ID = "vyre-libs::math::avg_floor"
# u32 result: byte-exact (no f32 window).
ULP = None


def avg_floor_expr(x: Expr, y: Expr) -> Expr:
    """The shared bits plus half the differing bits: never exceeds u32::MAX."""
    return Expr.add(Expr.bitand(x, y), Expr.shr(Expr.bitxor(x, y), Expr.u32(1)))


def avg_floor(a: str, b: str, out: str, size: int) -> Program:
    return u32_elementwise_binary(OP_ID, a, b, out, size, avg_floor_expr)


def _build(size: int = 4) -> Program:
    return avg_floor("a", "b", "out", size)


_A = [10, 0xFFFFFFFF, 7, 100]
_B = [20, 0xFFFFFFFF, 12, 0]

ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_u32_slice(_A), pack_u32_slice(_B)]],
    # (10,20)->15, (MAX,MAX)->MAX, (7,12)->9, (100,0)->50
    expected_output=lambda: [[pack_u32_slice([15, 0xFFFFFFFF, 9, 50])]],
    category="math", ulp=ULP, bench=dict(size=1 << 24),
)
