"""The neighbourhood lets of the VAST classifier (port of vast/classify/nodes_00.rs and
nodes_01.rs): node ``t``'s kind and links, and the kind / flag / hash words of its previous
siblings, first child, raw (index) neighbours, next siblings, parent, grandparent and their
siblings, plus the asm colon count.

A link is *valid* when it is ``< num_nodes``; vyre reads a linked row through a base clamped to
row ``t`` when the link is invalid and selects a default (0 or SENTINEL) for its words, and these
lets keep vyre's names and defaults. One vyre quirk is kept: ``prev_sibling_first_child_idx`` is
read through that clamped base, so with no previous sibling it is ``t``'s own first child.

Example::

    >>> lets = neighbour_lets("vast", Expr.u32(9), Expr.gid_x(), Expr.u32(0))
    >>> [n.name for n in lets[:4]]
    ['raw_kind', 'current_symbol_hash', 'cur_parent', 'prev_sibling_idx']
"""
from __future__ import annotations

from .....ir import Expr, Node
from ...common import u, v
from .. import tokens as T
from .predicates import SENTINEL, any_token_eq

STRIDE = 10  # VAST_NODE_STRIDE_U32
# VAST_TYPEDEF_FLAGS_FIELD, VAST_TYPEDEF_SYMBOL_FIELD, VAST_PREVIOUS_SIBLING_FIELD
FLAGS, SYMBOL, PREV_SIBLING = 7, 9, 4
PARENT, FIRST_CHILD, NEXT_SIBLING = 1, 2, 3


def word(vast: str, base: Expr, field: int) -> Expr:
    """``vast[base + field]`` (``vast[base]`` for the kind word)."""
    return Expr.load(vast, base if field == 0 else Expr.add(base, u(field)))


def row(index: Expr) -> Expr:
    return Expr.mul(index, u(STRIDE))


def let(name: str, value: Expr) -> Node:
    return Node.let_bind(name, value)


def valid(name: str, n: Expr) -> Expr:
    return Expr.lt(v(name), n)


def guarded(cond: str, value: Expr, default: int) -> Expr:
    return Expr.select(v(cond), value, u(default))


def asm_prefix_before_parent() -> Expr:
    """The parent ``(`` follows ``asm``, ``asm volatile``/``asm goto`` or ``volatile goto``."""
    ps, pps = v("cur_parent_prev_sibling_kind"), v("cur_parent_prev_prev_sibling_kind")
    return Expr.or_(Expr.eq(ps, u(T.TOK_GNU_ASM)), Expr.or_(
        Expr.and_(any_token_eq(ps, [T.TOK_VOLATILE, T.TOK_GOTO]), Expr.eq(pps, u(T.TOK_GNU_ASM))),
        Expr.and_(Expr.eq(ps, u(T.TOK_GOTO)), Expr.eq(pps, u(T.TOK_VOLATILE)))))


