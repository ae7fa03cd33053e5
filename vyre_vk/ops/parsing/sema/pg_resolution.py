"""The resolved semantic edge slots of the AST-to-PG lowering (vyre-libs/src/parsing/c/lower/
semantic_edges/{gpu_helpers, gpu_resolution}.rs): goto -> label, switch -> selector, case ->
value, enclosing switch -> case/default, into ``semantic_edge{3,4}_{has,kind,src,dst}``. The
rules are stated in pg_semantic.py.

Example::

    >>> valid(Expr.var("i"), Expr.u32(4)).op.name
    'And'
"""
from __future__ import annotations

from ....ir import Expr, Node
from ..common import u, v
from . import pg_semantic_tables as S
from . import vast_kinds as K

NONE = 0xFFFFFFFF
IDX_KIND, IDX_PARENT, IDX_FIRST_CHILD, IDX_NEXT_SIBLING, IDX_SYMBOL_HASH = 0, 1, 2, 3, 9
COMMON_PARENT_WALK_LIMIT = 64


def valid(idx: Expr, n: Expr) -> Expr:
    """A node index: not the 0xFFFFFFFF sentinel and below n."""
    return Expr.and_(Expr.ne(idx, u(NONE)), Expr.lt(idx, n))


def field(vast: str, idx: Expr, f: int) -> Expr:
    return Expr.load(vast, Expr.add(Expr.mul(idx, u(10)), u(f)))


def _kind_is(kind: int) -> Expr:
    return Expr.eq(v("kind"), u(kind))


def _walk_bound(n: Expr) -> Expr:
    return Expr.select(Expr.lt(n, u(COMMON_PARENT_WALK_LIMIT)), n, u(COMMON_PARENT_WALK_LIMIT))


def _root_walk(vast: str, n: Expr, start: Expr, root: str, parent: str, step: str, bind: bool) -> list[Node]:
    """``root`` = where n parent steps from `start` end (stopping at an invalid parent)."""
    init = Node.let_bind if bind else Node.assign
    return [
        init(root, start), init(parent, u(NONE)),
        Node.if_then(valid(start, n), [Node.assign(parent, field(vast, start, IDX_PARENT))]),
        Node.loop_for(step, u(0), n, [Node.if_then(valid(v(parent), n), [
            Node.assign(root, v(parent)), Node.assign(parent, field(vast, v(parent), IDX_PARENT))])]),
    ]


def _goto(vast: str, n: Expr, t: Expr) -> list[Node]:
    setup = _root_walk(vast, n, t, "current_root_idx", "current_root_parent_idx", "current_root_step", False)
    setup.append(Node.if_then(valid(v("next_sibling_idx"), n), [
        Node.assign("goto_target_hash", field(vast, v("next_sibling_idx"), IDX_SYMBOL_HASH))]))
    unresolved = Expr.eq(v("resolved_goto_target_idx"), u(NONE))
    match = _root_walk(vast, n, v("label_scan_idx"), "label_scan_root_idx", "label_scan_parent_idx",
                       "label_scan_root_step", True)
    match.append(Node.if_then(Expr.and_(unresolved, Expr.and_(
        Expr.eq(v("label_scan_hash"), v("goto_target_hash")), Expr.eq(v("label_scan_root_idx"), v("current_root_idx")))),
        [Node.assign("resolved_goto_target_idx", v("label_scan_idx"))]))
    scan = [
        Node.let_bind("label_scan_kind", u(0)), Node.let_bind("label_scan_hash", u(0)),
        Node.if_then(valid(v("label_scan_idx"), n), [
            Node.assign("label_scan_kind", field(vast, v("label_scan_idx"), IDX_KIND)),
            Node.assign("label_scan_hash", field(vast, v("label_scan_idx"), IDX_SYMBOL_HASH))]),
        Node.if_then(Expr.and_(Expr.eq(v("label_scan_kind"), u(K.C_AST_KIND_LABEL_STMT)), Expr.and_(
            Expr.ne(v("goto_target_hash"), u(0)), unresolved)), match),
    ]
    return [Node.if_then(_kind_is(K.C_AST_KIND_GOTO_STMT), setup),
            Node.if_then(_kind_is(K.C_AST_KIND_GOTO_STMT), [Node.loop_for("label_scan_idx", u(0), n, scan)])]


