"""`vyre-libs::quant::byte_shuffle`: transpose a ``[n, elem_bytes]`` matrix of u32 words (one byte
per word) to ``[elem_bytes, n]`` (port of vyre-libs/src/nn/quant/byte_shuffle.rs):
``e = i / elem_bytes; b = i - e*elem_bytes; output[b*n + e] = input[i]`` for ``i < n*elem_bytes``,
an indexed map, workgroup [64,1,1]; output byte range ``0..4*n*elem_bytes``.

Example::

    >>> byte_shuffle("input", "output", 3, 2).entry[0].body[0].generator
    'vyre-libs::substrate::indexed_map'
"""
from __future__ import annotations

from ....ir import DataType, Expr, Program
from ...builder import build_indexed_map, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::quant::byte_shuffle"
# u32 result: byte-exact (no f32 window).
ULP = None


def byte_shuffle(input: str, output: str, n: int, elem_bytes: int) -> Program:
    if n == 0 or elem_bytes == 0:
        raise OpParamError("Fix: byte_shuffle requires non-zero dimensions")
    total = n * elem_bytes

    def f(i):
        elem = Expr.div(i, Expr.u32(elem_bytes))
        byte = Expr.sub(i, Expr.mul(elem, Expr.u32(elem_bytes)))
        return Expr.add(Expr.mul(byte, Expr.u32(n)), elem), Expr.load(input, i)

    return build_indexed_map(
        OP_ID,
        [ro_decl(input, 0, total, DataType.U32),
         out_decl(output, 1, total, DataType.U32).with_output_byte_range(0, 4 * total)],
        output, total, (64, 1, 1), f)


def _build(n: int = 3, elem_bytes: int = 2) -> Program:
    return byte_shuffle("input", "output", n, elem_bytes)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_u32_slice([10, 11, 20, 21, 30, 31])]],
    expected_output=lambda: [[pack_u32_slice([10, 20, 30, 11, 21, 31])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 22, elem_bytes=4),
)
