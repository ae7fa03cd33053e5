"""`vyre-libs::parsing::c11_extract_functions` and `c11_extract_calls`: function definitions and
call sites of a lexed C token stream (port of vyre-libs/src/parsing/c/parse/structure/
functions.rs and calls.rs).

Inputs are token kinds and ``paren_pairs`` (``paren_pairs[i]`` = the index of the paren matching
the one at ``i``, MATCH_NONE elsewhere; likewise ``brace_pairs``). Output records are sparse:
token ``t``'s record sits at ``out[t * words ..]``, every other record is zeroed and
``counts[0] = num_tokens * words`` whatever matched (vyre's layout: a later pass compacts).

Functions (lanes ``t < num_tokens - 2``, 3 words ``[name, body_open, body_close]``): an
identifier followed by ``(`` (or by an integer then ``(``, vyre's numeric-suffix macro shape, or
written ``(name)(..)``), preceded by a declaration-prefix kind (or by ``)`` ``)``, an attribute),
whose parameter list's ``)`` is followed, before any depth-0 ``;``, by a ``{`` at paren/bracket
depth 0 with a matching ``}``.

Calls (lanes ``t < num_tokens - 1``, 4 words ``[caller, name, args_open, args_close]``): an
identifier followed by a paired ``(`` (or integer then ``(``) that is not a function record's name
and is not a declaration (prefix kind before it and ``;``/``{`` after the ``)``); or ``(*name)(..)``
not preceded by a declaration prefix. ``caller`` is the first function record whose body holds
``t`` (MATCH_NONE outside every body). For a numeric-suffix call ``args_open`` is ``t + 1`` (the
integer token), as in vyre.

Example::

    >>> [b.name for b in c11_extract_functions("ty", "pp", "bp", 6, "fns", "n").buffers]
    ['ty', 'pp', 'bp', 'fns', 'n']
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, u, v
from . import tokens as T
from .structure import (MATCH_NONE, body_open_scan, enclosing_function_lookup, function_prefix_token,
                        record_buffers, sparse_output_init, sparse_record_write, threaded_structure_program,
                        token_context)

FUNCTIONS_OP_ID = "vyre-libs::parsing::c11_extract_functions"
CALLS_OP_ID = "vyre-libs::parsing::c11_extract_calls"
ULP = None  # u32 results: exact
U32 = DataType.U32
FUNCTION_WORDS, CALL_WORDS = 3, 4


def _is(name: str, tok: int) -> Expr:
    return Expr.eq(v(name), u(tok))


def _found(name: str) -> Expr:
    return Expr.ne(v(name), u(MATCH_NONE))


def _all(*terms: Expr) -> Expr:
    out = terms[0]
    for term in terms[1:]:
        out = Expr.and_(out, term)
    return out


def function_nodes(tok_types: str, paren_pairs: str, brace_pairs: str, out: str, n: Expr, t: Expr) -> list[Node]:
    ident = _is("tok_type", T.TOK_IDENTIFIER)
    body = token_context(tok_types, paren_pairs, n, t, before_wrapper=True, wrapper_rparen=True,
                         after_wrapper=True)
    body += [
        # `(name)(params)`: the name alone in parens, a parameter list right after them
        Node.let_bind("is_parenthesized_function_name", _all(
            ident, _is("prev_type", T.TOK_LPAREN), _is("next_type", T.TOK_RPAREN),
            Expr.eq(v("parenthesized_wrapper_rparen"), Expr.add(t, u(1))), _is("after_wrapper_type", T.TOK_LPAREN))),
        Node.let_bind("is_numeric_suffix_function_name", _all(
            ident, _is("next_type", T.TOK_INTEGER), _is("after_wrapper_type", T.TOK_LPAREN))),
        Node.if_then(v("is_numeric_suffix_function_name"), [Node.assign("matching_rparen", v("after_wrapper_rparen"))]),
        Node.if_then(v("is_parenthesized_function_name"), [Node.assign("matching_rparen", v("after_wrapper_rparen"))]),
        # guarded so MATCH_NONE + 1 never wraps to a scan from token 0
        Node.let_bind("function_body_scan_start", n),
        Node.if_then(_found("matching_rparen"),
                     [Node.assign("function_body_scan_start", Expr.add(v("matching_rparen"), u(1)))]),
        *body_open_scan(tok_types, v("function_body_scan_start"), n, "body_open"),
        Node.let_bind("matching_rbrace", u(MATCH_NONE)),
        Node.if_then(_found("body_open"), [Node.assign("matching_rbrace", Expr.load(brace_pairs, v("body_open")))]),
        Node.let_bind("is_attribute_suffix", Expr.and_(_is("prev_type", T.TOK_RPAREN),
                                                       _is("before_wrapper_type", T.TOK_RPAREN))),
        Node.let_bind("is_match", _all(
            ident,
            Expr.or_(
                Expr.and_(Expr.or_(_is("next_type", T.TOK_LPAREN), v("is_numeric_suffix_function_name")),
                          Expr.or_(function_prefix_token(v("prev_type")), v("is_attribute_suffix"))),
                Expr.and_(v("is_parenthesized_function_name"), function_prefix_token(v("before_wrapper_type")))),
            _found("matching_rparen"), _found("body_open"), _found("matching_rbrace"))),
        Node.if_then(v("is_match"), sparse_record_write(out, t, FUNCTION_WORDS,
                                                        [t, v("body_open"), v("matching_rbrace")])),
    ]
    return body


def c11_extract_functions(tok_types: str, paren_pairs: str, brace_pairs: str, num_tokens: int, out_functions: str,
                          out_counts: str) -> Program:
    """Sparse ``[name, body_open, body_close]`` records of the function definitions."""
    check_len(FUNCTIONS_OP_ID, "num_tokens", num_tokens, 1)
    n, t = u(num_tokens), v("t")
    buffers = record_buffers(tok_types, paren_pairs,
                             BufferDecl.storage(brace_pairs, 2, BufferAccess.ReadOnly, U32).with_count(num_tokens),
                             out_functions, FUNCTION_WORDS, num_tokens, out_counts)
    # vyre's guard t < num_tokens - 2 (wrapping: below 2 tokens every lane passes it)
    return threaded_structure_program(
        FUNCTIONS_OP_ID, buffers, sparse_output_init(out_functions, out_counts, t, n, FUNCTION_WORDS),
        Expr.lt(t, Expr.sub(n, u(2))), function_nodes(tok_types, paren_pairs, brace_pairs, out_functions, n, t))


def call_nodes(tok_types: str, paren_pairs: str, functions: str, num_functions: Expr, out: str, n: Expr,
               t: Expr) -> list[Node]:
    ident = _is("tok_type", T.TOK_IDENTIFIER)
    mr, after = v("matching_rparen"), v("after_direct_call")
    body = token_context(tok_types, paren_pairs, n, t, prev_prev=True, next2=True)
    body += [
        Node.let_bind("is_numeric_suffix_call_name", _all(ident, _is("next_type", T.TOK_INTEGER),
                                                          _is("next2_type", T.TOK_LPAREN))),
        Node.if_then(v("is_numeric_suffix_call_name"), [Node.assign("matching_rparen", v("numeric_suffix_rparen"))]),
        Node.let_bind("after_direct_call", u(0)),
        Node.if_then(Expr.and_(_found("matching_rparen"), Expr.lt(Expr.add(mr, u(1)), n)),
                     [Node.assign("after_direct_call", Expr.load(tok_types, Expr.add(mr, u(1))))]),
        Node.let_bind("is_function_name_record", u(0)),
        Node.loop_for("call_fn_record_scan", u(0), num_functions, [
            Node.let_bind("call_fn_record_name", Expr.load(functions, Expr.mul(v("call_fn_record_scan"), u(3)))),
            Node.if_then(Expr.eq(v("call_fn_record_name"), t), [Node.assign("is_function_name_record", u(1))]),
        ]),
        Node.let_bind("is_direct_call", _all(
            ident, Expr.or_(_is("next_type", T.TOK_LPAREN), v("is_numeric_suffix_call_name")),
            _found("matching_rparen"), _is("is_function_name_record", 0),
            # a prototype `int f(..);` or definition head `int f(..) {` is not a call
            Expr.or_(Expr.not_(function_prefix_token(v("prev_type"))),
                     Expr.and_(Expr.ne(after, u(T.TOK_SEMICOLON)), Expr.ne(after, u(T.TOK_LBRACE)))))),
        Node.let_bind("args_end", mr),
        Node.let_bind("ptr_wrapper_rparen", u(MATCH_NONE)),
        Node.let_bind("before_ptr_wrapper_type", u(T.TOK_EOF)),
        Node.if_then(Expr.gt(t, u(1)), [
            Node.assign("ptr_wrapper_rparen", Expr.load(paren_pairs, Expr.sub(t, u(2)))),
            Node.if_then(Expr.gt(t, u(2)),
                         [Node.assign("before_ptr_wrapper_type", Expr.load(tok_types, Expr.sub(t, u(3))))]),
        ]),
        # wraps to 0 when the wrapper has no pair (vyre's unguarded add, kept)
        Node.let_bind("ptr_call_lparen", Expr.add(v("ptr_wrapper_rparen"), u(1))),
        Node.let_bind("ptr_call_lparen_type", u(0)),
        Node.let_bind("ptr_call_rparen", u(MATCH_NONE)),
        Node.if_then(Expr.lt(v("ptr_call_lparen"), n), [
            Node.assign("ptr_call_lparen_type", Expr.load(tok_types, v("ptr_call_lparen"))),
            Node.assign("ptr_call_rparen", Expr.load(paren_pairs, v("ptr_call_lparen"))),
        ]),
        Node.let_bind("is_ptr_call", _all(
            ident, Expr.not_(function_prefix_token(v("before_ptr_wrapper_type"))),
            _is("prev_type", T.TOK_STAR), _is("prev_prev_type", T.TOK_LPAREN), _is("next_type", T.TOK_RPAREN),
            _is("ptr_call_lparen_type", T.TOK_LPAREN), _found("ptr_call_rparen"))),
        *enclosing_function_lookup(functions, num_functions, t),
        Node.if_then(v("is_direct_call"), sparse_record_write(
            out, t, CALL_WORDS, [v("caller_id"), t, Expr.add(t, u(1)), v("args_end")])),
        Node.if_then(v("is_ptr_call"), sparse_record_write(
            out, t, CALL_WORDS, [v("caller_id"), t, v("ptr_call_lparen"), v("ptr_call_rparen")])),
    ]
    return body


def c11_extract_calls(tok_types: str, paren_pairs: str, functions: str, num_tokens: int, num_functions: int,
                      out_calls: str, out_counts: str) -> Program:
    """Sparse ``[caller, name, args_open, args_close]`` records of the call sites; `functions`
    holds `num_functions` dense ``[name, body_open, body_close]`` records."""
    check_len(CALLS_OP_ID, "num_tokens", num_tokens, 1)
    check_len(CALLS_OP_ID, "num_functions", num_functions)
    n, t = u(num_tokens), v("t")
    fn_words = max(num_functions * FUNCTION_WORDS, FUNCTION_WORDS)
    buffers = record_buffers(tok_types, paren_pairs,
                             BufferDecl.storage(functions, 2, BufferAccess.ReadOnly, U32).with_count(fn_words),
                             out_calls, CALL_WORDS, num_tokens, out_counts)
    return threaded_structure_program(
        CALLS_OP_ID, buffers, sparse_output_init(out_calls, out_counts, t, n, CALL_WORDS),
        Expr.lt(t, Expr.sub(n, u(1))),
        call_nodes(tok_types, paren_pairs, functions, u(num_functions), out_calls, n, t))


def _build_functions(num_tokens: int = 6) -> Program:
    return c11_extract_functions("tok_types", "paren_pairs", "brace_pairs", num_tokens, "out_functions", "out_counts")


def _build_calls(num_tokens: int = 9, num_functions: int = 1) -> Program:
    return c11_extract_calls("tok_types", "paren_pairs", "functions", num_tokens, num_functions, "out_calls",
                             "out_counts")


_N = MATCH_NONE
# vyre's vectors: `int f() {}` is one function [1, 4, 5]; in `int f() { g();` the call g() at
# token 5 is [caller 0, 5, 6, 7] (function record [1, 4, 8]).
FUNCTIONS_ENTRY = register_case(
    FUNCTIONS_OP_ID, _build_functions,
    [pack_u32_slice([T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_RBRACE]),
     pack_u32_slice([_N, _N, 3, 2, _N, _N]), pack_u32_slice([_N, _N, _N, _N, 5, 4]), bytes(6 * 3 * 4),
     pack_u32_slice([0])],
    [pack_u32_slice([0, 0, 0, 1, 4, 5] + [0] * 12), pack_u32_slice([18])],
    category="parsing", ulp=ULP, bench=dict(num_tokens=1 << 16))
CALLS_ENTRY = register_case(
    CALLS_OP_ID, _build_calls,
    [pack_u32_slice([T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_IDENTIFIER,
                     T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_SEMICOLON]),
     pack_u32_slice([_N, _N, 3, 2, _N, _N, 7, 6, _N]), pack_u32_slice([1, 4, 8]), bytes(9 * 4 * 4),
     pack_u32_slice([0])],
    [pack_u32_slice([0] * 20 + [0, 5, 6, 7] + [0] * 12), pack_u32_slice([36])],
    category="parsing", ulp=ULP, bench=dict(num_tokens=1 << 16, num_functions=1 << 10))
