"""The IR of vyre's declaration-kind lookup (vyre-libs/src/parsing/c/sema/lookup.rs): per
identifier token, one of DECL_KIND_{NONE, FUNCTION, FUNCTION_DECL, VARIABLE, LABEL, TYPEDEF,
ENUM_CONSTANT} into ``decl_kind``. vyre's emitter reads the buffer named ``tok_types`` whatever
the builder's argument (kept: the registered programs use that name).

Example::

    >>> declaration_lookup_nodes(Expr.gid_x(), Expr.u32(4))[0].name
    'decl_kind'
"""
from __future__ import annotations

from ....ir import Expr, Node
from ..c import tokens as T
from ..common import is_any, u, v
from .scope_ir import (DECL_KIND_ENUM_CONSTANT, DECL_KIND_FUNCTION, DECL_KIND_FUNCTION_DECL, DECL_KIND_LABEL,
                       DECL_KIND_NONE, DECL_KIND_TYPEDEF, DECL_KIND_VARIABLE, DECLARATION_CONTEXT, NONE, TAG_KEYWORDS,
                       forward_matching_paren_scan, post_paren_boundary_scan, reverse_unmatched_lbrace_scan)

TOK = "tok_types"  # lookup.rs hard-codes this buffer name


def _is(name: str, tok: int) -> Expr:
    return Expr.eq(v(name), u(tok))


def _load_if(var: str, cond: Expr, index: Expr) -> Node:
    return Node.if_then(cond, [Node.assign(var, Expr.load(TOK, index))])


def _aggregate_context(node: Expr) -> list[Node]:
    """aggregate_kind: the tag keyword before the enclosing ``{`` (or before its tag name)."""
    ident = _is("tok_type", T.TOK_IDENTIFIER)
    idx = v("aggregate_idx")
    nodes = [Node.let_bind("aggregate_kind", u(0)), Node.let_bind("aggregate_open", u(NONE)),
             Node.let_bind("aggregate_depth", u(0))]
    nodes += reverse_unmatched_lbrace_scan(TOK, "aggregate_scan", "aggregate_idx", "aggregate_tok", "aggregate_depth",
                                           "aggregate_open", node, ident)
    nodes.append(Node.if_then(Expr.and_(ident, Expr.ne(v("aggregate_open"), u(NONE))), [
        Node.let_bind("aggregate_idx", v("aggregate_open")),
        Node.let_bind("aggregate_prev", u(0)),
        Node.let_bind("aggregate_prev_prev", u(0)),
        _load_if("aggregate_prev", Expr.gt(idx, u(0)), Expr.sub(idx, u(1))),
        _load_if("aggregate_prev_prev", Expr.gt(idx, u(1)), Expr.sub(idx, u(2))),
        Node.if_then(is_any(v("aggregate_prev"), TAG_KEYWORDS), [Node.assign("aggregate_kind", v("aggregate_prev"))]),
        Node.if_then(Expr.and_(Expr.eq(v("aggregate_kind"), u(0)), is_any(v("aggregate_prev_prev"), TAG_KEYWORDS)),
                     [Node.assign("aggregate_kind", v("aggregate_prev_prev"))]),
    ]))
    return nodes


def _declaration_flags(node: Expr) -> list[Node]:
    """seen_typedef_in_decl: a ``typedef`` since the last ``;`` or ``{`` before the token."""
    active = Expr.eq(v("decl_prefix_active"), u(1))
    return [
        Node.let_bind("seen_typedef_in_decl", u(0)),
        Node.let_bind("decl_prefix_active", u(1)),
        Node.if_then(_is("tok_type", T.TOK_IDENTIFIER), [Node.loop_for("decl_prefix_scan", u(0), node, [
            Node.let_bind("decl_prefix_idx", Expr.sub(Expr.sub(node, u(1)), v("decl_prefix_scan"))),
            Node.let_bind("decl_prefix_tok", Expr.load(TOK, v("decl_prefix_idx"))),
            Node.if_then(Expr.and_(active, _is("decl_prefix_tok", T.TOK_TYPEDEF)),
                         [Node.assign("seen_typedef_in_decl", u(1))]),
            Node.if_then(Expr.and_(active, Expr.or_(_is("decl_prefix_tok", T.TOK_SEMICOLON),
                                                    _is("decl_prefix_tok", T.TOK_LBRACE))),
                         [Node.assign("decl_prefix_active", u(0))]),
        ])]),
    ]


def _set(kind: int) -> Node:
    return Node.assign("decl_kind", u(kind))


