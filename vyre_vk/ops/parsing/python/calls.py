"""`python312_extract_calls` and `python312_extract_decorators` (port of
vyre-libs/src/parsing/python/parse/calls.rs and decorators.rs).

Both read the lexer's sparse token rows (type 0 where no token starts), one invocation per byte.

- calls: an identifier not after '.', extended over up to 8 ``.identifier`` segments, followed by
  '(' with a matching ')' is a call head. It records 7 words at ``atomic_add(out_call_counts, 7)``:
  [start, dotted-name len, '(' pos, ')' pos, kw_base, kw_count, 1 if the token before is ``await``].
  Inside the parentheses, an identifier at '(' and '[' depth 0 (braces are not tracked) whose next
  token is '=' and whose previous token is not '.' is a keyword argument: 2 words
  [start, len] at ``atomic_add(out_kw_counts, 2)``. ``kw_base`` is ``out_kw_counts[0]`` read
  before the call's own adds: vyre's race, since other invocations bump that counter concurrently
  (well-defined only when no other call adds keyword arguments first; see
  tests/ops/parsing/test_python_extract.py). vyre reads it with a plain load; here it is an atomic
  ``atomic_add(out_kw_counts, 0, 0)`` (the same value), because this IR's hazard rule rejects a
  plain access and atomics on one buffer at different nesting levels where vyre's validator,
  tracking each nested list in its own frame, accepts it.
- decorators: '@' followed by an identifier, extended over ``.identifier`` segments; the target is
  the token after the decorator's ')' when '(' follows the name (vyre takes the ')' matching the
  first '(' after the '@' name token), else the token after the name; ``def`` (kind 1),
  ``class`` (3), ``async`` (2, the name two tokens on). Record: [name start, dotted-name len,
  target kind, target-name start, target-name len, target token pos] at
  ``atomic_add(out_counts, 6)``. vyre's segment loop does not stop at an invalid cursor: after a
  non-``.identifier`` step it searches again from byte 0 (INVALID_POS + 1 wraps), so a '.'
  followed by an identifier as the first tokens of the stream extends every later decorator's
  name to that identifier (ported as is).

Example::

    >>> python312_extract_calls("t", "s", "l", "c", "cc", "k", "kc", 16).buffers[5].count
    32
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import u, v
from .lex import TOK_AT, TOK_DOT, TOK_EQ, TOK_IDENTIFIER, TOK_LBRACKET, TOK_LPAREN, TOK_NUMBER, TOK_RBRACKET, \
    TOK_RPAREN
from .scan import (CALL_RECORD_WORDS, CORE_DELIMITER_OP_ID, DECORATOR_RECORD_WORDS, INVALID_POS, KWARG_RECORD_WORDS,
                   TOK_ASYNC, TOK_AWAIT, TOK_CLASS, TOK_DEF, dotted_name_loop, extractor_program,
                   find_matching_delimiter, search_next_token, search_next_token_into, search_prev_token, span_len,
                   store_record, tok_at, tok_is)
from .structure import records, sparse_tokens

CALLS_OP_ID = "vyre-libs::parsing::python312_extract_calls"
DECORATORS_OP_ID = "vyre-libs::parsing::python312_extract_decorators"
ULP = None  # u32 records: exact


def _depth_step(var: str, tok: int, delta: int) -> Node:
    """``if scan_tok == tok { var +/-= 1 }``, the decrement only above 0."""
    if delta > 0:
        return Node.if_then(Expr.eq(v("scan_tok"), u(tok)), [Node.assign(var, Expr.add(v(var), u(1)))])
    return Node.if_then(Expr.eq(v("scan_tok"), u(tok)), [
        Node.if_then(Expr.gt(v(var), u(0)), [Node.assign(var, Expr.sub(v(var), u(1)))])])


def _calls_body(types: str, starts: str, lens: str, calls: str, call_counts: str, kwargs: str, kw_counts: str,
                n: int) -> list[Node]:
    t = Expr.gid_x()
    kwarg = [
        *search_next_token("kw_eq_pos", Expr.add(v("scan"), u(1)), types, n),
        *search_prev_token("kw_prev", v("scan"), types),
        Node.if_then(Expr.and_(tok_is(types, "kw_eq_pos", TOK_EQ), Expr.ne(tok_at(types, v("kw_prev")), u(TOK_DOT))), [
            Node.let_bind("kw_slot", Expr.atomic_add(kw_counts, u(0), u(KWARG_RECORD_WORDS))),
            Node.store(kwargs, v("kw_slot"), Expr.load(starts, v("scan"))),
            Node.store(kwargs, Expr.add(v("kw_slot"), u(1)), Expr.load(lens, v("scan"))),
            Node.assign("kw_count", Expr.add(v("kw_count"), u(1)))]),
    ]
    return [
        Node.let_bind("tok", tok_at(types, t)),
        Node.let_bind("emit", u(0)),
        Node.let_bind("is_call_head", u(0)),
        Node.let_bind("name_end", t),
        Node.let_bind("cursor", t),
        Node.let_bind("dot_pos", u(INVALID_POS)),
        Node.let_bind("after_dot", u(INVALID_POS)),
        *search_prev_token("prev_tok", t, types),
        Node.if_then(Expr.and_(Expr.eq(v("tok"), u(TOK_IDENTIFIER)), Expr.ne(tok_at(types, v("prev_tok")), u(TOK_DOT))),
                     [Node.assign("is_call_head", u(1)),
                      dotted_name_loop("name_end", types, n, TOK_DOT, TOK_IDENTIFIER)]),
        *search_next_token("after_name", Expr.add(v("name_end"), u(1)), types, n),
        *find_matching_delimiter("rparen", v("after_name"), types, n, TOK_LPAREN, TOK_RPAREN),
        Node.if_then(Expr.and_(Expr.eq(v("is_call_head"), u(1)), Expr.and_(
            tok_is(types, "after_name", TOK_LPAREN), Expr.ne(v("rparen"), u(INVALID_POS)))),
            [Node.assign("emit", u(1))]),
        Node.if_then(Expr.eq(v("emit"), u(1)), [
            # vyre: a plain ``Expr::load(out_kw_counts, 0)``, which this IR's validator rejects (a
            # plain access and atomics on one buffer with no barrier, at different nesting levels;
            # vyre's per-frame tracking lets it through). An atomic read returns the same value.
            Node.let_bind("kw_base", Expr.atomic_add(kw_counts, u(0), u(0))),
            Node.let_bind("kw_count", u(0)),
            Node.let_bind("paren_depth", u(0)),
            Node.let_bind("bracket_depth", u(0)),
            Node.loop_for("scan", Expr.add(v("after_name"), u(1)), v("rparen"), [
                Node.let_bind("scan_tok", tok_at(types, v("scan"))),
                _depth_step("paren_depth", TOK_LPAREN, 1), _depth_step("paren_depth", TOK_RPAREN, -1),
                _depth_step("bracket_depth", TOK_LBRACKET, 1), _depth_step("bracket_depth", TOK_RBRACKET, -1),
                Node.if_then(Expr.and_(Expr.and_(Expr.eq(v("scan_tok"), u(TOK_IDENTIFIER)),
                                                 Expr.eq(v("paren_depth"), u(0))),
                                       Expr.eq(v("bracket_depth"), u(0))), kwarg),
            ]),
            Node.let_bind("call_slot", Expr.atomic_add(call_counts, u(0), u(CALL_RECORD_WORDS))),
            *store_record(calls, "call_slot", [
                Expr.load(starts, t), span_len(starts, lens, t, v("name_end")), v("after_name"), v("rparen"),
                v("kw_base"), v("kw_count"), Expr.select(tok_is(types, "prev_tok", TOK_AWAIT), u(1), u(0))]),
        ]),
    ]


def python312_extract_calls(tok_types: str, tok_starts: str, tok_lens: str, out_calls: str, out_call_counts: str,
                            out_kwargs: str, out_kw_counts: str, haystack_len: int) -> Program:
    """Call-site and keyword-argument records (see the module doc)."""
    body = _calls_body(tok_types, tok_starts, tok_lens, out_calls, out_call_counts, out_kwargs, out_kw_counts,
                       haystack_len)
    return extractor_program(CALLS_OP_ID, CORE_DELIMITER_OP_ID, (tok_types, tok_starts, tok_lens),
                             [(out_calls, CALL_RECORD_WORDS), (out_call_counts, 0), (out_kwargs, KWARG_RECORD_WORDS),
                              (out_kw_counts, 0)], haystack_len, body)


def _target(kind: int, types: str, n: int, async_def: bool = False) -> list[Node]:
    name_from = "async_def" if async_def else "target_tok"
    return [Node.assign("target_kind", u(kind)), Node.assign("target_name", u(INVALID_POS)),
            *(search_next_token_into("async_def", Expr.add(v("target_tok"), u(1)), types, n) if async_def else []),
            *search_next_token_into("target_name", Expr.add(v(name_from), u(1)), types, n)]


def _decorators_body(types: str, starts: str, lens: str, records_out: str, counts: str, n: int) -> list[Node]:
    t = Expr.gid_x()
    after = lambda var: Expr.add(v(var), u(1))  # noqa: E731
    return [
        *search_next_token("decorator_name", Expr.add(t, u(1)), types, n),
        Node.let_bind("tok", tok_at(types, t)),
        Node.let_bind("decorator_end", v("decorator_name")),
        Node.let_bind("cursor", v("decorator_name")),
        *[Node.let_bind(name, u(INVALID_POS)) for name in ("dot_pos", "after_dot", "after_decorator", "target_tok",
                                                           "target_name")],
        Node.let_bind("target_kind", u(0)),
        Node.let_bind("async_def", u(INVALID_POS)),
        *find_matching_delimiter("decorator_rparen", v("decorator_name"), types, n, TOK_LPAREN, TOK_RPAREN),
        Node.if_then(Expr.and_(Expr.eq(v("tok"), u(TOK_AT)), tok_is(types, "decorator_name", TOK_IDENTIFIER)), [
            dotted_name_loop("decorator_end", types, n, TOK_DOT, TOK_IDENTIFIER, guard_cursor=False),
            *search_next_token_into("after_decorator", after("decorator_end"), types, n),
            Node.if_then_else(tok_is(types, "after_decorator", TOK_LPAREN),
                              search_next_token_into("target_tok", after("decorator_rparen"), types, n),
                              search_next_token_into("target_tok", after("decorator_end"), types, n)),
            Node.if_then(tok_is(types, "target_tok", TOK_DEF), _target(1, types, n)),
            Node.if_then(tok_is(types, "target_tok", TOK_CLASS), _target(3, types, n)),
            Node.if_then(tok_is(types, "target_tok", TOK_ASYNC), _target(2, types, n, async_def=True)),
            Node.let_bind("slot", Expr.atomic_add(counts, u(0), u(DECORATOR_RECORD_WORDS))),
            *store_record(records_out, "slot", [
                Expr.load(starts, v("decorator_name")), span_len(starts, lens, v("decorator_name"), v("decorator_end")),
                v("target_kind"), Expr.load(starts, v("target_name")), Expr.load(lens, v("target_name")),
                v("target_tok")]),
        ]),
    ]


def python312_extract_decorators(tok_types: str, tok_starts: str, tok_lens: str, out_records: str, out_counts: str,
                                 haystack_len: int) -> Program:
    """Decorator records (see the module doc)."""
    body = _decorators_body(tok_types, tok_starts, tok_lens, out_records, out_counts, haystack_len)
    return extractor_program(DECORATORS_OP_ID, CORE_DELIMITER_OP_ID, (tok_types, tok_starts, tok_lens),
                             [(out_records, DECORATOR_RECORD_WORDS), (out_counts, 0)], haystack_len, body)


def _build_calls(haystack_len: int = 16) -> Program:
    return python312_extract_calls("tok_types", "tok_starts", "tok_lens", "out_calls", "out_call_counts",
                                   "out_kwargs", "out_kw_counts", haystack_len)


def _build_decorators(haystack_len: int = 16) -> Program:
    return python312_extract_decorators("tok_types", "tok_starts", "tok_lens", "out_records", "out_counts",
                                        haystack_len)


# vyre's vectors: "await foo(x=1)" ; "@d async def f"
CALLS_ENTRY = register_case(
    CALLS_OP_ID, _build_calls,
    sparse_tokens([(0, TOK_AWAIT, 5), (6, TOK_IDENTIFIER, 3), (9, TOK_LPAREN, 1), (10, TOK_IDENTIFIER, 1),
                   (11, TOK_EQ, 1), (12, TOK_NUMBER, 1), (13, TOK_RPAREN, 1)])
    + [bytes(16 * 7 * 4), bytes(4), bytes(16 * 2 * 4), bytes(4)],
    [records([6, 3, 9, 13, 0, 1, 1], per=7), pack_u32_slice([7]), records([10, 1], per=2), pack_u32_slice([2])],
    category="parsing", ulp=ULP, bench=dict(haystack_len=1 << 12))
DECORATORS_ENTRY = register_case(
    DECORATORS_OP_ID, _build_decorators,
    sparse_tokens([(0, TOK_AT, 1), (1, TOK_IDENTIFIER, 1), (3, TOK_ASYNC, 5), (9, TOK_DEF, 3),
                   (13, TOK_IDENTIFIER, 1)]) + [bytes(16 * 6 * 4), bytes(4)],
    [records([1, 1, 2, 13, 1, 3]), pack_u32_slice([6])],
    category="parsing", ulp=ULP, bench=dict(haystack_len=1 << 12))
