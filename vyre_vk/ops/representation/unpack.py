"""`vyre-libs::representation::unpack_4bit_f32`: ``output[i] = f32((input[i/8] >> 4*(i%8)) & 0xF)``,
eight 4-bit values per u32 word, least significant nibble first, each converted by value (not
bit-cast) to f32 (port of vyre-libs/src/representation/unpack.rs).

``input`` ro u32 (binding 0, count ``n // 8``: as in vyre, floor, so for ``n`` not a multiple of 8
the trailing nibbles read past the declared words and are 0, and ``n < 8`` declares a
runtime-sized input), ``output`` output f32 (1, count n); ``i = gid.x; if i < n``; workgroup
[64,1,1].

Example::

    >>> [(b.name, b.count) for b in unpack_4bit_f32("input", "output", 16).buffers]
    [('input', 2), ('output', 16)]
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program
from ..builder import elementwise_program, out_decl, ro_decl
from ..registry import register_op
from ..wire import pack_f32_slice, pack_u32_slice

OP_ID = "vyre-libs::representation::unpack_4bit_f32"
# 4 ULP: vyre's program budget for an f32 result (a nibble converts exactly: 0 in practice).
ULP = 4


def unpack_4bit_f32(input: str, output: str, n: int) -> Program:
    i = Expr.var("i")
    word = Expr.load(input, Expr.div(i, Expr.u32(8)))
    shift = Expr.mul(Expr.rem(i, Expr.u32(8)), Expr.u32(4))
    nibble = Expr.bitand(Expr.shr(word, shift), Expr.u32(0xF))
    buffers = [ro_decl(input, 0, n // 8, DataType.U32), out_decl(output, 1, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(output, i, Expr.cast(DataType.F32, nibble))])


def _build(n: int = 16) -> Program:
    return unpack_4bit_f32("input", "output", n)


ENTRY = register_op(
    OP_ID, _build,
    # nibbles 0..15, LSB first: 0x76543210, 0xFEDCBA98
    test_inputs=lambda: [[pack_u32_slice([0x76543210, 0xFEDCBA98])]],
    expected_output=lambda: [[pack_f32_slice([float(v) for v in range(16)])]],
    category=None, ulp=ULP, bench=dict(n=1 << 24),
)
