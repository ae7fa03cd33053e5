"""`python312_extract_structure`, `python312_extract_imports`, `python312_extract_with_blocks`
(port of vyre-libs/src/parsing/python/parse/structure.rs).

Each reads the lexer's sparse token rows (tok_types/starts/lens, one slot per source byte, type 0
where no token starts) with one invocation per byte; an invocation whose token opens a record
claims 6 words of ``out_records`` with ``atomic_add(out_counts[0], 6)`` (so records land in the
order invocations reach the atomic, and ``out_counts[0]`` ends at 6 x records + its initial value).

- structure: ``def`` (kind 1), ``class`` (3), and ``async`` followed by ``def`` (2; the ``def``
  then also records itself as kind 1), when the next token is an identifier: [kind, name start,
  name len, params '(' pos, matching ')' pos, ':' pos after them], the last three INVALID_POS
  when absent; a ``[...]`` type-parameter list between name and '(' is skipped.
- imports: an identifier after ``import`` (kind 1), ``from`` (2) or any ``,`` (1, wherever the
  comma is: vyre does not check that it is in an import statement): [kind, start, dotted-name
  len, previous token pos, last segment pos, next token pos].
- with_blocks: ``with`` (not after ``async``) or ``async with`` (flags 1) followed by an
  identifier: [manager start, dotted-name len, 'with' pos, first ':' after the name, flags, 0].

Example::

    >>> python312_extract_imports("t", "s", "l", "r", "c", 16).buffers[3].count
    96
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import u, v
from .lex import TOK_COLON, TOK_COMMA, TOK_DOT, TOK_IDENTIFIER, TOK_LBRACKET, TOK_LPAREN, TOK_RBRACKET, TOK_RPAREN
from .scan import (DEF_RECORD_WORDS, IMPORT_RECORD_WORDS, INVALID_POS, LINE_INDEX_OP_ID, TOK_ASYNC, TOK_CLASS,
                   TOK_DEF, TOK_FROM, TOK_IMPORT, TOK_WITH, WITH_RECORD_WORDS, dotted_name_loop, extractor_program,
                   find_matching_delimiter, find_matching_delimiter_into, search_next_token, search_next_token_into,
                   search_prev_token, span_len, store_record, tok_at, tok_is)

STRUCTURE_OP_ID = "vyre-libs::parsing::python312_extract_structure"
IMPORTS_OP_ID = "vyre-libs::parsing::python312_extract_imports"
WITH_OP_ID = "vyre-libs::parsing::python312_extract_with_blocks"
ULP = None  # u32 records: exact
_TOKENS = ("tok_types", "tok_starts", "tok_lens")


def _structure_body(types: str, starts: str, lens: str, records: str, counts: str, n: int) -> list[Node]:
    t = Expr.gid_x()
    after = lambda var: Expr.add(v(var), u(1))  # noqa: E731
    return [
        Node.let_bind("tok", tok_at(types, t)),
        Node.let_bind("emit_kind", u(0)),
        Node.let_bind("keyword_pos", u(INVALID_POS)),
        Node.if_then(Expr.eq(v("tok"), u(TOK_DEF)), [Node.assign("emit_kind", u(1)), Node.assign("keyword_pos", t)]),
        Node.if_then(Expr.eq(v("tok"), u(TOK_CLASS)), [Node.assign("emit_kind", u(3)), Node.assign("keyword_pos", t)]),
        *search_next_token("async_next", Expr.add(t, u(1)), types, n),
        Node.if_then(Expr.and_(Expr.eq(v("tok"), u(TOK_ASYNC)), tok_is(types, "async_next", TOK_DEF)),
                     [Node.assign("emit_kind", u(2)), Node.assign("keyword_pos", v("async_next"))]),
        # computed by every invocation, as in vyre (an INVALID keyword_pos searches from byte 0)
        *search_next_token("name_pos", after("keyword_pos"), types, n),
        *search_next_token("post_name", after("name_pos"), types, n),
        *find_matching_delimiter("type_params_end", v("post_name"), types, n, TOK_LBRACKET, TOK_RBRACKET),
        Node.if_then(Expr.and_(Expr.ne(v("emit_kind"), u(0)), tok_is(types, "name_pos", TOK_IDENTIFIER)), [
            Node.let_bind("params_start", u(INVALID_POS)),
            Node.let_bind("params_end", u(INVALID_POS)),
            Node.let_bind("colon_pos", u(INVALID_POS)),
            Node.let_bind("after_type_params", u(INVALID_POS)),
            Node.let_bind("after_params", u(INVALID_POS)),
            Node.if_then_else(tok_is(types, "post_name", TOK_LBRACKET),
                              search_next_token_into("after_type_params", after("type_params_end"), types, n),
                              [Node.assign("after_type_params", v("post_name"))]),
            Node.if_then(tok_is(types, "after_type_params", TOK_LPAREN), [
                Node.assign("params_start", v("after_type_params")),
                Node.assign("params_end", u(INVALID_POS)),
                *find_matching_delimiter_into("params_end", v("after_type_params"), types, n, TOK_LPAREN, TOK_RPAREN)]),
            Node.if_then_else(Expr.ne(v("params_end"), u(INVALID_POS)),
                              search_next_token_into("after_params", after("params_end"), types, n),
                              [Node.assign("after_params", v("after_type_params"))]),
            Node.if_then(tok_is(types, "after_params", TOK_COLON), [Node.assign("colon_pos", v("after_params"))]),
            Node.let_bind("slot", Expr.atomic_add(counts, u(0), u(DEF_RECORD_WORDS))),
            *store_record(records, "slot", [v("emit_kind"), Expr.load(starts, v("name_pos")),
                                            Expr.load(lens, v("name_pos")), v("params_start"), v("params_end"),
                                            v("colon_pos")]),
        ]),
    ]


def python312_extract_structure(tok_types: str, tok_starts: str, tok_lens: str, out_records: str, out_counts: str,
                                haystack_len: int) -> Program:
    """def / async def / class records (see the module doc)."""
    body = _structure_body(tok_types, tok_starts, tok_lens, out_records, out_counts, haystack_len)
    return extractor_program(STRUCTURE_OP_ID, LINE_INDEX_OP_ID, (tok_types, tok_starts, tok_lens),
                             [(out_records, DEF_RECORD_WORDS), (out_counts, 0)], haystack_len, body)


def _imports_body(types: str, starts: str, lens: str, records: str, counts: str, n: int) -> list[Node]:
    t = Expr.gid_x()
    is_ident = Expr.eq(v("tok"), u(TOK_IDENTIFIER))
    return [
        Node.let_bind("tok", tok_at(types, t)),
        Node.let_bind("record_kind", u(0)),
        *search_prev_token("prev_tok", t, types),
        *search_next_token("next_tok", Expr.add(t, u(1)), types, n),
        Node.if_then(Expr.and_(is_ident, Expr.or_(tok_is(types, "prev_tok", TOK_IMPORT),
                                                  tok_is(types, "prev_tok", TOK_FROM))),
                     [Node.assign("record_kind", Expr.select(tok_is(types, "prev_tok", TOK_IMPORT), u(1), u(2)))]),
        Node.if_then(Expr.and_(is_ident, tok_is(types, "prev_tok", TOK_COMMA)), [Node.assign("record_kind", u(1))]),
        Node.if_then(Expr.ne(v("record_kind"), u(0)), [
            Node.let_bind("name_end", t),
            Node.let_bind("cursor", t),
            Node.let_bind("dot_pos", u(INVALID_POS)),
            Node.let_bind("after_dot", u(INVALID_POS)),
            dotted_name_loop("name_end", types, n, TOK_DOT, TOK_IDENTIFIER),
            Node.let_bind("slot", Expr.atomic_add(counts, u(0), u(IMPORT_RECORD_WORDS))),
            *store_record(records, "slot", [v("record_kind"), Expr.load(starts, t),
                                            span_len(starts, lens, t, v("name_end")), v("prev_tok"), v("name_end"),
                                            v("next_tok")]),
        ]),
    ]


def python312_extract_imports(tok_types: str, tok_starts: str, tok_lens: str, out_records: str, out_counts: str,
                              haystack_len: int) -> Program:
    """import / from-import name records (see the module doc)."""
    body = _imports_body(tok_types, tok_starts, tok_lens, out_records, out_counts, haystack_len)
    return extractor_program(IMPORTS_OP_ID, LINE_INDEX_OP_ID, (tok_types, tok_starts, tok_lens),
                             [(out_records, IMPORT_RECORD_WORDS), (out_counts, 0)], haystack_len, body)


def _with_body(types: str, starts: str, lens: str, records: str, counts: str, n: int) -> list[Node]:
    t = Expr.gid_x()
    return [
        Node.let_bind("tok", tok_at(types, t)),
        Node.let_bind("with_pos", u(INVALID_POS)),
        Node.let_bind("flags", u(0)),
        *search_prev_token("prev_tok", t, types),
        Node.if_then(Expr.and_(Expr.eq(v("tok"), u(TOK_WITH)), Expr.ne(tok_at(types, v("prev_tok")), u(TOK_ASYNC))),
                     [Node.assign("with_pos", t)]),
        *search_next_token("async_next", Expr.add(t, u(1)), types, n),
        Node.if_then(Expr.and_(Expr.eq(v("tok"), u(TOK_ASYNC)), tok_is(types, "async_next", TOK_WITH)),
                     [Node.assign("with_pos", v("async_next")), Node.assign("flags", u(1))]),
        *search_next_token("manager_pos", Expr.add(v("with_pos"), u(1)), types, n),
        # vyre computes the token after the manager name and never reads it (kept: same work)
        *search_next_token("after_manager", Expr.add(v("manager_pos"), u(1)), types, n),
        Node.if_then(Expr.and_(Expr.ne(v("with_pos"), u(INVALID_POS)), tok_is(types, "manager_pos", TOK_IDENTIFIER)), [
            Node.let_bind("manager_end", v("manager_pos")),
            Node.let_bind("cursor", v("manager_pos")),
            Node.let_bind("dot_pos", u(INVALID_POS)),
            Node.let_bind("after_dot", u(INVALID_POS)),
            dotted_name_loop("manager_end", types, n, TOK_DOT, TOK_IDENTIFIER),
            Node.let_bind("colon_pos", u(INVALID_POS)),
            Node.loop_for("scan", Expr.add(v("manager_end"), u(1)), u(n), [Node.if_then(
                Expr.and_(Expr.eq(v("colon_pos"), u(INVALID_POS)), tok_is(types, "scan", TOK_COLON)),
                [Node.assign("colon_pos", v("scan"))])]),
            Node.let_bind("slot", Expr.atomic_add(counts, u(0), u(WITH_RECORD_WORDS))),
            *store_record(records, "slot", [Expr.load(starts, v("manager_pos")),
                                            span_len(starts, lens, v("manager_pos"), v("manager_end")),
                                            v("with_pos"), v("colon_pos"), v("flags"), u(0)]),
        ]),
    ]


def python312_extract_with_blocks(tok_types: str, tok_starts: str, tok_lens: str, out_records: str, out_counts: str,
                                  haystack_len: int) -> Program:
    """with / async with header records (see the module doc)."""
    body = _with_body(tok_types, tok_starts, tok_lens, out_records, out_counts, haystack_len)
    return extractor_program(WITH_OP_ID, LINE_INDEX_OP_ID, (tok_types, tok_starts, tok_lens),
                             [(out_records, WITH_RECORD_WORDS), (out_counts, 0)], haystack_len, body)


def sparse_tokens(rows: list[tuple[int, int, int]], n: int = 16) -> list[bytes]:
    """vyre's pack_sparse_tokens: (pos, type, len) rows into the three token buffers."""
    types, starts, lens = [0] * n, [0] * n, [0] * n
    for pos, tok, length in rows:
        types[pos], starts[pos], lens[pos] = tok, pos, length
    return [pack_u32_slice(types), pack_u32_slice(starts), pack_u32_slice(lens)]


