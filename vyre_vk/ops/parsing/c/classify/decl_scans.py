"""The declaration-prefix scans of the VAST classifier (port of vast/classify/nodes_02.rs,
nodes_03.rs and nodes_04.rs).

A *prefix scan* walks rows ``start .. limit`` in index order and, over the rows whose parent is a
given node (the siblings before some node), tracks whether a declaration prefix is open: a
prefix keyword (or a ``typeof`` / ``__auto_type`` spelling, an aggregate body ``{``, a
typedef-name identifier) opens one, a ``;`` ``{`` ``}`` ``=`` ``:`` closes it. It runs for:

- the parent's siblings before the parent (``parent_has_decl_prefix``), and the grandparent's
  (``parent_parent_has_decl_prefix``), from 0, or the precomputed context's prefix start;
- every ``(`` ancestor up the chain of ``(`` parents (``ancestor_decl_prefix``: any of them);
- node ``t``'s own siblings before it (``has_decl_prefix``), also noting a GNU attribute that
  leads the declaration and the last reset row; then, if one did, whether that attribute list
  names ``constructor`` / ``destructor`` (``decl_ctx_leading_definition_attribute``; vyre computes
  it and no rule reads it).

Plus the kind of ``{`` the parent is (``struct``/``union`` body, ``enum`` body), found by walking
the parent's previous siblings back to ``struct``/``union``/``enum`` or a ``;`` ``=`` ``,``.

Example::

    >>> [n.name for n in prefix_scan("vast", "p", "p_scan", Expr.u32(0), Expr.u32(4), "want", "has", "pk", "ppk")
    ...  .body[:5]]
    ['p_base', 'p_kind', 'p_typedef_flags', 'p_symbol_hash', 'p_parent']
"""
from __future__ import annotations

from typing import Optional, Sequence

from .....ir import Expr, Node
from ...common import u, v
from ...sema import vast_kinds as K
from .. import tokens as T
from ..structure import flag
from .context import FLAGS, PARENT, PREV_SIBLING, SYMBOL, let, row, valid, word
from .predicates import (SENTINEL, any_token_eq, c_attribute_kind_from_hash, is_aggregate_specifier_body_open,
                         is_decl_prefix_reset_token, is_decl_prefix_token_or_gnu_type_hash,
                         is_typedef_name_annotation)

VAST_DECL_CONTEXT_STRIDE_U32 = 4
VAST_DECL_CONTEXT_PREFIX_START_FIELD = 0
#: Kinds that start a declaration scan (identifiers and what may begin or follow a declarator).
DECLARATOR_TRIGGER_TOKENS = [T.TOK_IDENTIFIER, T.TOK_STAR, T.TOK_LBRACKET, T.TOK_LPAREN, T.TOK_LBRACE,
                             T.TOK_ASSIGN, T.TOK_COLON]


def _is_prefix(kind: str, symbol: str, flags: str, aggregate: str) -> Expr:
    return Expr.or_(is_decl_prefix_token_or_gnu_type_hash(v(kind), v(symbol)), Expr.or_(
        v(aggregate), Expr.and_(Expr.eq(v(kind), u(T.TOK_IDENTIFIER)), is_typedef_name_annotation(v(flags)))))


def prefix_scan(vast: str, prefix: str, loop_var: str, start: Expr, limit: Expr, parent: str, has: str,
                prev_kind: str, prev_prev_kind: str, on_reset: Sequence[Node] = (),
                before_prefix: Sequence[Node] = ()) -> Node:
    """Loop `loop_var` over ``start .. limit``: for rows whose parent equals let `parent`, update
    `has` (0 on a reset token, 1 on a prefix token) and the last two sibling kinds. The row's words
    are lets ``{prefix}_base / _kind / _typedef_flags / _symbol_hash / _parent``."""
    base, kind, flags, symbol = (f"{prefix}_{s}" for s in ("base", "kind", "typedef_flags", "symbol_hash"))
    aggregate = f"{prefix}_aggregate_body_open"
    return Node.loop_for(loop_var, start, limit, [
        let(base, row(v(loop_var))),
        let(kind, word(vast, v(base), 0)),
        let(flags, word(vast, v(base), FLAGS)),
        let(symbol, word(vast, v(base), SYMBOL)),
        let(f"{prefix}_parent", word(vast, v(base), PARENT)),
        Node.if_then(Expr.eq(v(f"{prefix}_parent"), v(parent)), [
            let(aggregate, is_aggregate_specifier_body_open(v(kind), v(prev_kind), v(prev_prev_kind))),
            Node.if_then(is_decl_prefix_reset_token(v(kind)), [Node.assign(has, u(0)), *on_reset]),
            *before_prefix,
            Node.if_then(_is_prefix(kind, symbol, flags, aggregate), [Node.assign(has, u(1))]),
            Node.assign(prev_prev_kind, v(prev_kind)),
            Node.assign(prev_kind, v(kind)),
        ]),
    ])


