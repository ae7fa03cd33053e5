"""`vyre-libs::math::wrapping_neg`: ``out[i] = 0 - a[i]`` modulo 2^32 (port of
vyre-libs/src/math/wrapping_neg.rs). The u32 unary elementwise skeleton: ``a`` ro (binding 0),
``out`` output (1), count ``size``, workgroup [64,1,1].

Example::

    >>> wrapping_neg("a", "out", 4).entry[0].generator
    'vyre-libs::math::wrapping_neg'
"""
from __future__ import annotations

from ...ir import Expr, Program
from ..registry import register_case
from ..wire import pack_u32_slice
from .elementwise import u32_elementwise_unary

OP_ID = "vyre-libs::math::wrapping_neg"
# u32 result: byte-exact (no f32 window).
ULP = None


def wrapping_neg(a: str, out: str, size: int) -> Program:
    return u32_elementwise_unary(OP_ID, a, out, size, lambda x: Expr.sub(Expr.u32(0), x))


def _build(size: int = 4) -> Program:
    return wrapping_neg("a", "out", size)


ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0, 1, 0xFFFFFFFF, 42])],
                      [pack_u32_slice([0, 0xFFFFFFFF, 1, 0xFFFFFFD6])], category="math", ulp=ULP,
                      bench=dict(size=1 << 24))
