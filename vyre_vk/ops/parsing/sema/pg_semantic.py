"""`vyre-libs::parsing::c::lower::ast_to_pg_semantic_graph`: VAST rows to semantic PG node rows
and five edge rows per node (port of vyre-libs/src/parsing/c/lower/ast_to_pg_nodes/gpu_program/
{semantic_graph, classification, context, edge_store}.rs and lower/semantic_edges/gpu_*.rs).

Lane t < n writes node row t (10 words): the 6 PG words of ast_to_pg_nodes, then category, role
(pg_semantic_tables.py), attr_off, attr_len. Edge rows 5t..5t+4 (6 words: kind, src, dst, and the
node's kind, role, category) are parent (parent -> t), first child, next sibling (t -> them), when
that link is a node index < n, and two resolved slots, else ``(NONE, MAX, MAX)``:

- goto: the first LABEL_STMT whose symbol hash (word 9) equals the hash of the goto's next
  sibling (non-zero), in the same tree (the roots reached by n parent steps agree);
- switch: the selector, first child of its next sibling (the condition group) if that child's
  parent is the group;
- case: its value (its next sibling, if it has the case's parent) in slot 3, and (slot 4)
  the enclosing switch -> case; default: enclosing switch -> default. The enclosing switch is the
  nearest SWITCH ancestor within min(n, 64) parent steps, else, among the switches whose body
  (condition group's next sibling) is an ancestor of the node's parent, within 64 indices of t,
  the one whose body is the fewest steps up.

A pointer declarator whose parent, first child or next sibling is a function declarator gets
the function-pointer role. Goto lanes scan all n nodes and walk each label's n-step root path,
so the cost is O(n^2) per goto.

Example::

    >>> p = c_lower_ast_to_pg_semantic_graph("vast_nodes", 4, "out_pg_nodes", "out_pg_edges")
    >>> [(b.name, b.count) for b in p.buffers]
    [('vast_nodes', 40), ('out_pg_nodes', 40), ('out_pg_edges', 120)]
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, child_phase, u, v, with_entry_op_id
from . import pg_semantic_tables as S
from . import vast_kinds as K
from .lower import NONE, WITNESS_ROWS, WITNESS_VAST
from .pg_resolution import resolution_nodes, valid

OP_ID = "vyre-libs::parsing::c::lower::ast_to_pg_semantic_graph"
PHASE_OP_ID = OP_ID + "::node_edge_pass"
ULP = None  # u32 results: exact
NODE_STRIDE, EDGE_STRIDE, EDGE_ROWS = 10, 6, 5


def _kind_in(group: S.Group) -> Expr:
    ranges, kinds = group
    terms = [Expr.and_(Expr.ge(v("kind"), u(lo)), Expr.le(v("kind"), u(hi))) for lo, hi in ranges]
    terms += [Expr.eq(v("kind"), u(k)) for k in kinds]
    out = terms[0]
    for term in terms[1:]:
        out = Expr.or_(out, term)
    return out


def category_expr() -> Expr:
    out: Expr = u(S.CATEGORY_NONE)
    for cat, group in reversed(S.CATEGORY_RULES):  # the first rule is the outermost select
        out = Expr.select(_kind_in(group), u(cat), out)
    return out


def role_expr() -> Expr:
    role = Expr.select(_kind_in(S.EXPRESSION_ROLE), u(S.ROLE_EXPRESSION), u(S.ROLE_NONE))
    for group, value in S.ROLE_RULES:
        role = Expr.select(_kind_in(group), u(value), role)
    for kind, value in S.ROLE_BY_KIND:
        role = Expr.select(Expr.eq(v("kind"), u(kind)), u(value), role)
    return role


def _edge_row(edges: str, base: Expr, row: int, has: Expr, kind: Expr, src: Expr, dst: Expr) -> list[Node]:
    at = Expr.add(base, u(row * EDGE_STRIDE))
    return [Node.store(edges, at, Expr.select(has, kind, u(S.EDGE_NONE))),
            Node.store(edges, Expr.add(at, u(1)), Expr.select(has, src, u(NONE))),
            Node.store(edges, Expr.add(at, u(2)), Expr.select(has, dst, u(NONE))),
            Node.store(edges, Expr.add(at, u(3)), v("kind")),
            Node.store(edges, Expr.add(at, u(4)), v("semantic_role")),
            Node.store(edges, Expr.add(at, u(5)), v("semantic_category"))]


def c_lower_ast_to_pg_semantic_graph(vast_nodes: str, num_nodes: int, out_pg_nodes: str, out_pg_edges: str) -> Program:
    """Semantic node rows and 5 edge rows per VAST node (goto/switch/case/default resolved)."""
    n = check_len(OP_ID, "num_nodes", num_nodes)
    t, nn = Expr.gid_x(), u(n)
    vb, pb = Expr.mul(t, u(10)), Expr.mul(t, u(NODE_STRIDE))
    eb = Expr.mul(t, u(EDGE_ROWS * EDGE_STRIDE))

    def field(i: int) -> Expr:
        return Expr.load(vast_nodes, Expr.add(vb, u(i)) if i else vb)

    body = [Node.let_bind(name, field(i)) for name, i in (
        ("kind", 0), ("parent_idx", 1), ("first_child_idx", 2), ("next_sibling_idx", 3), ("span_start", 5),
        ("span_len", 6), ("attr_off", 7), ("attr_len", 8))]
    related = [("parent_idx", "parent_kind"), ("first_child_idx", "first_child_kind"),
               ("next_sibling_idx", "next_sibling_kind")]
    body += [Node.let_bind(kind_var, u(0)) for _, kind_var in related]
    body.append(Node.if_then(Expr.eq(v("kind"), u(K.C_AST_KIND_POINTER_DECL)), [
        Node.if_then(valid(v(idx), nn), [Node.assign(kind_var, Expr.load(vast_nodes, Expr.mul(v(idx), u(10))))])
        for idx, kind_var in related]))
    fd = u(K.C_AST_KIND_FUNCTION_DECLARATOR)
    body += [
        Node.let_bind("semantic_category", category_expr()),
        Node.let_bind("semantic_role", role_expr()),
        Node.if_then(Expr.and_(Expr.eq(v("kind"), u(K.C_AST_KIND_POINTER_DECL)), Expr.or_(
            Expr.eq(v("parent_kind"), fd), Expr.or_(Expr.eq(v("first_child_kind"), fd),
                                                    Expr.eq(v("next_sibling_kind"), fd)))),
            [Node.assign("semantic_role", u(S.ROLE_FUNCTION_POINTER_DECL))]),
    ]
    body += resolution_nodes(vast_nodes, nn, t)
    words = [v("kind"), v("span_start"), Expr.add(v("span_start"), v("span_len")), v("parent_idx"),
             v("first_child_idx"), v("next_sibling_idx"), v("semantic_category"), v("semantic_role"), v("attr_off"),
             v("attr_len")]
    body += [Node.store(out_pg_nodes, Expr.add(pb, u(i)) if i else pb, w) for i, w in enumerate(words)]
    body += _edge_row(out_pg_edges, eb, 0, valid(v("parent_idx"), nn), u(S.EDGE_PARENT), v("parent_idx"), t)
    body += _edge_row(out_pg_edges, eb, 1, valid(v("first_child_idx"), nn), u(S.EDGE_FIRST_CHILD), t,
                      v("first_child_idx"))
    body += _edge_row(out_pg_edges, eb, 2, valid(v("next_sibling_idx"), nn), u(S.EDGE_NEXT_SIBLING), t,
                      v("next_sibling_idx"))
    for row in (3, 4):
        body += _edge_row(out_pg_edges, eb, row, v(f"semantic_edge{row}_has"), v(f"semantic_edge{row}_kind"),
                          v(f"semantic_edge{row}_src"), v(f"semantic_edge{row}_dst"))
    m = max(n, 1)
    program = Program.wrapped(
        [BufferDecl.storage(vast_nodes, 0, BufferAccess.ReadOnly, DataType.U32).with_count(m * 10),
         BufferDecl.output(out_pg_nodes, 1, DataType.U32).with_count(m * NODE_STRIDE),
         BufferDecl.storage(out_pg_edges, 2, BufferAccess.ReadWrite, DataType.U32)
         .with_count(m * EDGE_ROWS * EDGE_STRIDE).with_pipeline_live_out(True)],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(t, nn), [child_phase(OP_ID, PHASE_OP_ID, body)])])])
    return with_entry_op_id(program, OP_ID)


def _build(num_nodes: int = len(WITNESS_ROWS)) -> Program:
    return c_lower_ast_to_pg_semantic_graph("vast_nodes", num_nodes, "out_pg_nodes", "out_pg_edges")


# The witness's resolved slots, by hand from the rules: the goto (18) reaches the label (6) of its
# tree (every row's symbol hash is 9); the switch (11) has no selector (its next sibling, the case,
# has no child); the case (12) takes its sibling (13) as value and the switch as its enclosing
# switch; the default (13) too.
_WITNESS_EDGES = {18: ((S.EDGE_GOTO_TARGET, 18, 6), None), 12: ((S.EDGE_CASE_VALUE, 12, 13), (S.EDGE_SWITCH_CASE, 11, 12)),
                  13: ((S.EDGE_SWITCH_DEFAULT, 11, 13), None)}


def _witness_expected() -> tuple[bytes, bytes]:
    n = len(WITNESS_ROWS)
    nodes, edges = [], []
    for t, (kind, parent, first, nxt, start, length) in enumerate(WITNESS_ROWS):
        cat, role = S.category_of(kind), S.role_of(kind)
        nodes += [kind, start, start + length, parent, first, nxt, cat, role, WITNESS_VAST[t * 10 + 7], length]
        resolved = _WITNESS_EDGES.get(t, (None, None))
        for edge in ((S.EDGE_PARENT, parent, t) if parent < n else None, (S.EDGE_FIRST_CHILD, t, first) if first < n
                     else None, (S.EDGE_NEXT_SIBLING, t, nxt) if nxt < n else None) + resolved:
            edges += list(edge or (S.EDGE_NONE, NONE, NONE)) + [kind, role, cat]
    return pack_u32_slice(nodes), pack_u32_slice(edges)


ENTRY = register_case(OP_ID, _build, [pack_u32_slice(WITNESS_VAST), bytes(4 * 10 * len(WITNESS_ROWS)),
                                      bytes(4 * 30 * len(WITNESS_ROWS))],
                      list(_witness_expected()), category=None, ulp=ULP, bench=dict(num_nodes=4096))
