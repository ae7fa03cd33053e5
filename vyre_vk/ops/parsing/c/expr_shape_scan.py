"""IR pieces of the expression-shape builder (port of vyre-libs/src/parsing/c/parse/vast/helpers:
expr.rs ``c_expr_shape_kind`` / ``c_expr_operator_precedence`` / ``c_expr_operator_associativity`` /
``is_expr_shape_boundary`` and scan.rs ``emit_prior_ternary_boundary_flag``,
``emit_expr_segment_bounds``, ``emit_expr_root_scan``).

The scans walk sibling links (words 3 and 4 of a VAST row) rather than every earlier node: a
cursor starts at the lane's previous (next) sibling and follows the links for at most as many
steps as there are nodes on that side, stopping at the first boundary sibling or a link that
leaves the range. Each emitter binds its results under a name prefix (``{prefix}_seg_start``, ...).

Example::

    >>> nodes = emit_expr_segment_bounds("raw", Expr.gid_x(), u(14), "bin_plain", False, Expr.bool(True))
    >>> [n.name for n in nodes[:3]]
    ['bin_plain_seg_start', 'bin_plain_seg_end', 'bin_plain_seen_left_boundary']
"""
from __future__ import annotations

from typing import Sequence

from ....ir import Expr, Node
from ..common import u, v
from ..sema import vast_kinds as K
from . import tokens as T
from .structure import merged_ranges
from .vast import SENTINEL, VAST_NODE_STRIDE_U32, VAST_PREVIOUS_SIBLING_FIELD
from .vast_ref.expr_shape import (BINARY_PRECEDENCE, C_EXPR_ASSOC_LEFT, C_EXPR_ASSOC_NONE, C_EXPR_ASSOC_RIGHT,
                                  C_EXPR_SHAPE_BINARY, C_EXPR_SHAPE_CONDITIONAL, C_EXPR_SHAPE_NONE)

NEXT_SIBLING_FIELD = 3


