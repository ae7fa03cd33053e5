"""The typedef fallback and declarator-suffix lets of the VAST classifier (port of
vast/classify/nodes_05.rs and nodes_06.rs).

Without typedef annotations (VAST word 7 all zero) vyre guesses whether an identifier may name a
type: a ``typedef`` earlier in the stream, no ordinary declaration earlier (``T x;`` shapes or
a row flagged ORDINARY_DECLARATOR) and no earlier ``( id ) ..;`` statement that makes ``(a)*b``
a multiplication (``fallback_has_prior_typedef``). The suffix scan follows the next-sibling links
after a ``name(..)`` or ``(..)`` for at most 16 steps to the ``{`` or ``;`` (or, through a
``)``, the ``(`` ``[`` ``;`` after the enclosing parens) that make it a function declarator.

Example::

    >>> [n.name for n in typedef_lets("vast", Expr.u32(9), Expr.gid_x(), False)[:3]]
    ['in_parenthesized_declarator', 'effective_has_decl_prefix', 'raw_lparen']
"""
from __future__ import annotations

from .....ir import Expr, Node
from ...common import u, v
from .. import tokens as T
from ..structure import flag
from .context import FLAGS, NEXT_SIBLING, PARENT, STRIDE, let, row, word
from .predicates import (SENTINEL, AGGREGATE_TOKENS, all_of, any_token_eq, is_decl_prefix_token,
                         is_type_name_identifier, is_typeof_operator_token)

C_TYPEDEF_FLAG_ORDINARY_DECLARATOR = 1 << 2
#: Kinds that may follow a parenthesised type name in an expression (a cast's operand).
TYPE_NAME_EXPR_FOLLOWERS = [T.TOK_LBRACE, T.TOK_LPAREN, T.TOK_IDENTIFIER, T.TOK_INTEGER, T.TOK_FLOAT, T.TOK_STRING,
                            T.TOK_CHAR, T.TOK_STAR, T.TOK_AMP, T.TOK_PLUS, T.TOK_MINUS, T.TOK_BANG, T.TOK_TILDE,
                            T.TOK_INC, T.TOK_DEC]


def _kind_at(vast: str, base: str, rows_ahead: int) -> Expr:
    """The kind `rows_ahead` rows after the row at let `base` (negative: before)."""
    offset = rows_ahead * STRIDE
    at = v(base) if offset == 0 else Expr.add(v(base), u(offset)) if offset > 0 else Expr.sub(v(base), u(-offset))
    return Expr.load(vast, at)


def _prior_scan_body(vast: str, n: Expr, t: Expr) -> list[Node]:
    """One row `prior_typedef_scan` < t: typedef seen, ordinary declaration seen, ``( id ) ..;``."""
    i, b = v("prior_typedef_scan"), "prior_typedef_base"
    parent = v("prior_scan_parent")
    in_range = Expr.lt(parent, n)
    return [
        let(b, row(i)),
        Node.if_then(Expr.eq(_kind_at(vast, b, 0), u(T.TOK_TYPEDEF)), [Node.assign("has_prior_typedef", u(1))]),
        let("prior_scan_prev_kind", Expr.select(Expr.gt(i, u(0)), _kind_at(vast, b, -1), u(SENTINEL))),
        let("prior_scan_prev_prev_kind", Expr.select(Expr.gt(i, u(1)), _kind_at(vast, b, -2), u(SENTINEL))),
        let("prior_scan_parent", word(vast, v(b), PARENT)),
        let("prior_scan_parent_kind", Expr.select(in_range, word(vast, row(parent), 0), u(SENTINEL))),
        let("prior_scan_parent_prev_kind", Expr.select(Expr.and_(in_range, Expr.gt(parent, u(0))),
                                                       word(vast, row(Expr.sub(parent, u(1))), 0), u(SENTINEL))),
        let("prior_scan_parent_prev_prev_kind", Expr.select(Expr.and_(in_range, Expr.gt(parent, u(1))),
                                                            word(vast, row(Expr.sub(parent, u(2))), 0), u(SENTINEL))),
        let("prior_scan_in_aggregate_body", Expr.and_(
            Expr.eq(v("prior_scan_parent_kind"), u(T.TOK_LBRACE)), Expr.or_(
                any_token_eq(v("prior_scan_parent_prev_kind"), AGGREGATE_TOKENS),
                Expr.and_(Expr.eq(v("prior_scan_parent_prev_kind"), u(T.TOK_IDENTIFIER)),
                          any_token_eq(v("prior_scan_parent_prev_prev_kind"), AGGREGATE_TOKENS))))),
        let("prior_scan_next_kind", Expr.select(Expr.lt(Expr.add(i, u(1)), n), _kind_at(vast, b, 1), u(SENTINEL))),
        # `T x;` / `T x,` / `T x =` / `T x[` outside a struct body, not a typedef's declarator
        Node.if_then(all_of(
            Expr.eq(_kind_at(vast, b, 0), u(T.TOK_IDENTIFIER)), is_decl_prefix_token(v("prior_scan_prev_kind")),
            Expr.ne(v("prior_scan_prev_kind"), u(T.TOK_TYPEDEF)),
            Expr.ne(v("prior_scan_prev_prev_kind"), u(T.TOK_TYPEDEF)),
            Expr.not_(v("prior_scan_in_aggregate_body")),
            any_token_eq(v("prior_scan_next_kind"), [T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_LBRACKET])),
            [Node.assign("has_prior_ordinary_decl", u(1))]),
        # `( id ) x y ;` five rows on, ending before t (raw row neighbours)
        Node.if_then(all_of(
            Expr.lt(Expr.add(i, u(5)), t), Expr.eq(_kind_at(vast, b, 0), u(T.TOK_LPAREN)),
            Expr.eq(_kind_at(vast, b, 1), u(T.TOK_IDENTIFIER)), Expr.eq(_kind_at(vast, b, 2), u(T.TOK_RPAREN)),
            Expr.eq(_kind_at(vast, b, 5), u(T.TOK_SEMICOLON))),
            [Node.assign("has_prior_parenthesized_identifier_statement", u(1))]),
        Node.if_then(Expr.and_(Expr.eq(v("has_typedef_annotations"), u(0)), Expr.eq(
            word(vast, v(b), FLAGS), u(C_TYPEDEF_FLAG_ORDINARY_DECLARATOR))),
            [Node.assign("has_prior_ordinary_decl", u(1))]),
    ]