def _context_start(decl_contexts: Optional[str], node: Expr) -> Expr:
    """Where a prefix scan may start: the precomputed prefix start of `node`, else row 0."""
    if decl_contexts is None:
        return u(0)
    return Expr.load(decl_contexts, Expr.add(Expr.mul(node, u(VAST_DECL_CONTEXT_STRIDE_U32)),
                                             u(VAST_DECL_CONTEXT_PREFIX_START_FIELD)))


def parent_scans(vast: str, decl_contexts: Optional[str]) -> list[Node]:
    """nodes_02.rs: the parent's and the grandparent's prefix scans."""
    needed = "parent_decl_prefix_scan_needed"
    return [
        let("parent_ctx_scan_start", _context_start(decl_contexts, v("safe_cur_parent_idx"))),
        let("parent_parent_ctx_scan_start", _context_start(decl_contexts, v("cur_parent_parent_safe_idx"))),
        let(needed, any_token_eq(v("raw_kind"), DECLARATOR_TRIGGER_TOKENS)),
        Node.if_then(v(needed), [prefix_scan(
            vast, "parent_ctx", "parent_ctx_scan", v("parent_ctx_scan_start"), v("parent_ctx_scan_limit"),
            "cur_parent_parent", "parent_has_decl_prefix", "parent_prev_kind", "parent_prev_prev_kind")]),
        let("parent_parent_prev_kind", u(SENTINEL)),
        let("parent_parent_prev_prev_kind", u(SENTINEL)),
        let("parent_parent_has_decl_prefix", u(0)),
        Node.if_then(Expr.and_(v(needed), v("cur_parent_parent_valid")), [prefix_scan(
            vast, "parent_parent_ctx", "parent_parent_ctx_scan", v("parent_parent_ctx_scan_start"),
            v("cur_parent_parent"), "cur_parent_parent_parent", "parent_parent_has_decl_prefix",
            "parent_parent_prev_kind", "parent_parent_prev_prev_kind")]),
        let("ancestor_decl_prefix", u(0)),
        let("decl_ancestor", v("cur_parent")),
        let("decl_ancestor_active", Expr.select(v(needed), u(1), u(0))),
    ]


def ancestor_scan(vast: str, n: Expr) -> Node:
    """nodes_03.rs: up the chain of ``(`` ancestors (at most `n` steps), a prefix scan of each
    one's earlier siblings; any open prefix sets ``ancestor_decl_prefix``."""
    active = flag("decl_ancestor_active")
    step = [
        let("decl_ancestor_base", row(v("decl_ancestor"))),
        let("decl_ancestor_kind", word(vast, v("decl_ancestor_base"), 0)),
        let("decl_ancestor_parent", word(vast, v("decl_ancestor_base"), PARENT)),
        Node.if_then(Expr.ne(v("decl_ancestor_kind"), u(T.TOK_LPAREN)), [Node.assign("decl_ancestor_active", u(0))]),
        Node.if_then(Expr.and_(active, Expr.eq(v("decl_ancestor_kind"), u(T.TOK_LPAREN))), [
            let("ancestor_prev_kind", u(SENTINEL)),
            let("ancestor_prev_prev_kind", u(SENTINEL)),
            let("ancestor_has_decl_prefix", u(0)),
            prefix_scan(vast, "ancestor_ctx", "ancestor_ctx_scan", u(0), v("decl_ancestor"), "decl_ancestor_parent",
                        "ancestor_has_decl_prefix", "ancestor_prev_kind", "ancestor_prev_prev_kind"),
            Node.if_then(flag("ancestor_has_decl_prefix"), [Node.assign("ancestor_decl_prefix", u(1))]),
        ]),
        Node.if_then(active, [Node.assign("decl_ancestor", v("decl_ancestor_parent"))]),
    ]
    return Node.if_then(active, [Node.loop_for("decl_ancestor_depth", u(0), n, [
        Node.if_then(Expr.and_(active, valid("decl_ancestor", n)), step)])])


def _set_open(record: int, enum: int) -> list[Node]:
    return [Node.assign("parent_open_record_prefix", u(record)), Node.assign("parent_open_enum_prefix", u(enum)),
            Node.assign("parent_open_ctx_done", u(1))]