def any_token_eq(token: Expr, values: Sequence[int]) -> Expr:
    """`token` in `values`: one ``==`` or ``lo <= x <= hi`` per run of consecutive values, OR-ed
    pairwise level by level (vyre's balanced_or)."""
    level = [Expr.eq(token, u(lo)) if lo == hi else Expr.and_(Expr.ge(token, u(lo)), Expr.le(token, u(hi)))
             for lo, hi in merged_ranges(values)]
    while len(level) > 1:
        level = [Expr.or_(level[i], level[i + 1]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return level[0]


def c_expr_shape_kind(raw: Expr, typed: Expr) -> Expr:
    """CONDITIONAL for a typed conditional, BINARY for typed binary/assignment, CONDITIONAL for any
    other raw ``?``, else NONE (the GPU tests the typed kinds first; the CPU oracle tests the raw
    ``?`` first: the same for every typed stream the classifier makes)."""
    return Expr.select(
        Expr.eq(typed, u(K.C_AST_KIND_CONDITIONAL_EXPR)), u(C_EXPR_SHAPE_CONDITIONAL),
        Expr.select(Expr.or_(Expr.eq(typed, u(K.BINARY)), Expr.eq(typed, u(K.C_AST_KIND_ASSIGN_EXPR))),
                    u(C_EXPR_SHAPE_BINARY),
                    Expr.select(Expr.eq(raw, u(T.TOK_QUESTION)), u(C_EXPR_SHAPE_CONDITIONAL), u(C_EXPR_SHAPE_NONE))))


def c_expr_operator_precedence(raw: Expr, typed: Expr) -> Expr:
    """0 for non-operators, 2 assignment, 3 conditional, else the binary table by raw token."""
    by_prec: dict[int, list[int]] = {}
    for tok, prec in BINARY_PRECEDENCE.items():
        by_prec.setdefault(prec, []).append(tok)
    binary = u(0)
    for prec in sorted(by_prec, reverse=True):  # loosest outermost, as vyre nests them
        binary = Expr.select(any_token_eq(raw, by_prec[prec]), u(prec), binary)
    not_operator = Expr.and_(Expr.ne(typed, u(K.BINARY)), Expr.and_(
        Expr.ne(typed, u(K.C_AST_KIND_ASSIGN_EXPR)), Expr.and_(
            Expr.ne(typed, u(K.C_AST_KIND_CONDITIONAL_EXPR)), Expr.ne(raw, u(T.TOK_QUESTION)))))
    return Expr.select(not_operator, u(0), Expr.select(
        Expr.eq(typed, u(K.C_AST_KIND_ASSIGN_EXPR)), u(2),
        Expr.select(Expr.eq(typed, u(K.C_AST_KIND_CONDITIONAL_EXPR)), u(3), binary)))


def c_expr_operator_associativity(typed: Expr) -> Expr:
    return Expr.select(
        Expr.or_(Expr.eq(typed, u(K.C_AST_KIND_ASSIGN_EXPR)), Expr.eq(typed, u(K.C_AST_KIND_CONDITIONAL_EXPR))),
        u(C_EXPR_ASSOC_RIGHT), Expr.select(Expr.eq(typed, u(K.BINARY)), u(C_EXPR_ASSOC_LEFT), u(C_EXPR_ASSOC_NONE)))


def is_expr_shape_boundary(raw: Expr, ternary_parts: bool) -> Expr:
    common = Expr.or_(Expr.eq(raw, u(T.TOK_SEMICOLON)), Expr.eq(raw, u(T.TOK_COMMA)))
    if not ternary_parts:
        return common
    return Expr.or_(common, Expr.or_(Expr.eq(raw, u(T.TOK_QUESTION)), Expr.eq(raw, u(T.TOK_COLON))))


def _row_word(raw: str, node: Expr, field: int) -> Expr:
    return Expr.load(raw, Expr.add(Expr.mul(node, u(VAST_NODE_STRIDE_U32)), u(field)))


def _walk_step(raw: str, cursor: str, limit: Expr, p: str, link: int, boundary: Expr | None,
               on_boundary: list[Node], stop: str) -> list[Node]:
    """One step of a sibling walk: read the cursor's kind (at node 0 when the cursor is out of
    range, so the load stays in bounds), run `on_boundary` at a boundary, then follow `link`."""
    valid, safe, base, kind = f"{p}_cursor_valid", f"{p}_safe_cursor", f"{p}_base", f"{p}_raw"
    return [
        Node.let_bind(valid, Expr.lt(v(cursor), limit)),
        Node.let_bind(safe, Expr.select(v(valid), v(cursor), u(0))),
        Node.let_bind(base, Expr.mul(v(safe), u(VAST_NODE_STRIDE_U32))),
        Node.let_bind(kind, Expr.load(raw, v(base))),
        Node.if_then(Expr.and_(v(valid), boundary if boundary is not None else is_expr_shape_boundary(v(kind), True)),
                     on_boundary),
        Node.if_then_else(v(valid), [Node.assign(cursor, Expr.load(raw, Expr.add(v(base), u(link))))],
                          [Node.assign(stop, u(1))]),
    ]


def emit_prior_ternary_boundary_flag(raw: str, target: Expr, active: Expr, prefix: str) -> list[Node]:
    """``{prefix}_use_ternary_boundaries`` = 1 when the nearest ``; , ? :`` sibling before `target`
    is ``?`` or ``:``."""
    flag, stop, cursor = f"{prefix}_use_ternary_boundaries", f"{prefix}_ternary_boundary_stop", \
        f"{prefix}_ternary_boundary_cursor"
    p = f"{prefix}_ternary_boundary"
    kind = v(f"{p}_raw")
    on_boundary = [
        Node.let_bind(f"{prefix}_is_prior_ternary_boundary",
                      Expr.or_(Expr.eq(kind, u(T.TOK_QUESTION)), Expr.eq(kind, u(T.TOK_COLON)))),
        Node.if_then(v(f"{prefix}_is_prior_ternary_boundary"), [Node.assign(flag, u(1))]),
        Node.assign(stop, u(1))]
    return [
        Node.let_bind(flag, u(0)), Node.let_bind(stop, u(0)),
        Node.let_bind(cursor, _row_word(raw, target, VAST_PREVIOUS_SIBLING_FIELD)),
        Node.if_then(active, [Node.loop_for(f"{p}_scan", u(0), target, [Node.if_then(
            Expr.eq(v(stop), u(0)),
            _walk_step(raw, cursor, target, p, VAST_PREVIOUS_SIBLING_FIELD, None, on_boundary, stop))])]),
    ]


def emit_expr_segment_bounds(raw: str, target: Expr, num_nodes: Expr, prefix: str, ternary_parts: bool,
                             active: Expr) -> list[Node]:
    """``{prefix}_seg_start`` / ``{prefix}_seg_end``: after the nearest boundary sibling before
    `target` (else 0) and at the nearest one after it (else `num_nodes`)."""
    start, end, cursor = f"{prefix}_seg_start", f"{prefix}_seg_end", f"{prefix}_seg_cursor"
    seen_left, seen_right = f"{prefix}_seen_left_boundary", f"{prefix}_seen_right_boundary"
    p, scan = f"{prefix}_seg", f"{prefix}_seg_scan"
    boundary = is_expr_shape_boundary(v(f"{p}_raw"), ternary_parts)
    left = _walk_step(raw, cursor, target, p, VAST_PREVIOUS_SIBLING_FIELD, boundary,
                      [Node.assign(start, Expr.add(v(cursor), u(1))), Node.assign(seen_left, u(1))], seen_left)
    right = _walk_step(raw, cursor, v(end), p, NEXT_SIBLING_FIELD, boundary,
                       [Node.assign(end, v(cursor)), Node.assign(seen_right, u(1))], seen_right)
    return [
        Node.let_bind(start, u(0)), Node.let_bind(end, num_nodes), Node.let_bind(seen_left, u(0)),
        Node.let_bind(cursor, _row_word(raw, target, VAST_PREVIOUS_SIBLING_FIELD)),
        Node.if_then(active, [Node.loop_for(scan, u(0), target, [Node.if_then(Expr.eq(v(seen_left), u(0)), left)])]),
        Node.let_bind(seen_right, u(0)),
        Node.assign(cursor, _row_word(raw, target, NEXT_SIBLING_FIELD)),
        Node.if_then(active, [Node.loop_for(scan, Expr.add(target, u(1)), num_nodes,
                                            [Node.if_then(Expr.eq(v(seen_right), u(0)), right)])]),
    ]


def emit_expr_root_scan(raw: str, typed: str, lo: Expr, hi: Expr, parent: Expr, active: Expr,
                        prefix: str) -> list[Node]:
    """``{prefix}_root``: the loosest operator in [lo, hi) (a later equal left-associative one
    wins; operators under any parent compete), else the first non-boundary node under `parent`,
    else SENTINEL."""
    root, root_prec, operand = f"{prefix}_root", f"{prefix}_root_prec", f"{prefix}_operand"
    scan, base = f"{prefix}_scan", f"{prefix}_base"
    kind, tkind, par = v(f"{prefix}_raw"), v(f"{prefix}_typed"), v(f"{prefix}_parent")
    shape, prec, assoc = v(f"{prefix}_shape"), v(f"{prefix}_prec"), v(f"{prefix}_assoc")
    is_op, replace = v(f"{prefix}_is_operator"), v(f"{prefix}_replace_root")
    body = [
        Node.let_bind(base, Expr.mul(v(scan), u(VAST_NODE_STRIDE_U32))),
        Node.let_bind(kind.name, Expr.load(raw, v(base))),
        Node.let_bind(tkind.name, Expr.load(typed, v(base))),
        Node.let_bind(par.name, Expr.load(raw, Expr.add(v(base), u(1)))),
        Node.let_bind(shape.name, c_expr_shape_kind(kind, tkind)),
        Node.let_bind(prec.name, c_expr_operator_precedence(kind, tkind)),
        Node.let_bind(assoc.name, c_expr_operator_associativity(tkind)),
        Node.let_bind(is_op.name, Expr.ne(shape, u(C_EXPR_SHAPE_NONE))),
        Node.if_then(Expr.or_(Expr.eq(par, parent), is_op), [
            Node.if_then(Expr.and_(Expr.eq(v(operand), u(SENTINEL)), Expr.and_(
                Expr.eq(par, parent), Expr.and_(Expr.not_(is_op), Expr.not_(is_expr_shape_boundary(kind, True))))),
                [Node.assign(operand, v(scan))]),
            Node.let_bind(replace.name, Expr.or_(Expr.eq(v(root), u(SENTINEL)), Expr.or_(
                Expr.lt(prec, v(root_prec)),
                Expr.and_(Expr.eq(prec, v(root_prec)), Expr.eq(assoc, u(C_EXPR_ASSOC_LEFT)))))),
            Node.if_then(Expr.and_(is_op, replace), [Node.assign(root, v(scan)), Node.assign(root_prec, prec)]),
        ]),
    ]
    return [
        Node.let_bind(root, u(SENTINEL)), Node.let_bind(root_prec, u(0xFFFFFFFF)), Node.let_bind(operand, u(SENTINEL)),
        Node.if_then(active, [Node.loop_for(scan, lo, hi, body)]),
        Node.if_then(Expr.eq(v(root), u(SENTINEL)), [Node.assign(root, v(operand))]),
    ]
