"""The token-stream scans the Python 3.12 structural extractors share (port of
vyre-libs/src/parsing/python/parse/mod.rs) and their common program shape.

The extractors read the lexer's sparse rows: ``tok_types[i] == 0`` means no token starts at byte
i. Every position variable uses ``INVALID_POS`` (u32::MAX) for "none"; loads at INVALID_POS are
out of bounds and read 0 (vyre's OOB rule), and ``INVALID_POS + 1`` wraps to 0, which vyre's
scans rely on (a search from an invalid cursor restarts at byte 0, see decorators.py).

Example::

    >>> [type(n).__name__ for n in search_next_token("nx", u(3), "types", 16)]
    ['Let', 'Loop']
"""
from __future__ import annotations

from typing import Sequence

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..common import check_len, child_phase, non_composable, u, v, with_entry_op_id
from .lex import KEYWORDS

INVALID_POS = 0xFFFFFFFF
MAX_DOTTED_SEGMENTS = 8
DEF_RECORD_WORDS = IMPORT_RECORD_WORDS = WITH_RECORD_WORDS = DECORATOR_RECORD_WORDS = 6
CALL_RECORD_WORDS, KWARG_RECORD_WORDS = 7, 2
# vyre names each extractor's phase Region after a primitive (kept as upstream)
LINE_INDEX_OP_ID = "vyre-primitives::text::line_index"
CORE_DELIMITER_OP_ID = "vyre-primitives::parsing::core_delimiter_match"
U32 = DataType.U32
# the lexer's keyword token types (lex.py KEYWORDS), by name
(TOK_DEF, TOK_ASYNC, TOK_CLASS, TOK_IMPORT, TOK_FROM, TOK_AS, TOK_WITH, TOK_AWAIT, TOK_MATCH, TOK_CASE,
 TOK_EXCEPT) = (tok for _, tok in KEYWORDS)


def tok_at(tok_types: str, pos: Expr) -> Expr:
    return Expr.load(tok_types, pos)


def tok_is(tok_types: str, var: str, token: int) -> Expr:
    return Expr.eq(tok_at(tok_types, v(var)), u(token))


def is_invalid(var: str) -> Expr:
    return Expr.eq(v(var), u(INVALID_POS))


def search_next_token_into(out: str, start: Expr, tok_types: str, haystack_len: int) -> list[Node]:
    """``for s in start..len { if out == INVALID && tok_types[s] != 0 { out = s } }``: the first
    token at or after `start`, assigned only while `out` is still INVALID_POS."""
    scan = f"{out}_scan"
    return [Node.loop_for(scan, start, u(haystack_len), [Node.if_then(
        Expr.and_(is_invalid(out), Expr.ne(tok_at(tok_types, v(scan)), u(0))), [Node.assign(out, v(scan))])])]


def search_next_token(out: str, start: Expr, tok_types: str, haystack_len: int) -> list[Node]:
    return [Node.let_bind(out, u(INVALID_POS)), *search_next_token_into(out, start, tok_types, haystack_len)]


def search_prev_token(out: str, start: Expr, tok_types: str) -> list[Node]:
    """The last token strictly before `start` (candidates start-1, start-2, .., 0)."""
    rev, cand = f"{out}_rev", f"{out}_cand"
    return [Node.let_bind(out, u(INVALID_POS)), Node.loop_for(rev, u(0), start, [
        Node.let_bind(cand, Expr.sub(Expr.sub(start, u(1)), v(rev))),
        Node.if_then(Expr.and_(is_invalid(out), Expr.ne(tok_at(tok_types, v(cand)), u(0))),
                     [Node.assign(out, v(cand))])])]


def find_matching_delimiter_into(out: str, open_pos: Expr, tok_types: str, haystack_len: int, open_tok: int,
                                 close_tok: int) -> list[Node]:
    """The `close_tok` after `open_pos` at nesting depth 0 of `open_tok`s; `out` keeps INVALID_POS
    when none. The token at `open_pos` itself is not looked at (any token can 'open')."""
    depth, scan, tok = f"{out}_depth", f"{out}_scan", f"{out}_tok"
    return [Node.let_bind(depth, u(0)), Node.loop_for(scan, Expr.add(open_pos, u(1)), u(haystack_len), [
        Node.let_bind(tok, tok_at(tok_types, v(scan))),
        Node.if_then(is_invalid(out), [
            Node.if_then(Expr.eq(v(tok), u(open_tok)), [Node.assign(depth, Expr.add(v(depth), u(1)))]),
            Node.if_then(Expr.eq(v(tok), u(close_tok)), [Node.if_then_else(
                Expr.eq(v(depth), u(0)), [Node.assign(out, v(scan))],
                [Node.assign(depth, Expr.sub(v(depth), u(1)))])])])])]