def parent_open_kind(vast: str, n: Expr) -> list[Node]:
    """nodes_03.rs: for a ``{`` parent, whether ``struct``/``union`` or ``enum`` opened it."""
    cursor = "parent_open_ctx_cursor"
    kind = v("parent_open_ctx_kind")
    walk = [
        let("parent_open_ctx_cursor_valid", valid(cursor, n)),
        let("parent_open_ctx_safe_cursor", Expr.select(v("parent_open_ctx_cursor_valid"), v(cursor), u(0))),
        let("parent_open_ctx_base", row(v("parent_open_ctx_safe_cursor"))),
        let("parent_open_ctx_kind", word(vast, v("parent_open_ctx_base"), 0)),
        Node.if_then(v("parent_open_ctx_cursor_valid"), [
            Node.if_then(any_token_eq(kind, [T.TOK_SEMICOLON, T.TOK_ASSIGN, T.TOK_COMMA]), _set_open(0, 0)),
            Node.if_then(any_token_eq(kind, [T.TOK_STRUCT, T.TOK_UNION]), _set_open(1, 0)),
            Node.if_then(Expr.eq(kind, u(T.TOK_ENUM)), _set_open(0, 1)),
            Node.assign(cursor, word(vast, v("parent_open_ctx_base"), PREV_SIBLING)),
        ]),
        Node.if_then(Expr.not_(v("parent_open_ctx_cursor_valid")), [Node.assign("parent_open_ctx_done", u(1))]),
    ]
    brace_parent = Expr.and_(v("cur_parent_valid"), Expr.eq(v("cur_parent_kind"), u(T.TOK_LBRACE)))
    return [
        let("parent_open_record_prefix", u(0)),
        let("parent_open_enum_prefix", u(0)),
        Node.if_then(brace_parent, [
            let(cursor, word(vast, v("cur_parent_base"), PREV_SIBLING)),
            let("parent_open_ctx_done", u(0)),
            Node.loop_for("parent_open_ctx_scan", u(0), v("cur_parent"), [
                Node.if_then(Expr.eq(v("parent_open_ctx_done"), u(0)), walk)]),
        ]),
        let("parent_is_record_body", Expr.and_(brace_parent, flag("parent_open_record_prefix"))),
        let("parent_is_enum_body", Expr.and_(brace_parent, flag("parent_open_enum_prefix"))),
        let("identifier_then_paren", Expr.and_(Expr.and_(Expr.eq(v("raw_kind"), u(T.TOK_IDENTIFIER)), v("next_valid")),
                                               Expr.eq(v("next_kind"), u(T.TOK_LPAREN)))),
    ]


def own_scan_lets(decl_contexts: Optional[str], t: Expr) -> list[Node]:
    """nodes_03.rs: the state of node t's own prefix scan and of the declarator suffix scan."""
    return [
        let("has_decl_prefix", u(0)),
        let("decl_ctx_leading_gnu_attribute", u(0)),
        let("decl_ctx_last_reset_idx", u(SENTINEL)),
        let("last_decl_ctx_kind", u(SENTINEL)),
        let("prev_decl_ctx_kind", u(SENTINEL)),
        let("suffix_has_gnu_attribute", u(0)),
        let("suffix_boundary", u(0)),
        let("suffix_boundary_kind", u(SENTINEL)),
        let("needs_decl_context", any_token_eq(v("raw_kind"), DECLARATOR_TRIGGER_TOKENS)),
        let("decl_ctx_scan_start", _context_start(decl_contexts, t)),
    ]


def all_three(a: Expr, b: Expr, c: Expr) -> Expr:
    return Expr.and_(a, Expr.and_(b, c))


def own_scan(vast: str, t: Expr) -> Node:
    """nodes_04.rs: node t's own prefix scan (its siblings before it)."""
    last = v("last_decl_ctx_kind")
    leading_attribute = Node.if_then(all_three(
        Expr.eq(v("decl_ctx_kind"), u(T.TOK_GNU_ATTRIBUTE)), Expr.eq(v("has_decl_prefix"), u(0)),
        Expr.or_(Expr.eq(last, u(SENTINEL)), is_decl_prefix_reset_token(last))),
        [Node.assign("decl_ctx_leading_gnu_attribute", u(1))])
    return Node.if_then(v("needs_decl_context"), [prefix_scan(
        vast, "decl_ctx", "decl_ctx_scan", v("decl_ctx_scan_start"), t, "cur_parent", "has_decl_prefix",
        "last_decl_ctx_kind", "prev_decl_ctx_kind",
        on_reset=[Node.assign("decl_ctx_leading_gnu_attribute", u(0)),
                  Node.assign("decl_ctx_last_reset_idx", v("decl_ctx_scan"))],
        before_prefix=[leading_attribute])])


