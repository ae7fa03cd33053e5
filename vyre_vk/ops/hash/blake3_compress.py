"""`vyre-libs::hash::blake3_compress`: the BLAKE3 compression function, truncated to the new
chaining value (port of vyre-libs/src/hash/blake3_compress.rs over
vyre-primitives/src/hash/blake3.rs).

One invocation (workgroup [1,1,1]; vyre does not guard it, every invocation computes the same
words) loads the 16-word state ``s0..s7 = chaining_in``, ``s8..s11 = IV[0..4]``,
``s12..s15 = params`` (counter low, counter high, block length, flags) and ``m0..m15 =
message``; runs the 7 rounds, each a child Region ``vyre-primitives::hash::blake3_round``
(parent: this op) that binds the round's permuted message words ``r{k}_m{i} = m{schedule[k][i]}``
and holds 8 ``vyre-primitives::hash::blake3_g`` Regions (the 4 column then 4 diagonal G mixes,
rotations 16, 12, 8, 7); then stores ``chaining_out[i] = s_i ^ s_{i+8}`` for i < 8.

Example::

    >>> p = blake3_compress("cv_in", "msg", "params", "cv_out")
    >>> [(b.name, b.count) for b in p.buffers]  # doctest: +NORMALIZE_WHITESPACE
    [('__vyre_hash_blake3_compress_chaining_in', 8), ('__vyre_hash_blake3_compress_message', 16),
     ('__vyre_hash_blake3_compress_params', 4), ('__vyre_hash_blake3_compress_chaining_out', 8)]
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ..buffer_names import scoped_generic_name
from ..registry import register_op
from ..wire import pack_u32_slice

OP_ID = "vyre-libs::hash::blake3_compress"
ROUND_OP_ID = "vyre-primitives::hash::blake3_round"
G_OP_ID = "vyre-primitives::hash::blake3_g"
FAMILY_PREFIX = "hash_blake3_compress"
ULP = None  # u32 results: exact

IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
#: message word order of each of the 7 rounds (the BLAKE3 permutation applied k times)
MSG_SCHEDULE = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8),
    (3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1),
    (10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6),
    (12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4),
    (9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7),
    (11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13),
)
#: (a, b, c, d, message x, message y) of the 8 G mixes of a round
QUARTETS = ((0, 4, 8, 12, 0, 1), (1, 5, 9, 13, 2, 3), (2, 6, 10, 14, 4, 5), (3, 7, 11, 15, 6, 7),
            (0, 5, 10, 15, 8, 9), (1, 6, 11, 12, 10, 11), (2, 7, 8, 13, 12, 13), (3, 4, 9, 14, 14, 15))


def _rotr(x: Expr, n: int) -> Expr:
    return Expr.rotate_right(x, Expr.u32(n))


def blake3_g(a: int, b: int, c: int, d: int, mx: str, my: str) -> list[Node]:
    """The G mix of state words s_a, s_b, s_c, s_d with message words `mx`, `my`."""
    sa, sb, sc, sd = (f"s{k}" for k in (a, b, c, d))
    v = Expr.var
    return [
        Node.assign(sa, Expr.add(Expr.add(v(sa), v(sb)), v(mx))),
        Node.assign(sd, _rotr(Expr.bitxor(v(sd), v(sa)), 16)),
        Node.assign(sc, Expr.add(v(sc), v(sd))),
        Node.assign(sb, _rotr(Expr.bitxor(v(sb), v(sc)), 12)),
        Node.assign(sa, Expr.add(Expr.add(v(sa), v(sb)), v(my))),
        Node.assign(sd, _rotr(Expr.bitxor(v(sd), v(sa)), 8)),
        Node.assign(sc, Expr.add(v(sc), v(sd))),
        Node.assign(sb, _rotr(Expr.bitxor(v(sb), v(sc)), 7)),
    ]


def blake3_round(round_idx: int, perm: tuple) -> list[Node]:
    """One round: bind the permuted message words, then the 8 G Regions."""
    body = [Node.let_bind(f"r{round_idx}_m{i}", Expr.var(f"m{src}")) for i, src in enumerate(perm)]
    for a, b, c, d, mx, my in QUARTETS:
        body.append(wrap_child(G_OP_ID, ROUND_OP_ID,
                               blake3_g(a, b, c, d, f"r{round_idx}_m{mx}", f"r{round_idx}_m{my}")))
    return body


def blake3_compress(chaining_in: str, message: str, params: str, chaining_out: str) -> Program:
    """New chaining value of one BLAKE3 block (see the module doc)."""
    chaining_in = scoped_generic_name(FAMILY_PREFIX, "chaining_in", chaining_in, ("cv_in", "chaining_in", "input"))
    message = scoped_generic_name(FAMILY_PREFIX, "message", message, ("msg", "message"))
    params = scoped_generic_name(FAMILY_PREFIX, "params", params, ("params",))
    chaining_out = scoped_generic_name(FAMILY_PREFIX, "chaining_out", chaining_out,
                                       ("cv_out", "chaining_out", "output", "out"))
    u = Expr.u32
    body = [Node.let_bind(f"s{i}", Expr.load(chaining_in, u(i))) for i in range(8)]
    body += [Node.let_bind(f"s{i + 8}", u(IV[i])) for i in range(4)]
    body += [Node.let_bind(f"s{i + 12}", Expr.load(params, u(i))) for i in range(4)]
    body += [Node.let_bind(f"m{i}", Expr.load(message, u(i))) for i in range(16)]
    body += [wrap_child(ROUND_OP_ID, OP_ID, blake3_round(k, perm)) for k, perm in enumerate(MSG_SCHEDULE)]
    body += [Node.store(chaining_out, u(i), Expr.bitxor(Expr.var(f"s{i}"), Expr.var(f"s{i + 8}"))) for i in range(8)]
    u32 = DataType.U32
    return Program.wrapped(
        [BufferDecl.read(chaining_in, 0, u32).with_count(8), BufferDecl.read(message, 1, u32).with_count(16),
         BufferDecl.read(params, 2, u32).with_count(4), BufferDecl.output(chaining_out, 3, u32).with_count(8)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)])


def _build() -> Program:
    return blake3_compress("cv_in", "msg", "params", "cv_out")


_VECTOR_MSG = [0x61726261, 0x61636461, 0x61726261] + [0] * 13
_VECTOR_PARAMS = [0, 0, 64, 0b1011]  # counter 0, block length 64, CHUNK_START | CHUNK_END | ROOT
_VECTOR_OUT = bytes([0x82, 0x5E, 0x3E, 0x45, 0xC6, 0xA8, 0x67, 0x23, 0x78, 0xCF, 0xE6, 0x40, 0x51, 0x65, 0xD4, 0x78,
                     0x8A, 0xC6, 0xEE, 0xEF, 0x86, 0x39, 0xC4, 0x55, 0x31, 0x4F, 0x36, 0xD0, 0xBC, 0xF1, 0x3F, 0xE5])

ENTRY = register_op(
    OP_ID, _build, category=None, ulp=ULP,
    test_inputs=lambda: [[pack_u32_slice(IV), pack_u32_slice(_VECTOR_MSG), pack_u32_slice(_VECTOR_PARAMS)]],
    expected_output=lambda: [[_VECTOR_OUT]],
    bench={},
)
