"""`vyre-libs::parsing::python312_lexer`: vyre's sparse per-byte Python lexer (port of
vyre-libs/src/parsing/python/lex.rs).

Invocation t < haystack_len (workgroup [256,1,1]) owns byte t (the low 8 bits of ``haystack[t]``)
and decides, from that byte, the byte before it and a scan forward, whether a token starts there:
``\\n`` NEWLINE; ``#`` COMMENT to the line end; a quote STRING up to the next unescaped same quote
(no triple-quote or prefix handling, the length runs to the end of the haystack if unclosed); an
identifier start not after an identifier byte, IDENTIFIER or one of the 11 keywords (def async
class import from as with await match case except); a digit not after an identifier byte, NUMBER
over digits, ``_`` and ``.``; the punctuation ``( ) [ ] { } : , . = @ *``. A byte after a ``#`` on
its line (found by scanning back) emits nothing. A token writes (type, t, len) at index t of the
three ``out_tok_*`` buffers and atomically counts itself in ``out_counts[0]``; other indices keep
their contents. Bytes inside strings are classified like any other (vyre's sparse design: a later
pass filters), so the stream has tokens inside string literals.

Example::

    >>> p = python312_lexer("haystack", "types", "starts", "lens", "counts", 16)
    >>> p.entry[0].body[0].generator
    'vyre-primitives::text::line_index'
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import ascii, between, byte_load, check_len, child_phase, flag_is, inc, is_alpha, non_composable, u, v, \
    with_entry_op_id

OP_ID = "vyre-libs::parsing::python312_lexer"
# vyre names the phase after the line_index primitive (kept as upstream)
PHASE_OP_ID = "vyre-primitives::text::line_index"
ULP = None  # u32 results: exact
U32 = DataType.U32

TOK_NONE, TOK_IDENTIFIER, TOK_NUMBER, TOK_STRING, TOK_NEWLINE, TOK_COMMENT = 0, 1, 2, 3, 4, 5
(TOK_LPAREN, TOK_RPAREN, TOK_LBRACKET, TOK_RBRACKET, TOK_LBRACE, TOK_RBRACE, TOK_COLON, TOK_COMMA, TOK_DOT,
 TOK_EQ, TOK_AT, TOK_STAR) = range(10, 22)
KEYWORDS = (("def", 100), ("async", 101), ("class", 102), ("import", 103), ("from", 104), ("as", 105),
            ("with", 106), ("await", 107), ("match", 108), ("case", 109), ("except", 110))
PUNCT = (("(", TOK_LPAREN), (")", TOK_RPAREN), ("[", TOK_LBRACKET), ("]", TOK_RBRACKET), ("{", TOK_LBRACE),
         ("}", TOK_RBRACE), (":", TOK_COLON), (",", TOK_COMMA), (".", TOK_DOT), ("=", TOK_EQ), ("@", TOK_AT),
         ("*", TOK_STAR))


def is_ident_continue(value: Expr) -> Expr:
    return Expr.or_(Expr.or_(is_alpha(value), between(value, "0", "9")), Expr.eq(value, ascii("_")))


def is_ident_start(value: Expr) -> Expr:
    return Expr.or_(is_alpha(value), Expr.eq(value, ascii("_")))


def keyword_match(haystack: str, base: Expr, word: str) -> Expr:
    expr = Expr.eq(v("token_len"), u(len(word)))
    for offset, ch in enumerate(word):
        expr = Expr.and_(expr, Expr.eq(byte_load(haystack, Expr.add(base, u(offset))), ascii(ch)))
    return expr


def _emit(token: int, length: Expr) -> list[Node]:
    return [Node.assign("emit", u(1)), Node.assign("token_type", u(token)), Node.assign("token_len", length)]


def _unclaimed_and(cond: Expr) -> Expr:
    return Expr.and_(flag_is("emit", 0), cond)


def _scan_from(haystack: str, start: Expr, haystack_len: int, body: list[Node], scan_len: int) -> list[Node]:
    """``active = 1; scan_len = ..; for j in start..haystack_len { if active { cur = byte j; body } }``."""
    return [Node.let_bind("active", u(1)), Node.let_bind("scan_len", u(scan_len)),
            Node.loop_for("j", start, u(haystack_len), [Node.if_then(flag_is("active", 1), [
                Node.let_bind("cur", byte_load(haystack, v("j"))), *body])])]


def lexer_body(haystack: str, types: str, starts: str, lens: str, counts: str, haystack_len: int) -> list[Node]:
    t, ch, cur = Expr.gid_x(), v("ch"), v("cur")
    stop = Node.assign("active", u(0))
    comment_rev = [
        Node.let_bind("comment_pos", Expr.sub(Expr.sub(t, u(1)), v("comment_rev"))),
        Node.let_bind("comment_ch", byte_load(haystack, v("comment_pos"))),
        Node.if_then(Expr.eq(v("comment_ch"), ascii("\n")), [Node.assign("comment_scan_active", u(0))]),
        Node.if_then(Expr.eq(v("comment_ch"), ascii("#")),
                     [Node.assign("in_comment_tail", u(1)), Node.assign("comment_scan_active", u(0))]),
    ]
    comment = _scan_from(haystack, Expr.add(t, u(1)), haystack_len,
                         [Node.if_then_else(Expr.eq(cur, ascii("\n")), [stop], [inc("scan_len")])], 1)
    string = _scan_from(haystack, Expr.add(t, u(1)), haystack_len, [
        inc("scan_len"),
        Node.if_then_else(flag_is("escaped", 1), [Node.assign("escaped", u(0))], [
            Node.if_then(Expr.eq(cur, ascii("\\")), [Node.assign("escaped", u(1))]),
            Node.if_then(Expr.eq(cur, v("quote")), [stop]),
        ]),
    ], 1)
    ident = _scan_from(haystack, t, haystack_len,
                       [Node.if_then_else(is_ident_continue(cur), [inc("scan_len")], [stop])], 0)
    number = _scan_from(haystack, t, haystack_len, [Node.if_then_else(
        Expr.or_(Expr.or_(between(cur, "0", "9"), Expr.eq(cur, ascii("_"))), Expr.eq(cur, ascii("."))),
        [inc("scan_len")], [stop])], 0)
    keywords = [Node.if_then(keyword_match(haystack, t, w), [Node.assign("token_type", u(tok))]) for w, tok in KEYWORDS]
    return [
        Node.let_bind("ch", byte_load(haystack, t)),
        Node.let_bind("prev", Expr.select(Expr.gt(t, u(0)), byte_load(haystack, Expr.sub(t, u(1))), u(0))),
        # back to the line start: a '#' before this byte on its line makes it comment text
        Node.let_bind("comment_scan_active", u(1)),
        Node.let_bind("in_comment_tail", u(0)),
        Node.loop_for("comment_rev", u(0), t, [Node.if_then(flag_is("comment_scan_active", 1), comment_rev)]),
        Node.let_bind("emit", u(0)),
        Node.let_bind("token_type", u(TOK_NONE)),
        Node.let_bind("token_len", u(0)),
        Node.let_bind("is_ident_start", Expr.select(is_ident_start(ch), u(1), u(0))),
        Node.let_bind("prev_identish", Expr.select(is_ident_continue(v("prev")), u(1), u(0))),
        Node.if_then(Expr.eq(ch, ascii("\n")), _emit(TOK_NEWLINE, u(1))),
        Node.if_then(_unclaimed_and(Expr.eq(ch, ascii("#"))), [*comment, *_emit(TOK_COMMENT, v("scan_len"))]),
        Node.if_then(_unclaimed_and(Expr.or_(Expr.eq(ch, ascii("'")), Expr.eq(ch, ascii('"')))), [
            Node.let_bind("quote", ch), Node.let_bind("escaped", u(0)), *string, *_emit(TOK_STRING, v("scan_len"))]),
        Node.if_then(_unclaimed_and(Expr.and_(flag_is("is_ident_start", 1), flag_is("prev_identish", 0))),
                     [*ident, *_emit(TOK_IDENTIFIER, v("scan_len")), *keywords]),
        Node.if_then(_unclaimed_and(Expr.and_(between(ch, "0", "9"), flag_is("prev_identish", 0))),
                     [*number, *_emit(TOK_NUMBER, v("scan_len"))]),
        *[Node.if_then(_unclaimed_and(Expr.eq(ch, ascii(p))), _emit(tok, u(1))) for p, tok in PUNCT],
        Node.if_then(Expr.and_(flag_is("in_comment_tail", 1), Expr.ne(ch, ascii("\n"))), [Node.assign("emit", u(0))]),
        Node.if_then(flag_is("emit", 1), [
            Node.store(types, t, v("token_type")),
            Node.store(starts, t, t),
            Node.store(lens, t, v("token_len")),
            Node.let_bind("token_slot", Expr.atomic_add(counts, u(0), u(1))),
            Node.assign("token_slot", v("token_slot")),
        ]),
    ]


def python312_lexer(haystack: str, out_tok_types: str, out_tok_starts: str, out_tok_lens: str, out_counts: str,
                    haystack_len: int) -> Program:
    """Sparse token rows of ``haystack[0..haystack_len]`` (see the module doc)."""
    check_len(OP_ID, "haystack_len", haystack_len, 1)
    body = lexer_body(haystack, out_tok_types, out_tok_starts, out_tok_lens, out_counts, haystack_len)
    program = Program.wrapped(
        [BufferDecl.storage(haystack, 0, BufferAccess.ReadOnly, U32).with_count(haystack_len)] +
        [BufferDecl.storage(name, b, BufferAccess.ReadWrite, U32).with_count(haystack_len)
         for b, name in enumerate((out_tok_types, out_tok_starts, out_tok_lens), start=1)] +
        [BufferDecl.storage(out_counts, 4, BufferAccess.ReadWrite, U32).with_count(1)],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, [child_phase(OP_ID, PHASE_OP_ID, [
            Node.if_then(Expr.lt(Expr.gid_x(), u(haystack_len)), body)])])])
    return non_composable(with_entry_op_id(program, OP_ID))


def _build(haystack_len: int = 16) -> Program:
    return python312_lexer("haystack", "tok_types", "tok_starts", "tok_lens", "counts", haystack_len)


def _sparse(rows: list[tuple[int, int, int]], n: int = 16) -> list[bytes]:
    types, starts, lens = [0] * n, [0] * n, [0] * n
    for pos, tok, length in rows:
        types[pos], starts[pos], lens[pos] = tok, pos, length
    return [pack_u32_slice(types), pack_u32_slice(starts), pack_u32_slice(lens)]


# vyre's vector: "def f(x):\n#z\n" in a 16-byte haystack, nine tokens.
_SOURCE = b"def f(x):\n#z\n"
ENTRY = register_case(
    OP_ID, _build, [pack_u32_slice(list(_SOURCE) + [0] * (16 - len(_SOURCE)))] + [bytes(64)] * 3 + [bytes(4)],
    _sparse([(0, 100, 3), (4, TOK_IDENTIFIER, 1), (5, TOK_LPAREN, 1), (6, TOK_IDENTIFIER, 1), (7, TOK_RPAREN, 1),
             (8, TOK_COLON, 1), (9, TOK_NEWLINE, 1), (10, TOK_COMMENT, 2), (12, TOK_NEWLINE, 1)])
    + [pack_u32_slice([9])],
    category="parsing", ulp=ULP, bench=dict(haystack_len=1 << 14))
