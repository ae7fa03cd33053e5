"""`vyre-libs::decode::encodex`: a 256-bin byte histogram and an encoding guess (port of
vyre-libs/src/decode/encodex.rs over vyre-primitives/src/text/byte_histogram.rs,
text/encoding_classify.rs, reduce/range_counts.rs and text/utf8_shape_counts.rs).

Workgroup [256,1,1]; each u32 input element carries one byte (low 8 bits). Two child Regions:

1. ``vyre-primitives::text::byte_histogram_256``: ``lane = gid.x``; ``histogram[lane] = 0``;
   barrier; for ``round < ceil(count / 256)``: ``idx = round*256 + lane``, if ``idx < count``
   ``atomic_add(histogram[input[idx] & 0xFF], 1)``; barrier. The closing barrier is what lets the
   sibling read the histogram (issue 16's nested-Region hazard rule, vyre_vk/ir/validate_hazard.py).
2. ``vyre-primitives::text::encoding_classify`` (invocation 0): ``null = h[0]``, ``ascii = sum
   h[0..128]`` (child Region ``range_counts_u32``), ``high = count - ascii``; ``enc = 255``
   (binary); ``high == 0`` -> 0 (ASCII); ``null > count/8`` -> 2 (UTF-16LE); continuation bytes
   ``c = sum h[0x80..0xC0]`` and the continuations lead bytes announce ``e = sum h[0xC2..0xE0] +
   2*h[0xE0..0xF0] + 3*h[0xF0..0xF5]`` (saturating; child Region ``utf8_shape_counts``); ``high > 0
   and |c - e| < (count + 19) / 20`` -> 1 (UTF-8); then ``high > 0`` and enc not UTF-8 nor
   UTF-16LE -> 4 (ISO-8859-1). ``output[0] = enc``.

The histogram is a ReadWrite buffer (callers may read it back). vyre's grid rule sizes the
dispatch by the largest buffer (the program uses atomics), so ``count > 256`` runs several
workgroups that each zero and recount the histogram (vyre's program as written: double counts
and races); the op is exact for ``count <= 256``, its registered and benchmarked sizes.

Example::

    >>> [(b.name, b.count) for b in encodex_gpu("input", "output", 5).buffers]  # doctest: +NORMALIZE_WHITESPACE
    [('__vyre_decode_encodex_input', 5), ('__vyre_decode_encodex_histogram', 256),
     ('__vyre_decode_encodex_encoding_id', 1)]
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ..registry import register_op
from ..wire import pack_u32_slice
from .buffers import check_len, scoped_decode_input_buffer, scoped_decode_output_buffer

OP_ID = "vyre-libs::decode::encodex"
BYTE_HISTOGRAM_256_OP_ID = "vyre-primitives::text::byte_histogram_256"
ENCODING_CLASSIFY_OP_ID = "vyre-primitives::text::encoding_classify"
RANGE_COUNTS_U32_OP_ID = "vyre-primitives::reduce::range_counts_u32"
UTF8_SHAPE_COUNTS_OP_ID = "vyre-primitives::text::utf8_shape_counts"
FAMILY_PREFIX = "decode_encodex"
HISTOGRAM_BUFFER = "__vyre_decode_encodex_histogram"
ENC_ASCII, ENC_UTF8, ENC_UTF16LE, ENC_UTF16BE, ENC_ISO8859_1, ENC_BINARY = 0, 1, 2, 3, 4, 255
ULP = None  # u32 results: exact

v, u = Expr.var, Expr.u32


def byte_histogram_256_body(input: str, histogram: str, count: int) -> list[Node]:
    rounds = Expr.div(Expr.add(u(count), u(255)), u(256))
    byte = Expr.bitand(Expr.cast(DataType.U32, Expr.load(input, v("idx"))), u(0xFF))
    return [
        Node.let_bind("lane", Expr.gid_x()),
        Node.store(histogram, v("lane"), u(0)),
        Node.barrier(),
        Node.loop_for("round", u(0), rounds, [
            Node.let_bind("idx", Expr.add(Expr.mul(v("round"), u(256)), v("lane"))),
            Node.if_then(Expr.lt(v("idx"), u(count)), [
                Node.let_bind("byte", byte),
                Node.let_bind("_prev_hist", Expr.atomic_add(histogram, v("byte"), u(1))),
            ]),
        ]),
        Node.barrier(),
    ]


def range_counts_u32_body(histogram: str, out_var: str, start: int, end: int) -> list[Node]:
    return [Node.assign(out_var, u(0)),
            Node.loop_for("i", u(start), u(end), [
                Node.assign(out_var, Expr.add(v(out_var), Expr.load(histogram, v("i"))))])]


def _sat_mul(value: Expr, factor: int) -> Expr:
    return Expr.select(Expr.gt(value, u(0xFFFFFFFF // factor)), u(0xFFFFFFFF), Expr.mul(value, u(factor)))


def utf8_shape_counts_body(histogram: str, cont: str, expected: str) -> list[Node]:
    i, n = v("i"), v("byte_count")
    add_to = lambda var, x: Node.assign(var, Expr.saturating_add(v(var), x))  # noqa: E731
    return [
        Node.assign(cont, u(0)),
        Node.assign(expected, u(0)),
        Node.loop_for("i", u(0x80), u(0xF5), [
            Node.let_bind("byte_count", Expr.load(histogram, i)),
            Node.if_then(Expr.lt(i, u(0xC0)), [add_to(cont, n)]),
            Node.if_then(Expr.and_(Expr.gt(i, u(0xC1)), Expr.lt(i, u(0xE0))), [add_to(expected, n)]),
            Node.if_then(Expr.and_(Expr.gt(i, u(0xDF)), Expr.lt(i, u(0xF0))), [add_to(expected, _sat_mul(n, 2))]),
            Node.if_then(Expr.gt(i, u(0xEF)), [add_to(expected, _sat_mul(n, 3))]),
        ]),
    ]


def encoding_classify_body(histogram: str, output: str, count: int) -> list[Node]:
    high = v("high_count")
    enc = v("enc_id")
    tolerance = Expr.div(u(min(count + 19, 0xFFFFFFFF)), u(20))
    return [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
        Node.let_bind("null_count", Expr.load(histogram, u(0))),
        Node.let_bind("ascii_count", u(0)),
        wrap_child(RANGE_COUNTS_U32_OP_ID, ENCODING_CLASSIFY_OP_ID,
                   range_counts_u32_body(histogram, "ascii_count", 0, 128)),
        Node.let_bind("high_count", Expr.sub(u(count), v("ascii_count"))),
        Node.let_bind("enc_id", u(ENC_BINARY)),
        Node.if_then(Expr.eq(high, u(0)), [Node.assign("enc_id", u(ENC_ASCII))]),
        Node.if_then(Expr.gt(v("null_count"), Expr.div(u(count), u(8))), [Node.assign("enc_id", u(ENC_UTF16LE))]),
        Node.let_bind("continuation", u(0)),
        Node.let_bind("expected_continuation", u(0)),
        wrap_child(UTF8_SHAPE_COUNTS_OP_ID, ENCODING_CLASSIFY_OP_ID,
                   utf8_shape_counts_body(histogram, "continuation", "expected_continuation")),
        Node.if_then(Expr.and_(Expr.gt(high, u(0)), Expr.lt(
            Expr.abs_diff(v("continuation"), v("expected_continuation")), tolerance)),
            [Node.assign("enc_id", u(ENC_UTF8))]),
        Node.if_then(Expr.and_(Expr.gt(high, u(0)), Expr.ne(enc, u(ENC_UTF8))), [
            Node.if_then(Expr.ne(enc, u(ENC_UTF16LE)), [Node.assign("enc_id", u(ENC_ISO8859_1))])]),
        Node.store(output, u(0), enc),
    ])]


def encodex_gpu(input: str, output: str, count: int) -> Program:
    """Histogram of ``count`` bytes and their encoding id (see the module doc)."""
    check_len(OP_ID, "count", count)
    input = scoped_decode_input_buffer(FAMILY_PREFIX, input)
    output = scoped_decode_output_buffer(FAMILY_PREFIX, "encoding_id", output, ("encoding_id", "output"))
    u32 = DataType.U32
    body = [wrap_child(BYTE_HISTOGRAM_256_OP_ID, OP_ID, byte_histogram_256_body(input, HISTOGRAM_BUFFER, count)),
            wrap_child(ENCODING_CLASSIFY_OP_ID, OP_ID, encoding_classify_body(HISTOGRAM_BUFFER, output, count))]
    return Program.wrapped(
        [BufferDecl.read(input, 0, u32).with_count(max(count, 1)),
         BufferDecl.read_write(HISTOGRAM_BUFFER, 1, u32).with_count(256),
         BufferDecl.output(output, 2, u32).with_count(1)],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, body)])


def _build(count: int = 5) -> Program:
    return encodex_gpu("input", "output", count)


_CASES = (b"Hello", bytes([0xC3, 0xA9, 0xC3, 0xA9, 0x21]), bytes([0x00, 0x00, 0x00, 0x41, 0x42]),
          bytes([0xE9, 0xE8, 0xEA, 0xEB, 0xEC]))
_ENCODINGS = (ENC_ASCII, ENC_UTF8, ENC_UTF16LE, ENC_ISO8859_1)  # vyre's classify_from_histogram of each case


def _histogram(data: bytes) -> list[int]:
    h = [0] * 256
    for b in data:
        h[b] += 1
    return h


ENTRY = register_op(
    OP_ID, _build, category=None, ulp=ULP,
    test_inputs=lambda: [[pack_u32_slice(list(c)), bytes(256 * 4)] for c in _CASES],
    expected_output=lambda: [[pack_u32_slice(_histogram(c)), pack_u32_slice([e])] for c, e in zip(_CASES, _ENCODINGS)],
    bench=dict(count=256),
)