def _switch_and_case(vast: str, n: Expr) -> list[Node]:
    cand, nxt = v("switch_selector_candidate"), v("next_sibling_idx")
    return [
        Node.if_then(Expr.and_(_kind_is(K.C_AST_KIND_SWITCH_STMT), valid(nxt, n)), [
            Node.let_bind("switch_selector_candidate", field(vast, nxt, IDX_FIRST_CHILD)),
            Node.let_bind("switch_selector_parent", u(NONE)),
            Node.if_then(valid(cand, n), [Node.assign("switch_selector_parent", field(vast, cand, IDX_PARENT))]),
            Node.if_then(Expr.and_(valid(cand, n), Expr.eq(v("switch_selector_parent"), nxt)),
                         [Node.assign("switch_selector_idx", cand)]),
        ]),
        # (no check that the case has a parent: vyre's CPU reference has one, its GPU IR not)
        Node.if_then(Expr.and_(_kind_is(K.C_AST_KIND_CASE_STMT), Expr.and_(
            valid(nxt, n), Expr.eq(field(vast, nxt, IDX_PARENT), v("parent_idx")))),
            [Node.assign("case_value_idx", nxt)]),
    ]


def _enclosing_switch(vast: str, n: Expr, t: Expr) -> list[Node]:
    case_or_default = Expr.or_(_kind_is(K.C_AST_KIND_CASE_STMT), _kind_is(K.C_AST_KIND_DEFAULT_STMT))
    none_yet = Expr.eq(v("enclosing_switch_idx"), u(NONE))
    anc = v("switch_ancestor_idx")
    ancestors = [
        Node.let_bind("switch_ancestor_idx", v("parent_idx")),
        Node.loop_for("switch_ancestor_step", u(0), _walk_bound(n), [Node.if_then(Expr.and_(none_yet, valid(anc, n)), [
            Node.let_bind("switch_ancestor_kind", field(vast, anc, IDX_KIND)),
            Node.if_then(Expr.and_(none_yet, Expr.eq(v("switch_ancestor_kind"), u(K.C_AST_KIND_SWITCH_STMT))), [
                Node.assign("enclosing_switch_idx", anc),
                Node.assign("enclosing_switch_distance", v("switch_ancestor_step"))]),
            Node.assign("switch_ancestor_idx", field(vast, anc, IDX_PARENT))])]),
    ]
    idx, body_idx, up = v("switch_scan_idx"), v("switch_scan_body_idx"), v("switch_body_ancestor_idx")
    scan = [
        Node.let_bind("switch_scan_idx", Expr.add(v("switch_scan_start_idx"), v("switch_scan_offset"))),
        Node.let_bind("switch_scan_kind", u(0)),
        Node.let_bind("switch_scan_condition_group_idx", u(NONE)),
        Node.let_bind("switch_scan_body_idx", u(NONE)),
        Node.if_then(valid(idx, n), [
            Node.assign("switch_scan_kind", field(vast, idx, IDX_KIND)),
            Node.assign("switch_scan_condition_group_idx", field(vast, idx, IDX_NEXT_SIBLING))]),
        Node.if_then(Expr.and_(Expr.eq(v("switch_scan_kind"), u(K.C_AST_KIND_SWITCH_STMT)),
                               valid(v("switch_scan_condition_group_idx"), n)),
                     [Node.assign("switch_scan_body_idx",
                                  field(vast, v("switch_scan_condition_group_idx"), IDX_NEXT_SIBLING))]),
        Node.if_then(Expr.and_(valid(idx, n), valid(body_idx, n)), [
            Node.let_bind("switch_body_ancestor_idx", v("parent_idx")),
            Node.let_bind("switch_body_found", Expr.bool(False)),
            Node.let_bind("switch_body_distance", u(NONE)),
            Node.loop_for("switch_body_step", u(0), _walk_bound(n), [
                Node.if_then(Expr.eq(up, body_idx), [Node.if_then(Expr.not_(v("switch_body_found")), [
                    Node.assign("switch_body_found", Expr.bool(True)),
                    Node.assign("switch_body_distance", v("switch_body_step"))])]),
                Node.if_then(valid(up, n), [Node.assign("switch_body_ancestor_idx", field(vast, up, IDX_PARENT))])]),
            Node.if_then(Expr.and_(v("switch_body_found"),
                                   Expr.lt(v("switch_body_distance"), v("enclosing_switch_distance"))), [
                Node.assign("enclosing_switch_idx", idx),
                Node.assign("enclosing_switch_distance", v("switch_body_distance"))]),
        ]),
    ]
    limit = _walk_bound(n)
    window = [
        Node.let_bind("switch_scan_start_idx", Expr.select(Expr.gt(t, limit), Expr.sub(t, limit), u(0))),
        Node.let_bind("switch_scan_stop_idx", Expr.select(Expr.lt(Expr.add(t, limit), n), Expr.add(t, limit), n)),
        Node.loop_for("switch_scan_offset", u(0), Expr.sub(v("switch_scan_stop_idx"), v("switch_scan_start_idx")), scan),
    ]
    return [Node.if_then(case_or_default, ancestors), Node.if_then(Expr.and_(case_or_default, none_yet), window)]


