"""`vyre-libs::parsing::c_lexer`: vyre's dense C11 lexer (port of
vyre-libs/src/parsing/c/lex/lexer/core/dense.rs, helpers.rs, sections.rs, scan_bounds.rs).

One invocation (``gid.x == 0``; workgroup [256,1,1], the grid covers ``haystack_len`` lanes) walks
the haystack (one source byte in the low 8 bits of each u32) with a cursor. At each position the
first matching rule classifies a token: a ``#`` directive while the line allows one (to the end of
the line, across backslash line splices), ``//`` and ``/* */`` comments, prefixed (``L u U u8``)
and plain string/char literals (escape-checked), identifiers, integers and floats (a digit not
after an identifier byte, or ``.digit``), then operators longest first. Comments and whitespace
are skipped; every other token's (type, start, len) is appended to ``out_tok_*`` and
``out_counts[0]`` is the token count. Each scan stops after a cap (256 bytes after an identifier's
or number's first byte, 4096 for a literal, 8192 for a directive or line comment, 16384 for a
block comment; scan_bounds.rs): a longer token is cut there and its rest lexed from the cut, as
vyre does (the rest of an identifier follows an identifier byte, so it starts nothing).
Unterminated literals and comments and bad escapes give the 240..243 error kinds. The walk and its
scans read ``buf_len(haystack)``; escape and last-byte lookahead stop at the static
``haystack_len`` (vyre's byte_at_or_zero).

Example::

    >>> p = c11_lexer("haystack", "types", "starts", "lens", "counts", 16)
    >>> p.entry[0].generator, p.workgroup_size
    ('vyre-libs::parsing::c_lexer', (256, 1, 1))
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import (byte_eq, byte_load, check_len, child_phase, flag_is, inc, is_digit,
                      non_composable, u, v, with_entry_op_id)
from . import tokens as T
from .helpers import (byte_at_or_zero, is_ident_continue, is_ident_start, is_valid_escape_byte,
                      operator_punct_nodes, set_token)

OP_ID = "vyre-libs::parsing::c_lexer"
CLASSIFY_PHASE = "vyre-libs::parsing::c_lexer::classify_at_pos"
ULP = None  # u32 results: exact
U32 = DataType.U32


def _bounded(haystack: str, start: Expr, cap: int) -> Expr:
    """A scan loop's end: ``min(start + cap, buf_len)`` (scan_upper_bound_with_cap)."""
    return Expr.min(Expr.add(start, u(cap)), Expr.buf_len(haystack))


def _peek(haystack: str, at: Expr) -> Expr:
    """The byte at `at`, or 0 at or past the bound length."""
    return Expr.select(Expr.lt(at, Expr.buf_len(haystack)), byte_load(haystack, at), u(0))


def _scan(haystack: str, var: str, start: Expr, cap: int, done: str, body: list[Node]) -> list[Node]:
    """``done = 0; for var in start..min(start+cap, len) { if done == 0 { body } }``."""
    return [Node.let_bind(done, u(0)),
            Node.loop_for(var, start, _bounded(haystack, start, cap), [Node.if_then(flag_is(done, 0), body)])]


def _either(value: Expr, *chars: str) -> Expr:
    out = byte_eq(value, chars[-1])
    for ch in reversed(chars[:-1]):
        out = Expr.or_(byte_eq(value, ch), out)
    return out


def _preproc(haystack: str) -> list[Node]:
    pos, sb = v("pos"), v("scan_byte")
    splice = Expr.or_(byte_eq(v("scan_prev"), "\\"),
                      Expr.and_(byte_eq(sb, "\n"), flag_is("preproc_spliced_cr", 1)))
    step = [
        Node.let_bind("scan_byte", byte_load(haystack, v("scan_preproc"))),
        Node.let_bind("scan_prev", Expr.select(Expr.gt(v("scan_preproc"), pos), byte_load(
            haystack, Expr.saturating_sub(v("scan_preproc"), u(1))), u(0))),
        Node.if_then_else(_either(sb, "\n", "\r"), [
            # a backslash before the line end (or the \n of a spliced \r\n) continues the directive
            Node.if_then_else(splice, [inc("tok_len"), Node.assign("preproc_spliced_cr",
                                                                    Expr.select(byte_eq(sb, "\r"), u(1), u(0)))],
                              [Node.assign("preproc_done", u(1))])],
            [inc("tok_len")]),
    ]
    return [
        set_token(Expr.and_(byte_eq(v("byte"), "#"), flag_is("line_allows_directive", 1)), T.TOK_PREPROC, u(1)),
        Node.if_then(Expr.eq(v("tok_type"), u(T.TOK_PREPROC)), [
            Node.let_bind("preproc_spliced_cr", u(0)),
            *_scan(haystack, "scan_preproc", Expr.add(pos, u(1)), T.MAX_PREPROC_SCAN, "preproc_done", step)]),
    ]