def typedef_lets(vast: str, n: Expr, t: Expr, typedef_annotations_available: bool) -> list[Node]:
    """nodes_05.rs: the parenthesised-declarator context and the typedef-name fallback."""
    if typedef_annotations_available:
        prior_needed, has_annotations = Expr.eq(u(1), u(0)), u(1)
    else:
        prior_needed = Expr.or_(v("raw_lparen"), Expr.or_(Expr.eq(v("raw_kind"), u(T.TOK_STAR)),
                                                          Expr.eq(v("raw_kind"), u(T.TOK_LBRACE))))
        has_annotations = u(0)
    annotated = Node.if_then(Expr.ne(word(vast, row(v("typedef_annotation_scan")), FLAGS), u(0)),
                             [Node.assign("has_typedef_annotations", u(1))])
    return [
        let("in_parenthesized_declarator", Expr.and_(Expr.eq(v("cur_parent_kind"), u(T.TOK_LPAREN)), Expr.or_(
            flag("parent_has_decl_prefix"), Expr.or_(
                is_typeof_operator_token(v("cur_parent_parent_kind"), v("cur_parent_parent_symbol_hash")),
                Expr.and_(Expr.or_(Expr.eq(v("cur_parent_parent_kind"), u(T.TOK_LPAREN)), flag("ancestor_decl_prefix")),
                          Expr.or_(flag("parent_parent_has_decl_prefix"), flag("ancestor_decl_prefix"))))))),
        let("effective_has_decl_prefix", Expr.select(
            Expr.or_(flag("has_decl_prefix"), v("in_parenthesized_declarator")), u(1), u(0))),
        let("raw_lparen", Expr.eq(v("raw_kind"), u(T.TOK_LPAREN))),
        let("prior_typedef_scan_needed", prior_needed),
        let("has_typedef_annotations", has_annotations),
        let("has_prior_typedef", u(0)),
        let("has_prior_ordinary_decl", u(0)),
        let("has_prior_parenthesized_identifier_statement", u(0)),
        Node.if_then(v("prior_typedef_scan_needed"), [
            Node.loop_for("typedef_annotation_scan", u(0), n, [annotated]),
            Node.loop_for("prior_typedef_scan", u(0), t, _prior_scan_body(vast, n, t)),
        ]),
        let("ambiguous_parenthesized_identifier_multiply", Expr.and_(
            Expr.and_(v("raw_lparen"), Expr.eq(v("next_kind"), u(T.TOK_STAR))),
            flag("has_prior_parenthesized_identifier_statement"))),
        let("fallback_has_prior_typedef", Expr.and_(
            Expr.and_(Expr.eq(v("has_typedef_annotations"), u(0)), flag("has_prior_typedef")),
            Expr.and_(Expr.eq(v("has_prior_ordinary_decl"), u(0)),
                      Expr.not_(v("ambiguous_parenthesized_identifier_multiply"))))),
    ]


def _boundary(kind: str) -> list[Node]:
    return [Node.assign("suffix_boundary", u(1)), Node.assign("suffix_boundary_kind", v(kind))]