def _slot(row: int, cond: Expr, kind: int, src: Expr, dst: Expr) -> Node:
    return Node.if_then(cond, [Node.assign(f"semantic_edge{row}_has", Expr.bool(True)),
                               Node.assign(f"semantic_edge{row}_kind", u(kind)),
                               Node.assign(f"semantic_edge{row}_src", src), Node.assign(f"semantic_edge{row}_dst", dst)])


def resolution_nodes(vast: str, n: Expr, t: Expr) -> list[Node]:
    """gpu_resolution.rs semantic_resolution_nodes for lane `t` (reads kind, parent_idx,
    next_sibling_idx)."""
    nodes = [Node.let_bind(name, u(NONE)) for name in (
        "resolved_goto_target_idx", "switch_selector_idx", "case_value_idx", "enclosing_switch_idx",
        "enclosing_switch_distance")]
    nodes += [Node.let_bind("goto_target_hash", u(0)), Node.let_bind("current_root_idx", t),
              Node.let_bind("current_root_parent_idx", u(NONE))]
    nodes += _goto(vast, n, t) + _switch_and_case(vast, n) + _enclosing_switch(vast, n, t)
    for row in (3, 4):
        nodes += [Node.let_bind(f"semantic_edge{row}_has", Expr.bool(False)),
                  Node.let_bind(f"semantic_edge{row}_kind", u(S.EDGE_NONE)),
                  Node.let_bind(f"semantic_edge{row}_src", u(NONE)), Node.let_bind(f"semantic_edge{row}_dst", u(NONE))]
    enc = v("enclosing_switch_idx")
    nodes += [
        _slot(3, Expr.and_(_kind_is(K.C_AST_KIND_GOTO_STMT), valid(v("resolved_goto_target_idx"), n)),
              S.EDGE_GOTO_TARGET, t, v("resolved_goto_target_idx")),
        _slot(3, Expr.and_(_kind_is(K.C_AST_KIND_SWITCH_STMT), valid(v("switch_selector_idx"), n)),
              S.EDGE_SWITCH_SELECTOR, t, v("switch_selector_idx")),
        _slot(3, Expr.and_(_kind_is(K.C_AST_KIND_CASE_STMT), valid(v("case_value_idx"), n)),
              S.EDGE_CASE_VALUE, t, v("case_value_idx")),
        _slot(3, Expr.and_(_kind_is(K.C_AST_KIND_DEFAULT_STMT), valid(enc, n)), S.EDGE_SWITCH_DEFAULT, enc, t),
        _slot(4, Expr.and_(_kind_is(K.C_AST_KIND_CASE_STMT), valid(enc, n)), S.EDGE_SWITCH_CASE, enc, t),
    ]
    return nodes
