"""`vyre-libs::decode::base64`: standard base64 text to bytes (port of
vyre-libs/src/decode/base64.rs over vyre-primitives/src/decode/base64.rs).

Workgroup [64,1,1], one invocation per output byte (``j = gid.x``, ``j < input_len / 4 * 3``).
Each u32 input element carries one character. Invocation j decodes byte ``j % 3`` of quad
``j / 3``: the four characters go through the 256-word table buffer (``standard_decode_table()``:
``A-Z a-z 0-9 + /`` to 0..63, ``=`` to 0, every other byte to 0xFF), a 0xFF entry counting as 0
(an invalid character decodes as ``A``; a character >= 256 reads the table out of bounds, also 0);
byte 0 is always stored, byte 1 unless the quad's third character is ``=``, byte 2 unless its
fourth is (a padded slot keeps the output's zero). Invocation 0 stores ``decoded_len =
input_len / 4 * 3`` minus one for each of the input's last two characters that is ``=``
(``input_len < 2``: 0). ``input_len`` must be a multiple of 4 (vyre builds a trapping program
otherwise; this builder raises OpParamError).

Example::

    >>> [(b.name, b.count) for b in base64_decode("input", "output", 8).buffers]  # doctest: +NORMALIZE_WHITESPACE
    [('__vyre_decode_base64_input', 8), ('__vyre_decode_base64_table', 256), ('__vyre_decode_base64_decoded', 6),
     ('__vyre_decode_base64_decoded_len', 1)]
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program
from ..registry import register_op
from ..wire import pack_u32_slice
from .buffers import DecodeSpec

OP_ID = "vyre-libs::decode::base64"
SPEC = DecodeSpec(OP_ID, "vyre-primitives::decode::base64_decode", "decode_base64")
BASE64_DECODE_TABLE_BUFFER = "__vyre_decode_base64_table"
DECODED_LEN_BUFFER = "__vyre_decode_base64_decoded_len"
BASE64_DECODE_TABLE_WORDS = 256
PAD = ord("=")
INVALID = 0xFF
ULP = None  # u32 results: exact
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def standard_decode_table() -> list[int]:
    """The 256-word table the op takes as its table buffer."""
    table = [INVALID] * 256
    for k, ch in enumerate(ALPHABET):
        table[ord(ch)] = k
    table[PAD] = 0
    return table


def decoded_capacity(input_len: int) -> int:
    return input_len // 4 * 3


def _clamp_lookup(name: str, table: str) -> list[Node]:
    raw = f"{name}_raw"
    return [Node.let_bind(raw, Expr.load(table, Expr.var(name))),
            Node.let_bind(f"{name}_v", Expr.select(Expr.eq(Expr.var(raw), Expr.u32(INVALID)), Expr.u32(0),
                                                   Expr.var(raw)))]


def base64_decode_body(input: str, table: str, output: str, decoded_len: str, input_len: int) -> list[Node]:
    v, u = Expr.var, Expr.u32
    cap = decoded_capacity(input_len)
    body: list[Node] = [Node.let_bind("j", Expr.gid_x())]
    if input_len >= 2:
        pad_at = lambda k: Expr.select(Expr.eq(Expr.load(input, u(k)), u(PAD)), u(1), u(0))  # noqa: E731
        body.append(Node.if_then(Expr.eq(v("j"), u(0)), [
            Node.let_bind("tail_pad_1", pad_at(input_len - 1)),
            Node.let_bind("tail_pad_2", pad_at(input_len - 2)),
            Node.store(decoded_len, u(0), Expr.sub(Expr.sub(u(cap), v("tail_pad_1")), v("tail_pad_2"))),
        ]))
    else:
        body.append(Node.if_then(Expr.eq(v("j"), u(0)), [Node.store(decoded_len, u(0), u(0))]))
    per_byte = [
        Node.let_bind("quad", Expr.div(v("j"), u(3))),
        Node.let_bind("in_base", Expr.mul(v("quad"), u(4))),
        Node.let_bind("pos", Expr.sub(v("j"), Expr.mul(v("quad"), u(3)))),
        *[Node.let_bind(f"c{k}", Expr.load(input, Expr.add(v("in_base"), u(k)) if k else v("in_base")))
          for k in range(4)],
        Node.let_bind("pad2", Expr.eq(v("c2"), u(PAD))),
        Node.let_bind("pad1", Expr.eq(v("c3"), u(PAD))),
        *[n for k in range(4) for n in _clamp_lookup(f"c{k}", table)],
        Node.let_bind("b0", Expr.bitor(Expr.shl(v("c0_v"), u(2)), Expr.shr(v("c1_v"), u(4)))),
        Node.let_bind("b1", Expr.bitor(Expr.shl(Expr.bitand(v("c1_v"), u(0x0F)), u(4)), Expr.shr(v("c2_v"), u(2)))),
        Node.let_bind("b2", Expr.bitor(Expr.shl(Expr.bitand(v("c2_v"), u(0x03)), u(6)), v("c3_v"))),
        Node.if_then(Expr.eq(v("pos"), u(0)), [Node.store(output, v("j"), v("b0"))]),
        Node.if_then(Expr.eq(v("pos"), u(1)), [
            Node.if_then(Expr.eq(v("pad2"), Expr.bool(False)), [Node.store(output, v("j"), v("b1"))])]),
        Node.if_then(Expr.eq(v("pos"), u(2)), [
            Node.if_then(Expr.eq(v("pad1"), Expr.bool(False)), [Node.store(output, v("j"), v("b2"))])]),
    ]
    body.append(Node.if_then(Expr.lt(v("j"), u(cap)), per_byte))
    return body


def base64_decode(input: str, output: str, input_len: int) -> Program:
    """Decode ``input_len`` base64 characters into ``input_len / 4 * 3`` bytes and a decoded length."""
    input, output = SPEC.checked_buffers(input, output, input_len, multiple=4)
    u32 = DataType.U32
    return SPEC.wrap([BufferDecl.read(input, 0, u32).with_count(input_len),
                      BufferDecl.read(BASE64_DECODE_TABLE_BUFFER, 1, u32).with_count(BASE64_DECODE_TABLE_WORDS),
                      BufferDecl.output(output, 2, u32).with_count(decoded_capacity(input_len)),
                      BufferDecl.read_write(DECODED_LEN_BUFFER, 3, u32).with_count(1)],
                     base64_decode_body(input, BASE64_DECODE_TABLE_BUFFER, output, DECODED_LEN_BUFFER, input_len))


def _build(input_len: int = 8) -> Program:
    return base64_decode("input", "output", input_len)


def _case(text: str) -> list[bytes]:  # the logical inputs: text, table, decoded_len
    return [pack_u32_slice([ord(c) for c in text]), pack_u32_slice(standard_decode_table()), bytes(4)]


ENTRY = register_op(
    OP_ID, _build, category=None, ulp=ULP,
    test_inputs=lambda: [_case("TWFuTWFu"), _case("TWE=TWE="), _case("SGVsbG8*")],
    expected_output=lambda: [
        [pack_u32_slice([77, 97, 110, 77, 97, 110]), pack_u32_slice([6])],
        [pack_u32_slice([77, 97, 0, 77, 97, 0]), pack_u32_slice([5])],
        [pack_u32_slice([72, 101, 108, 108, 111, 0]), pack_u32_slice([6])],
    ],
    bench=dict(input_len=1 << 24),
)
