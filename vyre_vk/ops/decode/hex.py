"""`vyre-libs::decode::hex`: hex text to bytes (port of vyre-libs/src/decode/hex.rs over
vyre-primitives/src/decode/hex.rs).

Workgroup [64,1,1], one invocation per output byte (``pair = gid.x``, ``pair < input_len / 2``):
``output[pair] = (table[input[2*pair] & 0xFF] << 4) | table[input[2*pair+1] & 0xFF]``. The nibble
table is an input buffer of 256 words (``hex_decode_table()``: ``0-9``, ``A-F`` and ``a-f`` map to
their values, every other byte to 0, so an invalid character decodes as a 0 nibble). Each u32
input element carries one character in its low 8 bits. ``input_len`` must be even (vyre builds a
trapping program for an odd one; this builder raises OpParamError).

Example::

    >>> [(b.name, b.count) for b in hex_decode("input", "output", 6).buffers]
    [('__vyre_decode_hex_input', 6), ('__vyre_decode_hex_decoded', 3), ('__vyre_decode_hex_table', 256)]
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program
from ..registry import register_op
from ..wire import pack_u32_slice
from .buffers import DecodeSpec

OP_ID = "vyre-libs::decode::hex"
SPEC = DecodeSpec(OP_ID, "vyre-primitives::decode::hex_decode", "decode_hex")
HEX_DECODE_TABLE_BUFFER = "__vyre_decode_hex_table"
HEX_DECODE_TABLE_WORDS = 256
ULP = None  # u32 results: exact


def hex_decode_table() -> list[int]:
    """The 256-word nibble table the op takes as its table buffer."""
    table = [0] * 256
    for k, ch in enumerate("0123456789"):
        table[ord(ch)] = k
    for k, ch in enumerate("ABCDEF"):
        table[ord(ch)] = table[ord(ch.lower())] = 10 + k
    return table


def hex_decoded_capacity(input_len: int) -> int:
    return input_len // 2


def hex_decode_pair_expr(input: str, table: str, pair: Expr) -> Expr:
    base = Expr.mul(pair, Expr.u32(2))
    hi = Expr.load(table, Expr.bitand(Expr.load(input, base), Expr.u32(0xFF)))
    lo = Expr.load(table, Expr.bitand(Expr.load(input, Expr.add(base, Expr.u32(1))), Expr.u32(0xFF)))
    return Expr.bitor(Expr.shl(hi, Expr.u32(4)), lo)


def hex_decode_body(input: str, output: str, table: str, input_len: int) -> list[Node]:
    pair = Expr.var("pair")
    return [Node.let_bind("pair", Expr.gid_x()),
            Node.if_then(Expr.lt(pair, Expr.u32(hex_decoded_capacity(input_len))),
                         [Node.store(output, pair, hex_decode_pair_expr(input, table, pair))])]


def hex_decode(input: str, output: str, input_len: int) -> Program:
    """Decode ``input_len`` hex characters into ``input_len / 2`` bytes (one per u32)."""
    input, output = SPEC.checked_buffers(input, output, input_len, multiple=2)
    u32 = DataType.U32
    return SPEC.wrap([BufferDecl.read(input, 0, u32).with_count(input_len),
                      BufferDecl.output(output, 1, u32).with_count(hex_decoded_capacity(input_len)),
                      BufferDecl.read(HEX_DECODE_TABLE_BUFFER, 2, u32).with_count(HEX_DECODE_TABLE_WORDS)],
                     hex_decode_body(input, output, HEX_DECODE_TABLE_BUFFER, input_len))


def _build(input_len: int = 6) -> Program:
    return hex_decode("input", "output", input_len)


def _case(text: str) -> list[bytes]:  # vyre's vectors give all three buffers (the output zeroed)
    return [pack_u32_slice([ord(c) for c in text]), pack_u32_slice([0, 0, 0]), pack_u32_slice(hex_decode_table())]


ENTRY = register_op(
    OP_ID, _build, category=None, ulp=ULP,
    test_inputs=lambda: [_case("4D616E"), _case("68494A"), _case("7aZ100")],
    expected_output=lambda: [[pack_u32_slice([0x4D, 0x61, 0x6E])], [pack_u32_slice([0x68, 0x49, 0x4A])],
                             [pack_u32_slice([0x7A, 0x01, 0x00])]],
    bench=dict(input_len=1 << 24),
)