def _comments(haystack: str) -> list[Node]:
    pos, b, nb = v("pos"), v("byte"), v("next_byte")
    line_step = [Node.let_bind("scan_byte", byte_load(haystack, v("scan_comment"))),
                 Node.if_then_else(byte_eq(v("scan_byte"), "\n"), [Node.assign("comment_done", u(1))],
                                   [inc("tok_len")])]
    at = v("scan_block_comment")
    block_step = [
        inc("tok_len"),
        Node.let_bind("scan_byte", byte_load(haystack, at)),
        Node.let_bind("scan_next", _peek(haystack, Expr.add(at, u(1)))),
        Node.if_then(Expr.and_(byte_eq(v("scan_byte"), "*"), byte_eq(v("scan_next"), "/")),
                     [inc("tok_len"), Node.assign("block_done", u(1))]),
    ]
    return [
        set_token(Expr.and_(byte_eq(b, "/"), byte_eq(nb, "/")), T.TOK_COMMENT, u(2)),
        Node.if_then(Expr.eq(v("tok_type"), u(T.TOK_COMMENT)),
                     _scan(haystack, "scan_comment", Expr.add(pos, u(2)), T.MAX_COMMENT_SCAN, "comment_done",
                           line_step)),
        set_token(Expr.and_(byte_eq(b, "/"), byte_eq(nb, "*")), T.TOK_COMMENT, u(2)),
        Node.if_then(Expr.and_(Expr.eq(v("tok_type"), u(T.TOK_COMMENT)), byte_eq(nb, "*")), [
            *_scan(haystack, "scan_block_comment", Expr.add(pos, u(2)), T.MAX_BLOCK_COMMENT_SCAN, "block_done",
                   block_step),
            Node.if_then(flag_is("block_done", 0), [Node.assign("tok_type", u(T.TOK_ERR_UNTERMINATED_COMMENT))]),
        ]),
    ]


def _prefixed_literals() -> list[Node]:
    b, nb, n2 = v("byte"), v("next_byte"), v("next2_byte")
    u8 = Expr.and_(byte_eq(b, "u"), byte_eq(nb, "8"))
    length = Expr.select(u8, u(3), u(2))
    return [set_token(Expr.or_(Expr.and_(_either(b, "L", "u", "U"), byte_eq(nb, q)), Expr.and_(u8, byte_eq(n2, q))),
                      tok, length) for tok, q in ((T.TOK_STRING, '"'), (T.TOK_CHAR, "'"))]


def _identifier(haystack: str) -> list[Node]:
    step = [Node.let_bind("scan_byte", byte_load(haystack, v("scan_ident"))),
            Node.if_then_else(is_ident_continue(v("scan_byte")), [inc("tok_len")], [Node.assign("ident_done", u(1))])]
    return [
        set_token(Expr.and_(is_ident_start(v("byte")), Expr.not_(is_ident_continue(v("prev_byte")))),
                  T.TOK_IDENTIFIER, u(1)),
        Node.if_then(Expr.eq(v("tok_type"), u(T.TOK_IDENTIFIER)),
                     _scan(haystack, "scan_ident", Expr.add(v("pos"), u(1)), T.MAX_IDENT_SCAN, "ident_done", step)),
    ]


def _number(haystack: str) -> list[Node]:
    at, sb, sp, sn = v("scan_number"), v("scan_byte"), v("scan_prev"), v("scan_next")
    step = [
        Node.let_bind("scan_byte", byte_load(haystack, at)),
        Node.let_bind("scan_prev", byte_load(haystack, Expr.saturating_sub(at, u(1)))),
        Node.let_bind("scan_next", _peek(haystack, Expr.add(at, u(1)))),
        # e/E/p/P followed by a digit or sign makes the literal a float (so do hex digits 'e'
        # followed by a digit: vyre's rule, kept)
        Node.let_bind("scan_can_start_exponent", Expr.and_(_either(sb, "e", "E", "p", "P"),
                                                           Expr.or_(is_digit(sn), _either(sn, "+", "-")))),
        Node.let_bind("scan_is_exponent_sign", Expr.and_(_either(sb, "+", "-"), _either(sp, "e", "E", "p", "P"))),
        Node.let_bind("scan_is_float_dot", byte_eq(sb, ".")),
        Node.let_bind("scan_is_number_tail", Expr.or_(is_ident_continue(sb), Expr.or_(
            v("scan_is_float_dot"), v("scan_is_exponent_sign")))),
        Node.if_then_else(v("scan_is_number_tail"), [
            inc("tok_len"),
            Node.if_then(Expr.or_(v("scan_is_float_dot"), v("scan_can_start_exponent")),
                         [Node.assign("number_is_float", u(1))]),
        ], [Node.assign("number_done", u(1))]),
    ]
    tt = v("tok_type")
    return [
        set_token(Expr.and_(is_digit(v("byte")), Expr.not_(is_ident_continue(v("prev_byte")))), T.TOK_INTEGER, u(1)),
        set_token(Expr.and_(byte_eq(v("byte"), "."), is_digit(v("next_byte"))), T.TOK_FLOAT, u(1)),
        Node.if_then(Expr.or_(Expr.eq(tt, u(T.TOK_INTEGER)), Expr.eq(tt, u(T.TOK_FLOAT))), [
            Node.let_bind("number_is_float", Expr.select(Expr.eq(tt, u(T.TOK_FLOAT)), u(1), u(0))),
            *_scan(haystack, "scan_number", Expr.add(v("pos"), u(1)), T.MAX_NUMBER_SCAN, "number_done", step),
            Node.if_then(flag_is("number_is_float", 1), [Node.assign("tok_type", u(T.TOK_FLOAT))]),
        ]),
    ]