def _own_and_siblings(vast: str, n: Expr, t: Expr, base: Expr) -> list[Node]:
    """nodes_00.rs: own words, previous siblings, first child, raw neighbours, next siblings."""
    w = lambda b, f: word(vast, v(b), f)  # noqa: E731 (a word of the row at let `b`)
    return [
        let("raw_kind", word(vast, base, 0)),
        let("current_symbol_hash", word(vast, base, SYMBOL)),
        let("cur_parent", word(vast, base, PARENT)),
        let("prev_sibling_idx", word(vast, base, PREV_SIBLING)),
        let("prev_sibling_valid_direct", valid("prev_sibling_idx", n)),
        let("prev_sibling_base_direct", row(Expr.select(v("prev_sibling_valid_direct"), v("prev_sibling_idx"), t))),
        let("prev_sibling_kind", guarded("prev_sibling_valid_direct", w("prev_sibling_base_direct", 0), SENTINEL)),
        let("prev_sibling_symbol_hash", guarded("prev_sibling_valid_direct", w("prev_sibling_base_direct", SYMBOL), 0)),
        let("prev_prev_sibling_idx",
            guarded("prev_sibling_valid_direct", w("prev_sibling_base_direct", PREV_SIBLING), SENTINEL)),
        let("prev_prev_sibling_valid", valid("prev_prev_sibling_idx", n)),
        let("prev_prev_sibling_kind",
            guarded("prev_prev_sibling_valid", word(vast, row(v("prev_prev_sibling_idx")), 0), SENTINEL)),
        let("first_child_idx", word(vast, base, FIRST_CHILD)),
        let("first_child_valid", valid("first_child_idx", n)),
        let("safe_first_child_idx", Expr.select(v("first_child_valid"), v("first_child_idx"), t)),
        let("first_child_base", row(v("safe_first_child_idx"))),
        let("first_child_kind", guarded("first_child_valid", w("first_child_base", 0), 0)),
        let("first_child_typedef_flags", guarded("first_child_valid", w("first_child_base", FLAGS), 0)),
        let("first_child_symbol_hash", guarded("first_child_valid", w("first_child_base", SYMBOL), 0)),
        let("raw_next_idx", Expr.add(t, u(1))),
        let("raw_next_valid", valid("raw_next_idx", n)),
        let("raw_next_base", row(Expr.select(v("raw_next_valid"), v("raw_next_idx"), t))),
        let("raw_next_kind", guarded("raw_next_valid", w("raw_next_base", 0), 0)),
        let("raw_next_typedef_flags", guarded("raw_next_valid", w("raw_next_base", FLAGS), 0)),
        let("raw_after_next_idx", Expr.add(t, u(2))),
        let("raw_after_next_valid", valid("raw_after_next_idx", n)),
        let("raw_after_next_kind", guarded("raw_after_next_valid", word(vast, row(v("raw_after_next_idx")), 0), 0)),
        let("raw_after_after_idx", Expr.add(t, u(3))),
        let("raw_after_after_valid", valid("raw_after_after_idx", n)),
        let("raw_after_after_kind",
            guarded("raw_after_after_valid", word(vast, row(v("raw_after_after_idx")), 0), 0)),
        let("next_idx", word(vast, base, NEXT_SIBLING)),
        let("next_valid", valid("next_idx", n)),
        let("safe_next_idx", Expr.select(v("next_valid"), v("next_idx"), t)),
        let("next_base", row(v("safe_next_idx"))),
        let("next_kind", guarded("next_valid", w("next_base", 0), 0)),
        let("after_param_idx", guarded("next_valid", w("next_base", NEXT_SIBLING), SENTINEL)),
        let("after_param_valid", valid("after_param_idx", n)),
        let("after_param_kind", guarded("after_param_valid", word(vast, row(v("after_param_idx")), 0), 0)),
        let("prev_sibling_valid", valid("prev_sibling_idx", n)),
        let("safe_prev_sibling_idx", Expr.select(v("prev_sibling_valid"), v("prev_sibling_idx"), t)),
        let("prev_sibling_base", row(v("safe_prev_sibling_idx"))),
        let("prev_sibling_first_child_idx", w("prev_sibling_base", FIRST_CHILD)),  # unguarded, as in vyre
        let("prev_sibling_first_child_valid", valid("prev_sibling_first_child_idx", n)),
        let("safe_prev_sibling_first_child_idx",
            Expr.select(v("prev_sibling_first_child_valid"), v("prev_sibling_first_child_idx"), t)),
        let("prev_sibling_first_child_base", row(v("safe_prev_sibling_first_child_idx"))),
        let("prev_sibling_first_child_kind",
            guarded("prev_sibling_first_child_valid", w("prev_sibling_first_child_base", 0), 0)),
        let("prev_sibling_typedef_flags", guarded("prev_sibling_valid", w("prev_sibling_base", FLAGS), 0)),
    ]