def _after_close(vast: str, n: Expr) -> list[Node]:
    """At a ``)``: the kind after its parent ``(``, and if that is a ``)`` the kind after that
    one's parent, decides the boundary when it is ``(`` ``[`` or ``;``."""
    stops = [T.TOK_LPAREN, T.TOK_LBRACKET, T.TOK_SEMICOLON]
    outer = [
        let("suffix_parent_next_parent_base", row(v("suffix_parent_next_parent"))),
        let("suffix_parent_next_parent_next", word(vast, v("suffix_parent_next_parent_base"), NEXT_SIBLING)),
        Node.if_then(Expr.lt(v("suffix_parent_next_parent_next"), n), [
            let("suffix_parent_next_parent_next_kind", word(vast, row(v("suffix_parent_next_parent_next")), 0)),
            Node.if_then(any_token_eq(v("suffix_parent_next_parent_next_kind"), stops),
                         _boundary("suffix_parent_next_parent_next_kind")),
        ]),
    ]
    nested = [
        let("suffix_parent_next_base", row(v("suffix_parent_next"))),
        let("suffix_parent_next_parent", word(vast, v("suffix_parent_next_base"), PARENT)),
        Node.if_then(Expr.lt(v("suffix_parent_next_parent"), n), outer),
    ]
    return [
        let("suffix_scan_parent", word(vast, v("suffix_scan_base"), PARENT)),
        Node.if_then(Expr.lt(v("suffix_scan_parent"), n), [
            let("suffix_parent_base", row(v("suffix_scan_parent"))),
            let("suffix_parent_next", word(vast, v("suffix_parent_base"), NEXT_SIBLING)),
            Node.if_then(Expr.lt(v("suffix_parent_next"), n), [
                let("suffix_parent_next_kind", word(vast, row(v("suffix_parent_next")), 0)),
                Node.if_then(any_token_eq(v("suffix_parent_next_kind"), stops), _boundary("suffix_parent_next_kind")),
                Node.if_then(Expr.and_(Expr.eq(v("suffix_parent_next_kind"), u(T.TOK_RPAREN)),
                                       Expr.eq(v("suffix_boundary"), u(0))), nested),
            ]),
        ]),
    ]


def suffix_lets(vast: str, n: Expr) -> list[Node]:
    """nodes_06.rs: the declarator suffix scan and the type-name-in-parens lets."""
    kind = v("suffix_scan_kind")
    step = [
        let("suffix_scan_base", row(v("suffix_scan_idx"))),
        let("suffix_scan_kind", word(vast, v("suffix_scan_base"), 0)),
        Node.if_then(Expr.eq(kind, u(T.TOK_GNU_ATTRIBUTE)), [Node.assign("suffix_has_gnu_attribute", u(1))]),
        Node.if_then(Expr.or_(Expr.eq(kind, u(T.TOK_LBRACE)), Expr.eq(kind, u(T.TOK_SEMICOLON))),
                     _boundary("suffix_scan_kind")),
        Node.if_then(Expr.eq(kind, u(T.TOK_RPAREN)), _after_close(vast, n)),
        Node.assign("suffix_scan_idx", word(vast, v("suffix_scan_base"), NEXT_SIBLING)),
    ]
    return [
        Node.if_then(Expr.or_(v("identifier_then_paren"), v("raw_lparen")), [
            let("suffix_start_idx", Expr.select(v("identifier_then_paren"), v("after_param_idx"), v("next_idx"))),
            let("suffix_scan_idx", v("after_param_idx")),
            Node.assign("suffix_scan_idx", v("suffix_start_idx")),
            Node.loop_for("suffix_scan_step", u(0), u(16), [Node.if_then(
                Expr.and_(Expr.lt(v("suffix_scan_idx"), n), Expr.eq(v("suffix_boundary"), u(0))), step)]),
        ]),
        let("function_boundary", flag("suffix_boundary")),
        let("type_name_expr_follower", any_token_eq(v("next_kind"), TYPE_NAME_EXPR_FOLLOWERS)),
        let("flat_type_name_expr_follower", any_token_eq(v("raw_after_after_kind"), TYPE_NAME_EXPR_FOLLOWERS)),
        let("identifier_type_name_paren", Expr.and_(
            Expr.and_(v("raw_lparen"), Expr.eq(v("first_child_kind"), u(T.TOK_IDENTIFIER))),
            v("type_name_expr_follower"))),
        # `( T ) x` read off the raw row neighbours: ( at t, a type-name identifier, ), an operand
        let("flat_identifier_type_name_paren", all_of(
            v("raw_lparen"), Expr.eq(v("raw_next_kind"), u(T.TOK_IDENTIFIER)),
            is_type_name_identifier(v("raw_next_typedef_flags"), v("fallback_has_prior_typedef")),
            Expr.eq(v("raw_after_next_kind"), u(T.TOK_RPAREN)), v("flat_type_name_expr_follower"))),
    ]