def records(words: list[int], n: int = 16, per: int = 6) -> bytes:
    return pack_u32_slice(words + [0] * (n * per - len(words)))


def _register(op_id: str, builder, tokens: list[tuple[int, int, int]], want: list[int]) -> None:
    register_case(op_id, lambda haystack_len=16: builder(*_TOKENS, "out_records", "out_counts", haystack_len),
                  sparse_tokens(tokens) + [bytes(16 * 6 * 4), bytes(4)], [records(want), pack_u32_slice([6])],
                  category="parsing", ulp=ULP, bench=dict(haystack_len=1 << 12))


# vyre's vectors: "def f():" ; "import os" ; "async with foo:"
_register(STRUCTURE_OP_ID, python312_extract_structure,
          [(0, TOK_DEF, 3), (4, TOK_IDENTIFIER, 1), (5, TOK_LPAREN, 1), (6, TOK_RPAREN, 1), (7, TOK_COLON, 1)],
          [1, 4, 1, 5, 6, 7])
_register(IMPORTS_OP_ID, python312_extract_imports, [(0, TOK_IMPORT, 6), (7, TOK_IDENTIFIER, 2)],
          [1, 7, 2, 0, 7, INVALID_POS])
_register(WITH_OP_ID, python312_extract_with_blocks,
          [(0, TOK_ASYNC, 5), (6, TOK_WITH, 4), (11, TOK_IDENTIFIER, 3), (14, TOK_COLON, 1)],
          [11, 3, 6, 14, 1, 0])