def _parents(vast: str, n: Expr, t: Expr) -> list[Node]:
    """nodes_01.rs (first half): the parent, grandparent and their previous siblings."""
    w = lambda b, f: word(vast, v(b), f)  # noqa: E731
    return [
        let("prev_sibling_first_child_typedef_flags",
            guarded("prev_sibling_first_child_valid", w("prev_sibling_first_child_base", FLAGS), 0)),
        let("prev_sibling_first_child_symbol_hash",
            guarded("prev_sibling_first_child_valid", w("prev_sibling_first_child_base", SYMBOL), 0)),
        let("cur_parent_valid", valid("cur_parent", n)),
        let("safe_cur_parent_idx", Expr.select(v("cur_parent_valid"), v("cur_parent"), t)),
        let("cur_parent_base", row(v("safe_cur_parent_idx"))),
        let("cur_parent_kind", guarded("cur_parent_valid", w("cur_parent_base", 0), 0)),
        let("cur_parent_parent", guarded("cur_parent_valid", w("cur_parent_base", PARENT), SENTINEL)),
        let("cur_parent_parent_valid", valid("cur_parent_parent", n)),
        let("cur_parent_parent_base", row(Expr.select(v("cur_parent_parent_valid"), v("cur_parent_parent"), t))),
        let("cur_parent_parent_kind", guarded("cur_parent_parent_valid", w("cur_parent_parent_base", 0), 0)),
        let("cur_parent_parent_symbol_hash",
            guarded("cur_parent_parent_valid", w("cur_parent_parent_base", SYMBOL), 0)),
        let("cur_parent_parent_parent",
            guarded("cur_parent_parent_valid", w("cur_parent_parent_base", PARENT), SENTINEL)),
        let("cur_parent_prev_sibling_idx", guarded("cur_parent_valid", w("cur_parent_base", PREV_SIBLING), SENTINEL)),
        let("cur_parent_prev_sibling_valid", valid("cur_parent_prev_sibling_idx", n)),
        let("cur_parent_prev_sibling_base",
            row(Expr.select(v("cur_parent_prev_sibling_valid"), v("cur_parent_prev_sibling_idx"), t))),
        let("cur_parent_prev_sibling_kind",
            guarded("cur_parent_prev_sibling_valid", w("cur_parent_prev_sibling_base", 0), SENTINEL)),
        let("cur_parent_prev_prev_sibling_idx",
            guarded("cur_parent_prev_sibling_valid", w("cur_parent_prev_sibling_base", PREV_SIBLING), SENTINEL)),
        let("cur_parent_prev_prev_sibling_valid", valid("cur_parent_prev_prev_sibling_idx", n)),
        let("cur_parent_prev_prev_sibling_kind", guarded(
            "cur_parent_prev_prev_sibling_valid", word(vast, row(v("cur_parent_prev_prev_sibling_idx")), 0), SENTINEL)),
        let("cur_parent_parent_safe_idx", Expr.select(v("cur_parent_parent_valid"), v("cur_parent_parent"), t)),
        let("cur_grandparent_prev_sibling_idx",
            guarded("cur_parent_parent_valid", w("cur_parent_parent_base", PREV_SIBLING), SENTINEL)),
        let("cur_grandparent_prev_sibling_valid", valid("cur_grandparent_prev_sibling_idx", n)),
        let("cur_grandparent_prev_sibling_kind", guarded(
            "cur_grandparent_prev_sibling_valid", word(vast, row(v("cur_grandparent_prev_sibling_idx")), 0), SENTINEL)),
        # the row just before the grandparent (by index, not by sibling link)
        let("cur_parent_parent_prev_adjacent_valid",
            Expr.and_(v("cur_parent_parent_valid"), Expr.gt(v("cur_parent_parent"), u(0)))),
        let("cur_parent_parent_prev_adjacent_base", row(Expr.select(
            v("cur_parent_parent_prev_adjacent_valid"), Expr.sub(v("cur_parent_parent"), u(1)), t))),
        let("cur_parent_parent_prev_adjacent_kind", guarded(
            "cur_parent_parent_prev_adjacent_valid", w("cur_parent_parent_prev_adjacent_base", 0), SENTINEL)),
    ]


def _colon_count(vast: str, n: Expr, t: Expr, base: Expr) -> list[Node]:
    """nodes_01.rs: inside an asm ``( .. )``, the ``:`` among the previous siblings (walked along
    the previous-sibling links, at most ``t`` steps)."""
    cursor = "colon_count_cursor"
    scan = [
        let("colon_count_cursor_valid", valid(cursor, n)),
        let("colon_count_safe_cursor", Expr.select(v("colon_count_cursor_valid"), v(cursor), u(0))),
        let("colon_count_scan_base", row(v("colon_count_safe_cursor"))),
        let("colon_count_scan_kind", word(vast, v("colon_count_scan_base"), 0)),
        Node.if_then(Expr.and_(v("colon_count_cursor_valid"), Expr.eq(v("colon_count_scan_kind"), u(T.TOK_COLON))),
                     [Node.assign("colon_count_before", Expr.add(v("colon_count_before"), u(1)))]),
        Node.assign(cursor, guarded("colon_count_cursor_valid",
                                    word(vast, v("colon_count_scan_base"), PREV_SIBLING), SENTINEL)),
    ]
    return [
        let("colon_count_before", u(0)),
        let("colon_count_needed", Expr.and_(
            any_token_eq(v("raw_kind"), [T.TOK_STRING, T.TOK_LPAREN, T.TOK_IDENTIFIER]),
            Expr.and_(Expr.eq(v("cur_parent_kind"), u(T.TOK_LPAREN)), asm_prefix_before_parent()))),
        let(cursor, word(vast, base, PREV_SIBLING)),
        Node.if_then(v("colon_count_needed"), [Node.loop_for("colon_count_scan", u(0), t, scan)]),
    ]


def neighbour_lets(vast: str, n: Expr, t: Expr, base: Expr) -> list[Node]:
    """Every let of nodes_00.rs and nodes_01.rs, in vyre's order (``base`` = ``t * 10``)."""
    w = lambda b, f: word(vast, v(b), f)  # noqa: E731
    return _own_and_siblings(vast, n, t, base) + _parents(vast, n, t) + _colon_count(vast, n, t, base) + [
        let("cur_parent_next_idx", guarded("cur_parent_valid", w("cur_parent_base", NEXT_SIBLING), SENTINEL)),
        let("cur_parent_next_valid", valid("cur_parent_next_idx", n)),
        let("cur_parent_next_kind", guarded("cur_parent_next_valid", word(vast, row(v("cur_parent_next_idx")), 0), 0)),
        let("parent_prev_kind", u(SENTINEL)),
        let("parent_prev_prev_kind", u(SENTINEL)),
        let("parent_has_decl_prefix", u(0)),
        let("parent_ctx_scan_limit", Expr.select(v("cur_parent_valid"), v("cur_parent"), u(0))),
    ]