def _literal(haystack: str, haystack_len: int) -> list[Node]:
    b, nb, at, sb = v("byte"), v("next_byte"), v("scan_literal"), v("scan_byte")
    first = Expr.add(Expr.add(v("pos"), v("literal_quote_offset")), u(1))
    step = [
        inc("tok_len"),
        Node.let_bind("scan_byte", byte_load(haystack, at)),
        Node.if_then_else(flag_is("escaped", 1), [
            Node.if_then(Expr.not_(is_valid_escape_byte(haystack, at, sb, haystack_len)),
                         [Node.assign("invalid_escape", u(1))]),
            Node.assign("escaped", u(0)),
        ], [Node.if_then_else(byte_eq(sb, "\\"), [Node.assign("escaped", u(1))], [
            Node.if_then_else(Expr.eq(sb, v("quote")), [Node.assign("literal_done", u(1))], [
                Node.if_then(_either(sb, "\n", "\r"),
                             [Node.assign("literal_unterminated", u(1)), Node.assign("literal_done", u(1))])])])]),
    ]
    tt = v("tok_type")
    return [
        set_token(byte_eq(b, '"'), T.TOK_STRING, u(1)),
        set_token(byte_eq(b, "'"), T.TOK_CHAR, u(1)),
        Node.if_then(Expr.or_(Expr.eq(tt, u(T.TOK_STRING)), Expr.eq(tt, u(T.TOK_CHAR))), [
            Node.let_bind("literal_quote_offset", Expr.select(_either(b, '"', "'"), u(0), Expr.select(
                Expr.and_(byte_eq(b, "u"), byte_eq(nb, "8")), u(2), u(1)))),
            Node.let_bind("quote", byte_load(haystack, Expr.add(v("pos"), v("literal_quote_offset")))),
            Node.let_bind("escaped", u(0)),
            Node.let_bind("literal_unterminated", u(0)),
            Node.let_bind("invalid_escape", u(0)),
            *_scan(haystack, "scan_literal", first, T.MAX_LITERAL_SCAN, "literal_done", step),
            Node.if_then(flag_is("literal_done", 0), [Node.assign("literal_unterminated", u(1))]),
            Node.if_then(flag_is("literal_unterminated", 1), [Node.assign("tok_type", Expr.select(
                byte_eq(v("quote"), '"'), u(T.TOK_ERR_UNTERMINATED_STRING), u(T.TOK_ERR_UNTERMINATED_CHAR)))]),
            Node.if_then(Expr.and_(flag_is("literal_unterminated", 0), flag_is("invalid_escape", 1)),
                         [Node.assign("tok_type", u(T.TOK_ERR_INVALID_ESCAPE))]),
        ]),
    ]


def _store_and_advance(haystack: str, haystack_len: int, types: str, starts: str, lens: str) -> list[Node]:
    tt, b, last = v("tok_type"), v("byte"), v("tok_last_byte")
    return [
        Node.let_bind("store_token", Expr.and_(flag_is("emit", 1), Expr.and_(
            Expr.ne(tt, u(T.TOK_WHITESPACE)), Expr.ne(tt, u(T.TOK_COMMENT))))),
        Node.if_then(v("store_token"), [
            Node.store(types, v("tok_idx"), tt), Node.store(starts, v("tok_idx"), v("pos")),
            Node.store(lens, v("tok_idx"), v("tok_len")), inc("tok_idx")]),
        Node.let_bind("tok_last_byte", byte_at_or_zero(
            haystack, Expr.add(v("pos"), Expr.saturating_sub(v("tok_len"), u(1))), haystack_len)),
        # a directive may start a line: after a newline (or a token ending in one) until a byte
        # other than blank is seen
        Node.if_then_else(Expr.eq(tt, u(T.TOK_PREPROC)), [Node.assign("line_allows_directive", u(1))], [
            Node.if_then_else(Expr.or_(_either(b, "\n", "\r"), _either(last, "\n", "\r")),
                              [Node.assign("line_allows_directive", u(1))],
                              [Node.if_then(Expr.not_(Expr.and_(flag_is("line_allows_directive", 1),
                                                                _either(b, " ", "\t"))),
                                            [Node.assign("line_allows_directive", u(0))])])]),
        Node.assign("cursor", Expr.add(v("cursor"), Expr.select(flag_is("emit", 1), v("tok_len"), u(1)))),
    ]