def leading_definition_attribute(vast: str, n: Expr, t: Expr) -> list[Node]:
    """nodes_04.rs: with a leading GNU attribute, whether an attribute name after the last reset
    is ``constructor``/``destructor`` inside ``__attribute__((..))`` (vyre computes the flag and
    no later rule reads it; kept for parity of the program)."""
    base, parent_base = v("decl_ctx_attr_base"), v("decl_ctx_attr_parent_base")
    clamp = lambda cond, idx: row(Expr.select(v(cond), v(idx), t))  # noqa: E731
    name = [
        let("decl_ctx_attr_parent", word(vast, base, PARENT)),
        let("decl_ctx_attr_parent_valid", valid("decl_ctx_attr_parent", n)),
        let("decl_ctx_attr_parent_base", clamp("decl_ctx_attr_parent_valid", "decl_ctx_attr_parent")),
        let("decl_ctx_attr_parent_kind",
            Expr.select(v("decl_ctx_attr_parent_valid"), word(vast, parent_base, 0), u(0))),
        let("decl_ctx_attr_parent_parent",
            Expr.select(v("decl_ctx_attr_parent_valid"), word(vast, parent_base, PARENT), u(SENTINEL))),
        let("decl_ctx_attr_parent_parent_valid", valid("decl_ctx_attr_parent_parent", n)),
        let("decl_ctx_attr_parent_parent_base",
            clamp("decl_ctx_attr_parent_parent_valid", "decl_ctx_attr_parent_parent")),
        let("decl_ctx_attr_parent_parent_kind", Expr.select(
            v("decl_ctx_attr_parent_parent_valid"), word(vast, v("decl_ctx_attr_parent_parent_base"), 0), u(0))),
        let("decl_ctx_attr_grandparent", Expr.select(
            v("decl_ctx_attr_parent_parent_valid"), word(vast, v("decl_ctx_attr_parent_parent_base"), PARENT),
            u(SENTINEL))),
        let("decl_ctx_attr_prefix_kind", u(SENTINEL)),
        # the last earlier row sharing the grandparent: what precedes the outer `(`
        Node.loop_for("decl_ctx_attr_prev_scan", u(0), Expr.select(
            v("decl_ctx_attr_parent_parent_valid"), v("decl_ctx_attr_parent_parent"), u(0)), [
            let("decl_ctx_attr_prev_base", row(v("decl_ctx_attr_prev_scan"))),
            let("decl_ctx_attr_prev_parent", word(vast, v("decl_ctx_attr_prev_base"), PARENT)),
            Node.if_then(Expr.eq(v("decl_ctx_attr_prev_parent"), v("decl_ctx_attr_grandparent")), [
                Node.assign("decl_ctx_attr_prefix_kind", word(vast, v("decl_ctx_attr_prev_base"), 0))]),
        ]),
        let("decl_ctx_attr_symbol", word(vast, base, SYMBOL)),
        let("decl_ctx_attr_specific_kind", Expr.select(
            Expr.eq(v("decl_ctx_attr_kind"), u(T.TOK_CONST)), u(K.C_AST_KIND_ATTRIBUTE_CONST),
            c_attribute_kind_from_hash(v("decl_ctx_attr_symbol")))),
        Node.if_then(Expr.and_(
            Expr.and_(Expr.eq(v("decl_ctx_attr_parent_kind"), u(T.TOK_LPAREN)),
                      Expr.eq(v("decl_ctx_attr_parent_parent_kind"), u(T.TOK_LPAREN))),
            Expr.and_(Expr.eq(v("decl_ctx_attr_prefix_kind"), u(T.TOK_GNU_ATTRIBUTE)), any_token_eq(
                v("decl_ctx_attr_specific_kind"),
                [K.C_AST_KIND_ATTRIBUTE_CONSTRUCTOR, K.C_AST_KIND_ATTRIBUTE_DESTRUCTOR]))),
            [Node.assign("decl_ctx_leading_definition_attribute", u(1))]),
    ]
    after_reset = Expr.or_(Expr.eq(v("decl_ctx_last_reset_idx"), u(SENTINEL)),
                           Expr.gt(v("decl_ctx_attr_scan"), v("decl_ctx_last_reset_idx")))
    return [
        let("decl_ctx_leading_definition_attribute", u(0)),
        Node.if_then(flag("decl_ctx_leading_gnu_attribute"), [Node.loop_for(
            "decl_ctx_attr_scan", v("decl_ctx_scan_start"), t, [
                let("decl_ctx_attr_after_reset", after_reset),
                Node.if_then(v("decl_ctx_attr_after_reset"), [
                    let("decl_ctx_attr_base", row(v("decl_ctx_attr_scan"))),
                    let("decl_ctx_attr_kind", word(vast, base, 0)),
                    Node.if_then(any_token_eq(v("decl_ctx_attr_kind"), [T.TOK_IDENTIFIER, T.TOK_CONST]), name),
                ]),
            ])]),
    ]
