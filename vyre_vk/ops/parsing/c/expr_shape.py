"""`vyre-libs::parsing::c11_build_expression_shape_nodes`: one expression-shape row per VAST node
(port of vyre-libs/src/parsing/c/parse/vast/expr_shape.rs; the row rules are in the CPU oracle's
doc, vyre_vk/ops/parsing/c/vast_ref/expr_shape.py).

Inputs are the raw VAST rows (c11_build_vast_nodes_v2) and the typed rows the classifier made
of them (c11_classify_vast_node_kinds); output row ``t`` (8 words) is
``[shape, t or SENTINEL, raw_kind, precedence, associativity, a, b, c]``. Lane t < num_nodes
builds row t alone: sibling walks for its segment (expr_shape_scan.py), an in-order scan of the
segment's sibling operators for its operand bounds, and root scans over index ranges. Workgroup
[256, 1, 1].

Where the GPU differs from vyre's CPU oracle (both ported as they are, pinned in
tests/ops/parsing/test_c11_expr_shape.py):

- a ``?`` with no matching ``:`` keeps its condition root here (the oracle writes SENTINEL);
- a ``?``'s condition starts after the last assignment among the siblings from its plain
  (``;``/``,``) segment start, where the oracle looks only from its ternary segment start: in
  ``x = a ? b : c ? d : e`` the second ``?``'s condition is ``?`` #1 here and ``c`` there.

`c11_build_expression_shape_nodes_no_conditional` is vyre's variant without the conditional
scans: binary segments never stop at ``?``/``:`` and conditional rows keep SENTINEL operands.

Example::

    >>> p = c11_build_expression_shape_nodes("raw", "typed", 14, "out")
    >>> [(b.name, b.count) for b in p.buffers], p.workgroup_size
    ([('raw', 140), ('typed', 140), ('out', 112)], (256, 1, 1))
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, child_phase, u, v, with_entry_op_id
from . import tokens as T
from .expr_shape_scan import (c_expr_operator_associativity, c_expr_operator_precedence, c_expr_shape_kind,
                              emit_expr_root_scan, emit_expr_segment_bounds, emit_prior_ternary_boundary_flag)
from .vast import SENTINEL, VAST_NODE_STRIDE_U32, vast_rows
from .vast_ref.classify import reference_classify_vast_node_kinds
from .vast_ref.expr_shape import (C_EXPR_ASSOC_LEFT, C_EXPR_ASSOC_RIGHT, C_EXPR_SHAPE_CONDITIONAL, C_EXPR_SHAPE_NONE,
                                  C_EXPR_SHAPE_STRIDE_U32, reference_build_expression_shape_nodes)

OP_ID = "vyre-libs::parsing::c11_build_expression_shape_nodes"
PHASE_OP_ID = OP_ID + "::node_shape_pass"
ULP = None  # u32 results: exact
U32 = DataType.U32


def _binary_bounds(raw: str, typed: str, t: Expr) -> list[Node]:
    """``bin_left_bound`` / ``bin_right_bound``: after the last looser-or-tied sibling operator
    before t, and at the first one after t, within [bin_seg_start, bin_seg_end)."""
    scan = v("bin_parent_scan")
    prec, par_prec = v("precedence"), v("bin_parent_prec")
    tie = Expr.and_(Expr.eq(par_prec, prec), Expr.or_(
        Expr.and_(Expr.eq(v("associativity"), u(C_EXPR_ASSOC_LEFT)), Expr.lt(t, scan)),
        Expr.and_(Expr.eq(v("associativity"), u(C_EXPR_ASSOC_RIGHT)), Expr.lt(scan, t))))
    ancestor = v("bin_parent_is_ancestor")
    body = [
        Node.let_bind("bin_parent_base", Expr.mul(scan, u(VAST_NODE_STRIDE_U32))),
        Node.let_bind("bin_parent_raw", Expr.load(raw, v("bin_parent_base"))),
        Node.let_bind("bin_parent_typed", Expr.load(typed, v("bin_parent_base"))),
        Node.let_bind("bin_parent_parent", Expr.load(raw, Expr.add(v("bin_parent_base"), u(1)))),
        Node.let_bind("bin_parent_shape", c_expr_shape_kind(v("bin_parent_raw"), v("bin_parent_typed"))),
        Node.let_bind("bin_parent_prec", c_expr_operator_precedence(v("bin_parent_raw"), v("bin_parent_typed"))),
        Node.let_bind("bin_parent_is_operator",
                      Expr.and_(Expr.ne(v("bin_parent_shape"), u(C_EXPR_SHAPE_NONE)), Expr.ne(scan, t))),
        Node.let_bind("bin_parent_equal_assoc", tie),
        Node.let_bind("bin_parent_is_ancestor", Expr.and_(
            Expr.and_(Expr.eq(v("bin_parent_parent"), v("cur_parent")), v("bin_parent_is_operator")),
            Expr.or_(Expr.lt(par_prec, prec), v("bin_parent_equal_assoc")))),
        Node.if_then(Expr.and_(ancestor, Expr.lt(scan, t)), [Node.assign("bin_left_parent_op", scan)]),
        Node.if_then(Expr.and_(ancestor, Expr.and_(Expr.lt(t, scan), Expr.or_(
            Expr.eq(v("bin_right_parent_op"), u(SENTINEL)), Expr.lt(scan, v("bin_right_parent_op"))))),
            [Node.assign("bin_right_parent_op", scan)]),
    ]
    use_ternary = Expr.eq(v("bin_use_ternary_boundaries"), u(1))
    return [
        Node.let_bind("bin_seg_start", Expr.select(use_ternary, v("bin_ternary_seg_start"), v("bin_plain_seg_start"))),
        Node.let_bind("bin_seg_end", Expr.select(use_ternary, v("bin_ternary_seg_end"), v("bin_plain_seg_end"))),
        Node.let_bind("bin_left_bound", v("bin_seg_start")), Node.let_bind("bin_right_bound", v("bin_seg_end")),
        Node.let_bind("bin_left_parent_op", u(SENTINEL)), Node.let_bind("bin_right_parent_op", u(SENTINEL)),
        Node.if_then(v("shape_is_expr"),
                     [Node.loop_for("bin_parent_scan", v("bin_seg_start"), v("bin_seg_end"), body)]),
        Node.if_then(Expr.ne(v("bin_left_parent_op"), u(SENTINEL)),
                     [Node.assign("bin_left_bound", Expr.add(v("bin_left_parent_op"), u(1)))]),
        Node.if_then(Expr.ne(v("bin_right_parent_op"), u(SENTINEL)),
                     [Node.assign("bin_right_bound", v("bin_right_parent_op"))]),
    ]


def _conditional(raw: str, typed: str, t: Expr, n: Expr) -> list[Node]:
    """The ``?`` row's operand roots: the first unnested ``:`` sibling in its segment, the
    condition start after the last looser sibling operator from the plain segment start."""
    cond = v("shape_is_conditional")
    colon_raw, depth = v("cond_colon_raw"), v("cond_depth")
    colon_scan = [Node.if_then(Expr.eq(v("cond_colon"), u(SENTINEL)), [
        Node.let_bind("cond_colon_base", Expr.mul(v("cond_colon_scan"), u(VAST_NODE_STRIDE_U32))),
        Node.let_bind("cond_colon_raw", Expr.load(raw, v("cond_colon_base"))),
        Node.let_bind("cond_colon_parent", Expr.load(raw, Expr.add(v("cond_colon_base"), u(1)))),
        Node.if_then(Expr.eq(v("cond_colon_parent"), v("cur_parent")), [
            Node.if_then(Expr.eq(colon_raw, u(T.TOK_QUESTION)), [Node.assign("cond_depth", Expr.add(depth, u(1)))]),
            Node.if_then(Expr.eq(colon_raw, u(T.TOK_COLON)), [
                Node.if_then(Expr.eq(depth, u(0)), [Node.assign("cond_colon", v("cond_colon_scan"))]),
                Node.if_then(Expr.gt(depth, u(0)), [Node.assign("cond_depth", Expr.sub(depth, u(1)))])])])])]
    parent_scan = [
        Node.let_bind("cond_parent_base", Expr.mul(v("cond_parent_scan"), u(VAST_NODE_STRIDE_U32))),
        Node.let_bind("cond_parent_raw", Expr.load(raw, v("cond_parent_base"))),
        Node.let_bind("cond_parent_typed", Expr.load(typed, v("cond_parent_base"))),
        Node.let_bind("cond_parent_parent", Expr.load(raw, Expr.add(v("cond_parent_base"), u(1)))),
        Node.let_bind("cond_parent_shape", c_expr_shape_kind(v("cond_parent_raw"), v("cond_parent_typed"))),
        Node.let_bind("cond_parent_prec", c_expr_operator_precedence(v("cond_parent_raw"), v("cond_parent_typed"))),
        Node.if_then(Expr.and_(Expr.eq(v("cond_parent_parent"), v("cur_parent")), Expr.and_(
            Expr.ne(v("cond_parent_shape"), u(C_EXPR_SHAPE_NONE)), Expr.lt(v("cond_parent_prec"), v("precedence")))),
            [Node.assign("cond_parent_op", v("cond_parent_scan"))]),
    ]
    has_colon = v("cond_has_colon")
    return [
        *emit_expr_segment_bounds(raw, t, n, "cond", False, cond),
        *emit_expr_segment_bounds(raw, t, n, "cond_condition", True, cond),
        Node.let_bind("cond_colon", u(SENTINEL)), Node.let_bind("cond_depth", u(0)),
        Node.if_then(cond, [Node.loop_for("cond_colon_scan", Expr.add(t, u(1)), v("cond_seg_end"), colon_scan)]),
        Node.let_bind("cond_has_colon", Expr.ne(v("cond_colon"), u(SENTINEL))),
        Node.let_bind("cond_then_end", Expr.select(has_colon, v("cond_colon"), Expr.add(t, u(1)))),
        Node.let_bind("cond_else_start", Expr.select(has_colon, Expr.add(v("cond_colon"), u(1)), v("cond_seg_end"))),
        Node.let_bind("cond_condition_start", v("cond_condition_seg_start")),
        Node.let_bind("cond_parent_op", u(SENTINEL)),
        Node.if_then(cond, [Node.loop_for("cond_parent_scan", v("cond_seg_start"), t, parent_scan)]),
        Node.if_then(Expr.ne(v("cond_parent_op"), u(SENTINEL)),
                     [Node.assign("cond_condition_start", Expr.add(v("cond_parent_op"), u(1)))]),
        *emit_expr_root_scan(raw, typed, v("cond_condition_start"), t, v("cur_parent"), cond, "cond_condition"),
        *emit_expr_root_scan(raw, typed, Expr.add(t, u(1)), v("cond_then_end"), v("cur_parent"), cond, "cond_then"),
        *emit_expr_root_scan(raw, typed, v("cond_else_start"), v("cond_seg_end"), v("cur_parent"), cond, "cond_else"),
    ]


def _node_shape_pass(raw: str, typed: str, out: str, n: Expr, conditional: bool) -> list[Node]:
    t = Expr.gid_x()
    vast_base, out_base = Expr.mul(t, u(VAST_NODE_STRIDE_U32)), Expr.mul(t, u(C_EXPR_SHAPE_STRIDE_U32))
    is_expr = v("shape_is_expr")
    body = [
        Node.let_bind("raw_kind", Expr.load(raw, vast_base)),
        Node.let_bind("typed_kind", Expr.load(typed, vast_base)),
        Node.let_bind("cur_parent", Expr.load(raw, Expr.add(vast_base, u(1)))),
        Node.let_bind("shape_kind", c_expr_shape_kind(v("raw_kind"), v("typed_kind"))),
        Node.let_bind("precedence", c_expr_operator_precedence(v("raw_kind"), v("typed_kind"))),
        Node.let_bind("associativity", c_expr_operator_associativity(v("typed_kind"))),
        Node.let_bind("shape_is_expr", Expr.ne(v("shape_kind"), u(C_EXPR_SHAPE_NONE))),
        Node.let_bind("shape_is_conditional", Expr.eq(v("shape_kind"), u(C_EXPR_SHAPE_CONDITIONAL))),
    ]
    if conditional:
        body += [*emit_prior_ternary_boundary_flag(raw, t, is_expr, "bin"),
                 *emit_expr_segment_bounds(raw, t, n, "bin_plain", False, is_expr),
                 *emit_expr_segment_bounds(raw, t, n, "bin_ternary", True, is_expr)]
    else:
        body += [*emit_expr_segment_bounds(raw, t, n, "bin_plain", False, is_expr),
                 Node.let_bind("bin_use_ternary_boundaries", u(0)),
                 Node.let_bind("bin_ternary_seg_start", v("bin_plain_seg_start")),
                 Node.let_bind("bin_ternary_seg_end", v("bin_plain_seg_end"))]
    body += _binary_bounds(raw, typed, t)
    body += emit_expr_root_scan(raw, typed, v("bin_left_bound"), t, v("cur_parent"), is_expr, "bin_lhs")
    body += emit_expr_root_scan(raw, typed, Expr.add(t, u(1)), v("bin_right_bound"), v("cur_parent"), is_expr,
                                "bin_rhs")
    if conditional:
        body += _conditional(raw, typed, t, n)
    else:
        body += [Node.let_bind(f"cond_{part}_root", u(SENTINEL)) for part in ("condition", "then", "else")]
    is_cond = Expr.eq(v("shape_kind"), u(C_EXPR_SHAPE_CONDITIONAL))
    is_none = Expr.eq(v("shape_kind"), u(C_EXPR_SHAPE_NONE))
    fields = [v("shape_kind"), Expr.select(is_none, u(SENTINEL), t), v("raw_kind"), v("precedence"), v("associativity"),
              Expr.select(is_cond, v("cond_condition_root"), v("bin_lhs_root")),
              Expr.select(is_cond, v("cond_then_root"), v("bin_rhs_root")),
              Expr.select(is_cond, v("cond_else_root"), u(SENTINEL))]
    body += [Node.let_bind(f"field{k}", fields[k]) for k in (5, 6, 7)]
    body += [Node.store(out, out_base if k == 0 else Expr.add(out_base, u(k)),
                        Expr.select(is_none, u(SENTINEL), v(f"field{k}")) if k >= 5 else fields[k]) for k in range(8)]
    return body


def _program(raw_vast_nodes: str, typed_vast_nodes: str, num_nodes: int, out_expr_shape_nodes: str,
             conditional: bool) -> Program:
    check_len(OP_ID, "num_nodes", num_nodes)
    n_lit, n = u(num_nodes), max(num_nodes, 1)
    body = _node_shape_pass(raw_vast_nodes, typed_vast_nodes, out_expr_shape_nodes, n_lit, conditional)
    buffers = [BufferDecl.storage(raw_vast_nodes, 0, BufferAccess.ReadOnly, U32).with_count(n * VAST_NODE_STRIDE_U32),
               BufferDecl.storage(typed_vast_nodes, 1, BufferAccess.ReadOnly, U32).with_count(n * VAST_NODE_STRIDE_U32),
               BufferDecl.output(out_expr_shape_nodes, 2, U32).with_count(n * C_EXPR_SHAPE_STRIDE_U32)]
    entry = wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(Expr.gid_x(), n_lit), [child_phase(OP_ID, PHASE_OP_ID, body)])])
    return with_entry_op_id(Program.wrapped(buffers, (256, 1, 1), [entry]), OP_ID)


def c11_build_expression_shape_nodes(raw_vast_nodes: str, typed_vast_nodes: str, num_nodes: int,
                                     out_expr_shape_nodes: str) -> Program:
    """Expression-shape rows of ``num_nodes`` VAST nodes (see the module doc)."""
    return _program(raw_vast_nodes, typed_vast_nodes, num_nodes, out_expr_shape_nodes, True)


def c11_build_expression_shape_nodes_no_conditional(raw_vast_nodes: str, typed_vast_nodes: str, num_nodes: int,
                                                    out_expr_shape_nodes: str) -> Program:
    """vyre's variant without the ``?:`` scans (see the module doc)."""
    return _program(raw_vast_nodes, typed_vast_nodes, num_nodes, out_expr_shape_nodes, False)