def classify_at_pos(haystack: str, haystack_len: int, types: str, starts: str, lens: str) -> list[Node]:
    """The body run at ``pos``: classify one token, store it, advance the cursor."""
    pos = v("pos")
    return [
        Node.let_bind("byte", byte_load(haystack, pos)),
        Node.let_bind("prev_byte", Expr.select(Expr.gt(pos, u(0)),
                                               byte_load(haystack, Expr.saturating_sub(pos, u(1))), u(0))),
        Node.let_bind("next_byte", _peek(haystack, Expr.add(pos, u(1)))),
        Node.let_bind("next2_byte", _peek(haystack, Expr.add(pos, u(2)))),
        Node.let_bind("emit", u(0)),
        Node.let_bind("tok_type", u(T.TOK_WHITESPACE)),
        Node.let_bind("tok_len", u(1)),
        *_preproc(haystack), *_comments(haystack), *_prefixed_literals(), *_identifier(haystack),
        *_number(haystack), *_literal(haystack, haystack_len), *operator_punct_nodes(),
        *_store_and_advance(haystack, haystack_len, types, starts, lens),
    ]


def c11_lexer(haystack: str, out_tok_types: str, out_tok_starts: str, out_tok_lens: str, out_counts: str,
              haystack_len: int) -> Program:
    """Lex ``haystack`` (``haystack_len`` bytes, one per u32) into token (type, start, len) rows."""
    check_len(OP_ID, "haystack_len", haystack_len)
    n = max(haystack_len, 1)
    hl = Expr.buf_len(haystack)
    walk = [
        Node.let_bind("cursor", u(0)),
        Node.let_bind("line_allows_directive", u(1)),
        Node.let_bind("tok_idx", u(0)),
        # each round consumes at least one byte, so buf_len rounds always reach the end
        Node.loop_for("token_iter", u(0), hl, [Node.if_then(Expr.lt(v("cursor"), hl), [
            Node.let_bind("pos", v("cursor")),
            child_phase(OP_ID, CLASSIFY_PHASE, classify_at_pos(haystack, haystack_len, out_tok_types,
                                                               out_tok_starts, out_tok_lens)),
        ])]),
        Node.store(out_counts, u(0), v("tok_idx")),
    ]
    program = Program.wrapped(
        [BufferDecl.storage(haystack, 0, BufferAccess.ReadOnly, U32).with_count(n),
         BufferDecl.storage(out_tok_types, 1, BufferAccess.ReadWrite, U32).with_count(n),
         BufferDecl.storage(out_tok_starts, 2, BufferAccess.ReadWrite, U32).with_count(n),
         BufferDecl.storage(out_tok_lens, 3, BufferAccess.ReadWrite, U32).with_count(n),
         BufferDecl.storage(out_counts, 4, BufferAccess.ReadWrite, U32).with_count(1)],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), walk)])])
    return non_composable(with_entry_op_id(program, OP_ID))


def _build(haystack_len: int = 320) -> Program:
    return c11_lexer("haystack", "out_tok_types", "out_tok_starts", "out_tok_lens", "out_counts", haystack_len)


def ident_run_case(haystack_len: int) -> tuple[list[bytes], list[bytes]]:
    """vyre's vector at `haystack_len` (> 257): that many 'a' bytes (each u32 0x61616161: only the
    low byte is read) lex as one identifier cut at the 257-byte cap; every later byte follows an
    identifier byte, so nothing else starts."""
    n = haystack_len

    def words(head: int) -> bytes:
        return pack_u32_slice([head] + [0] * (n - 1))
    return ([b"a" * 4 * n] + [bytes(4 * n)] * 3 + [bytes(4)],
            [words(T.TOK_IDENTIFIER), bytes(4 * n), words(T.MAX_IDENT_SCAN + 1), pack_u32_slice([1])])


# vyre registers this at haystack_len 4096; each position the serial walk visits costs the
# reference ~2 ms (9 s for 4096), so it is registered at 320 (the same cut identifier plus 63
# positions that start nothing) and the 4096 case runs in tests/ops/parsing/test_c_lexer.py.
ENTRY = register_case(OP_ID, _build, *ident_run_case(320), category="parsing", ulp=ULP,
                      bench=dict(haystack_len=1 << 16))