def _function_declarator(node: Expr, n: Expr) -> Node:
    """``name (...)``: a body ``{`` after the ``)`` makes a definition; otherwise a prototype or
    typedef by the token before the name."""
    start = Expr.add(node, u(2))
    body = forward_matching_paren_scan(TOK, "paren_idx", start, n, "paren_tok", "paren_depth", "matching_rparen",
                                       Expr.lt(start, n))
    after = post_paren_boundary_scan(TOK, "after_paren_scan", "after_scan_tok", "after_scan_active",
                                     v("matching_rparen"), n, "after_matching_paren", "after_matching_paren_idx")
    typedef = _is("prev_tok", T.TOK_TYPEDEF)
    after.append(Node.if_then_else(
        _is("after_matching_paren", T.TOK_LBRACE), [_set(DECL_KIND_FUNCTION)],
        [Node.if_then_else(is_any(v("prev_tok"), DECLARATION_CONTEXT),
                           [Node.if_then_else(typedef, [_set(DECL_KIND_TYPEDEF)], [_set(DECL_KIND_FUNCTION_DECL)])],
                           [Node.if_then(typedef, [_set(DECL_KIND_TYPEDEF)])])]))
    body.append(Node.if_then(Expr.ne(v("matching_rparen"), u(NONE)), after))
    return Node.if_then(_is("next_tok", T.TOK_LPAREN), body)


def declaration_lookup_nodes(node: Expr, n: Expr) -> list[Node]:
    """lookup.rs emit_declaration_lookup (reads ``tok_type``, binds ``decl_kind``)."""
    nodes = [
        Node.let_bind("decl_kind", u(DECL_KIND_NONE)),
        Node.let_bind("prev_idx", u(NONE)), Node.let_bind("next_idx", u(NONE)),
        Node.let_bind("prev_tok", u(0)), Node.let_bind("next_tok", u(0)),
        Node.if_then(Expr.gt(node, u(0)), [Node.assign("prev_idx", Expr.sub(node, u(1)))]),
        Node.if_then(Expr.lt(Expr.add(node, u(1)), n), [Node.assign("next_idx", Expr.add(node, u(1)))]),
        _load_if("prev_tok", Expr.ne(v("prev_idx"), u(NONE)), v("prev_idx")),
        _load_if("next_tok", Expr.ne(v("next_idx"), u(NONE)), v("next_idx")),
        # emit_neighbor_tokens: bound but never read by the classifier (kept as in vyre)
        Node.let_bind("prev_prev_tok", u(0)),
        _load_if("prev_prev_tok", Expr.gt(node, u(1)), Expr.sub(node, u(2))),
        Node.let_bind("next_next_tok", u(0)),
        _load_if("next_next_tok", Expr.lt(Expr.add(node, u(2)), n), Expr.add(node, u(2))),
    ]
    nodes += _aggregate_context(node) + _declaration_flags(node)
    enum_const = Expr.and_(Expr.eq(v("aggregate_kind"), u(T.TOK_ENUM)), Expr.or_(
        Expr.or_(_is("prev_tok", T.TOK_LBRACE), _is("prev_tok", T.TOK_COMMA)),
        Expr.or_(_is("next_tok", T.TOK_COMMA), Expr.or_(_is("next_tok", T.TOK_ASSIGN), _is("next_tok", T.TOK_RBRACE)))))
    other_aggregate = Expr.and_(Expr.ne(v("aggregate_kind"), u(0)), Expr.ne(v("aggregate_kind"), u(T.TOK_ENUM)))
    fallback = Node.if_then(Expr.eq(v("decl_kind"), u(DECL_KIND_NONE)), [Node.if_then_else(
        Expr.or_(_is("prev_tok", T.TOK_TYPEDEF), Expr.eq(v("seen_typedef_in_decl"), u(1))), [_set(DECL_KIND_TYPEDEF)],
        [Node.if_then(is_any(v("prev_tok"), DECLARATION_CONTEXT), [_set(DECL_KIND_VARIABLE)])])])
    label = Expr.and_(_is("next_tok", T.TOK_COLON), Expr.and_(Expr.ne(v("prev_tok"), u(T.TOK_CASE)),
                                                              Expr.ne(v("prev_tok"), u(T.TOK_GOTO))))
    nodes.append(Node.if_then(_is("tok_type", T.TOK_IDENTIFIER), [Node.if_then_else(label, [_set(DECL_KIND_LABEL)], [
        Node.if_then_else(is_any(v("prev_tok"), TAG_KEYWORDS), [_set(DECL_KIND_NONE)], [
            Node.if_then_else(enum_const, [_set(DECL_KIND_ENUM_CONSTANT)], [
                Node.if_then_else(other_aggregate, [_set(DECL_KIND_NONE)],
                                  [_function_declarator(node, n), fallback])])])])]))
    return nodes
