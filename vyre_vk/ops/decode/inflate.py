"""`vyre-libs::decode::inflate_stored_block`: copy the payload of one raw DEFLATE stored block
(RFC 1951 BTYPE=00) (port of vyre-libs/src/decode/inflate.rs over
vyre-primitives/src/decode/inflate.rs).

Workgroup [64,1,1], one invocation per input element (``lane = gid.x``). Each u32 input element
carries one byte. Every lane reads the 5-byte header: ``btype = (input[0] >> 1) & 3``,
``len = input[1] | input[2] << 8``, ``nlen = input[3] | input[4] << 8``. Lane 0 zeroes
``inflated_len`` and, for a stored block with ``nlen == len ^ 0xFFFF``, stores ``len`` there;
lanes ``< len`` copy ``output[lane] = input[5 + lane]`` (a ``len`` past the end reads the
reference's out-of-bounds zeros). A stored block whose NLEN does not match, or BTYPE 1, 2 or 3
(Huffman-coded or reserved), reaches a Trap (vyre's tags, tested in tests/ops/decode): the
caller routes those elsewhere. BFINAL (bit 0) is not inspected.

Example::

    >>> [(b.name, b.count) for b in inflate_stored_block("input", "output", 10).buffers]
    [('__vyre_decode_inflate_input', 10), ('__vyre_decode_inflate_decoded', 10), ('__vyre_decode_inflate_inflated_len', 1)]
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program
from ..registry import register_case
from ..wire import pack_u32_slice
from .buffers import DecodeSpec

OP_ID = "vyre-libs::decode::inflate_stored_block"
SPEC = DecodeSpec(OP_ID, "vyre-primitives::decode::inflate_stored", "decode_inflate")
INFLATED_LEN_BUFFER = "__vyre_decode_inflate_inflated_len"
HEADER_WORDS = 5
ULP = None  # u32 results: exact
FIXED_HUFFMAN_REJECT = ("Fix: vyre-primitives::decode::inflate_stored accepts raw DEFLATE stored blocks only; "
                        "route BTYPE=1 input to a compressed-block decoder.")
DYNAMIC_HUFFMAN_REJECT = ("Fix: vyre-primitives::decode::inflate_stored accepts raw DEFLATE stored blocks only; "
                          "route BTYPE=2 input to a dynamic-Huffman decoder.")
RESERVED_BTYPE_FIX = ("Fix: reject reserved DEFLATE BTYPE=3 inputs before dispatching "
                      "vyre-primitives::decode::inflate_stored.")
STORED_HEADER_FIX = ("Fix: validate LEN/NLEN before copying a stored DEFLATE block in "
                     "vyre-primitives::decode::inflate_stored.")


def inflate_stored_body(input: str, output: str, inflated_len: str) -> list[Node]:
    v, u = Expr.var, Expr.u32
    lane0 = Expr.eq(v("lane"), u(0))
    valid = Expr.eq(v("nlen"), Expr.bitxor(v("len"), u(0xFFFF)))
    return [
        Node.let_bind("lane", Expr.gid_x()),
        Node.if_then(lane0, [Node.store(inflated_len, u(0), u(0))]),
        Node.let_bind("header", Expr.load(input, u(0))),
        Node.let_bind("btype", Expr.bitand(Expr.shr(v("header"), u(1)), u(3))),
        Node.let_bind("len", Expr.bitor(Expr.load(input, u(1)), Expr.shl(Expr.load(input, u(2)), u(8)))),
        Node.let_bind("nlen", Expr.bitor(Expr.load(input, u(3)), Expr.shl(Expr.load(input, u(4)), u(8)))),
        Node.if_then(Expr.eq(v("btype"), u(0)), [
            Node.if_then(valid, [
                Node.if_then(lane0, [Node.store(inflated_len, u(0), v("len"))]),
                Node.if_then(Expr.lt(v("lane"), v("len")), [
                    Node.store(output, v("lane"), Expr.load(input, Expr.add(u(HEADER_WORDS), v("lane"))))]),
            ]),
            Node.if_then(Expr.ne(v("nlen"), Expr.bitxor(v("len"), u(0xFFFF))), [Node.trap(u(0), STORED_HEADER_FIX)]),
        ]),
        Node.if_then(Expr.eq(v("btype"), u(1)), [Node.trap(u(1), FIXED_HUFFMAN_REJECT)]),
        Node.if_then(Expr.eq(v("btype"), u(2)), [Node.trap(u(2), DYNAMIC_HUFFMAN_REJECT)]),
        Node.if_then(Expr.eq(v("btype"), u(3)), [Node.trap(u(3), RESERVED_BTYPE_FIX)]),
    ]


def inflate_stored_block(input: str, output: str, input_len: int) -> Program:
    """Copy one stored block's payload from ``input_len`` header+payload bytes (see the module doc)."""
    input, output = SPEC.checked_buffers(input, output, input_len)
    u32 = DataType.U32
    return SPEC.wrap([BufferDecl.read(input, 0, u32).with_count(input_len),
                      BufferDecl.output(output, 1, u32).with_count(input_len),
                      BufferDecl.read_write(INFLATED_LEN_BUFFER, 2, u32).with_count(1)],
                     inflate_stored_body(input, output, INFLATED_LEN_BUFFER))


def inflate(input: str, output: str, input_len: int) -> Program:
    """vyre's alias of :func:`inflate_stored_block`."""
    return inflate_stored_block(input, output, input_len)


def _build(input_len: int = 10) -> Program:
    return inflate_stored_block("input", "output", input_len)


ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0x01, 0x05, 0x00, 0xFA, 0xFF, *b"hello"]), bytes(4)],
                      [pack_u32_slice([*b"hello", 0, 0, 0, 0, 0]), pack_u32_slice([5])], category=None, ulp=ULP,
                      bench=dict(input_len=65535 + HEADER_WORDS))
