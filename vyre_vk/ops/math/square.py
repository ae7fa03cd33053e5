"""`vyre-libs::math::square`: ``output[i] = input[i] * input[i]`` on f32 (port of
vyre-libs/src/math/square.rs over elementwise.rs's ``f32_elementwise_mul`` with the same input
on both sides). ``input`` ro (binding 0), ``output`` output (1), count ``n``; ``i = gid.x;
if i < n``; workgroup [64,1,1].

Example::

    >>> [(b.name, b.binding, b.count) for b in square("input", "output", 4).buffers]
    [('input', 0, 4), ('output', 1, 4)]
"""
from __future__ import annotations

from ...ir import Program
from ..registry import register_case
from ..wire import pack_f32_slice
from .elementwise import f32_elementwise_mul

OP_ID = "vyre-libs::math::square"
# 4 ULP: elementary f32 ops only (vyre's program budget); one rounding, so 0 in practice.
ULP = 4


def square(input: str, output: str, n: int) -> Program:
    return f32_elementwise_mul(OP_ID, input, None, output, n)


def _build(n: int = 4) -> Program:
    return square("input", "output", n)


ENTRY = register_case(OP_ID, _build, [pack_f32_slice([2.0, 3.0, 4.0, 5.0])], [pack_f32_slice([4.0, 9.0, 16.0, 25.0])],
                      category="math", ulp=ULP, bench=dict(n=1 << 24))
