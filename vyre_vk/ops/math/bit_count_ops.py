"""`vyre-libs::math::lzcnt_u32` and `vyre-libs::math::tzcnt_u32`: ``out[i]`` = the number of
leading (``Clz``) / trailing (``Ctz``) zero bits of ``input[i]``, 32 for 0 (port of
vyre-libs/src/math/bit_count_ops.rs over bit_count_u32.rs). The u32 unary elementwise skeleton:
``input`` ro (binding 0), ``out`` output (1), count ``size``, workgroup [64,1,1].

Example::

    >>> lzcnt_u32("input", "out", 4).entry[0].body[1].then[0].value.op.name
    'Clz'
"""
from __future__ import annotations

from ...ir import Expr, Program
from ..registry import register_op
from ..wire import pack_u32_slice
from .elementwise import u32_elementwise_unary

LZCNT_OP_ID = "vyre-libs::math::lzcnt_u32"
TZCNT_OP_ID = "vyre-libs::math::tzcnt_u32"
# u32 results: byte-exact (no f32 window).
ULP = None


def lzcnt_u32(input: str, out: str, size: int) -> Program:
    return u32_elementwise_unary(LZCNT_OP_ID, input, out, size, Expr.clz)


def tzcnt_u32(input: str, out: str, size: int) -> Program:
    return u32_elementwise_unary(TZCNT_OP_ID, input, out, size, Expr.ctz)


def _build_lzcnt(size: int = 4) -> Program:
    return lzcnt_u32("input", "out", size)


def _build_tzcnt(size: int = 4) -> Program:
    return tzcnt_u32("input", "out", size)


_INPUT = [0, 1, 0x80000000, 0x00F00000]

LZCNT_ENTRY = register_op(
    LZCNT_OP_ID, _build_lzcnt,
    test_inputs=lambda: [[pack_u32_slice(_INPUT)]],
    expected_output=lambda: [[pack_u32_slice([32, 31, 0, 8])]],
    category="math", ulp=ULP, bench=dict(size=1 << 24),
)

TZCNT_ENTRY = register_op(
    TZCNT_OP_ID, _build_tzcnt,
    test_inputs=lambda: [[pack_u32_slice(_INPUT)]],
    expected_output=lambda: [[pack_u32_slice([32, 0, 31, 20])]],
    category="math", ulp=ULP, bench=dict(size=1 << 24),
)