def find_matching_delimiter(out: str, open_pos: Expr, tok_types: str, haystack_len: int, open_tok: int,
                            close_tok: int) -> list[Node]:
    return [Node.let_bind(out, u(INVALID_POS)),
            *find_matching_delimiter_into(out, open_pos, tok_types, haystack_len, open_tok, close_tok)]


def dotted_name_loop(end: str, tok_types: str, haystack_len: int, tok_dot: int, tok_identifier: int, *,
                     guard_cursor: bool = True) -> Node:
    """Up to MAX_DOTTED_SEGMENTS ``.identifier`` steps from ``cursor``, moving `end` (and cursor)
    to each identifier; a non-identifier step sets cursor to INVALID_POS. With `guard_cursor`
    False (vyre's decorator extractor) an invalid cursor still searches, from byte 0."""
    find_dot = search_next_token_into("dot_pos", Expr.add(v("cursor"), u(1)), tok_types, haystack_len)
    return Node.loop_for("seg", u(0), u(MAX_DOTTED_SEGMENTS), [
        Node.assign("dot_pos", u(INVALID_POS)),
        Node.assign("after_dot", u(INVALID_POS)),
        *([Node.if_then(Expr.ne(v("cursor"), u(INVALID_POS)), find_dot)] if guard_cursor else find_dot),
        Node.if_then(tok_is(tok_types, "dot_pos", tok_dot),
                     search_next_token_into("after_dot", Expr.add(v("dot_pos"), u(1)), tok_types, haystack_len)),
        Node.if_then(tok_is(tok_types, "after_dot", tok_identifier),
                     [Node.assign(end, v("after_dot")), Node.assign("cursor", v("after_dot"))]),
        Node.if_then(Expr.ne(tok_at(tok_types, v("after_dot")), u(tok_identifier)),
                     [Node.assign("cursor", u(INVALID_POS))]),
    ])


def span_len(tok_starts: str, tok_lens: str, first: Expr, last: Expr) -> Expr:
    """``starts[last] - starts[first] + lens[last]``: the byte length of a dotted name."""
    return Expr.add(Expr.sub(Expr.load(tok_starts, last), Expr.load(tok_starts, first)), Expr.load(tok_lens, last))


def store_record(out: str, slot: str, words: Sequence[Expr]) -> list[Node]:
    return [Node.store(out, Expr.add(v(slot), u(i)), w) for i, w in enumerate(words)]


def extractor_program(op_id: str, phase_op_id: str, token_buffers: Sequence[str],
                      outputs: Sequence[tuple[str, int]], haystack_len: int, body: list[Node]) -> Program:
    """vyre's extractor shape: the three token buffers read-only at bindings 0-2, then the
    ReadWrite outputs ``(name, words per haystack byte or 0 for a 1-word counter)``, workgroup
    [256,1,1], one phase Region under the op's, invocations t < haystack_len."""
    check_len(op_id, "haystack_len", haystack_len, 1)
    decls = [BufferDecl.storage(name, b, BufferAccess.ReadOnly, U32).with_count(haystack_len)
             for b, name in enumerate(token_buffers)]
    for b, (name, words) in enumerate(outputs, start=len(token_buffers)):
        count = min(haystack_len * words, 0xFFFFFFFF) if words else 1  # vyre's saturating_mul
        decls.append(BufferDecl.storage(name, b, BufferAccess.ReadWrite, U32).with_count(count))
    program = Program.wrapped(decls, (256, 1, 1), [wrap_anonymous(op_id, [child_phase(op_id, phase_op_id, [
        Node.if_then(Expr.lt(Expr.gid_x(), u(haystack_len)), body)])])])
    return non_composable(with_entry_op_id(program, op_id))