def _build(num_nodes: int = 14) -> Program:
    return c11_build_expression_shape_nodes("raw_vast_nodes", "typed_vast_nodes", num_nodes, "out_expr_shape_nodes")


# vyre's witness: `a + b * c ? d + e : f * g;` as 14 one-byte tokens at 0..13.
WITNESS_TOKENS = [T.TOK_IDENTIFIER, T.TOK_PLUS, T.TOK_IDENTIFIER, T.TOK_STAR, T.TOK_IDENTIFIER, T.TOK_QUESTION,
                  T.TOK_IDENTIFIER, T.TOK_PLUS, T.TOK_IDENTIFIER, T.TOK_COLON, T.TOK_IDENTIFIER, T.TOK_STAR,
                  T.TOK_IDENTIFIER, T.TOK_SEMICOLON]
WITNESS_RAW = vast_rows(WITNESS_TOKENS, list(range(14)), [1] * 14)
WITNESS_TYPED = reference_classify_vast_node_kinds(WITNESS_RAW)
ENTRY = register_case(
    OP_ID, _build,
    [pack_u32_slice(WITNESS_RAW), pack_u32_slice(WITNESS_TYPED), bytes(14 * C_EXPR_SHAPE_STRIDE_U32 * 4)],
    [pack_u32_slice(reference_build_expression_shape_nodes(WITNESS_RAW, WITNESS_TYPED))],
    category="parsing", ulp=ULP, bench=dict(num_nodes=512))  # each lane scans O(n) nodes several times
