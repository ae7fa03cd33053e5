"""Constant folding and constant propagation.

Literal operands are evaluated with the operator table's own NumPy implementations (the
ones the reference evaluator runs), so a folded value is bit-identical to what the
reference computes at run time, f32 canonicalisation included. An operation the reference
would abort on (i32 division by zero, MIN / -1) is left in place. `let x = <literal>`
with no later assignment is propagated into its uses; an `if` on a literal condition
becomes its taken arm; a loop whose literal bounds are empty disappears.
"""
from __future__ import annotations

import numpy as np

from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BINOPS, CASTS, UNOPS, BinOp, canon
from ..ir.program import Program
from ..ir.validate import _static_zero
from ..ir.walk import map_node_exprs, node_all_exprs, node_bodies, transform_expr, with_bodies, with_children
from ..reference.eval import fma_f32
from .analysis import Facts, assigned_vars, replace_entry
from .protocol import PassBase, PassContext, Rewrite

_KIND = {np.dtype(np.uint32): "u32", np.dtype(np.int32): "i32", np.dtype(np.float32): "f32",
         np.dtype(np.bool_): "bool"}


def lit_value(e: E.Expr):
    """The value the reference gives literal `e` (a 0-d NumPy array), or None."""
    if isinstance(e, E.LitU32):
        return np.asarray(e.value, np.uint32)
    if isinstance(e, E.LitI32):
        return np.asarray(e.value, np.int32)
    if isinstance(e, E.LitF32):
        return canon(np.array([e.bits], np.uint32).view(np.float32)[0])
    if isinstance(e, E.LitBool):
        return np.asarray(e.value, np.bool_)
    return None


def to_lit(v) -> E.Expr | None:
    v = np.asarray(v)
    if v.ndim != 0:
        return None
    if v.dtype == np.uint32:
        return E.LitU32(int(v))
    if v.dtype == np.int32:
        return E.LitI32(int(v))
    if v.dtype == np.float32:
        return E.LitF32(int(np.asarray(v, np.float32).reshape(1).view(np.uint32)[0]))
    if v.dtype == np.bool_:
        return E.LitBool(bool(v))
    return None


def _dtype_kind(v):
    from ..ir.types import DataType
    return {"u32": DataType.U32, "i32": DataType.I32, "f32": DataType.F32, "bool": DataType.Bool}[_KIND[v.dtype]]


def fold_expr(e: E.Expr, facts: Facts) -> E.Expr | None:
    """Fold `e` if all the operands it evaluates are literals (children already folded)."""
    with np.errstate(all="ignore"):
        if isinstance(e, E.BinOpExpr):
            a, b = lit_value(e.left), lit_value(e.right)
            info = BINOPS.get(e.op)
            if a is None or b is None or info is None or not info.supported or info.numpy is None:
                return None
            t = _dtype_kind(a)
            if t not in info.types:
                return None
            if info.error is not None:
                bad = info.error(a, b, t)
                if bad is not None and bool(np.any(bad)):
                    return None  # the reference aborts here at run time: keep it
            return to_lit(info.numpy(a, b, t))
        if isinstance(e, E.UnOpExpr):
            a = lit_value(e.operand)
            info = UNOPS.get(e.op)
            if a is None or info is None or _dtype_kind(a) not in info.types:
                return None
            return to_lit(info.numpy(a, _dtype_kind(a)))
        if isinstance(e, E.Cast):
            a = lit_value(e.value)
            if a is None:
                return None
            c = CASTS.get((_dtype_kind(a), e.target))
            return None if c is None else to_lit(c.numpy(a))
        if isinstance(e, E.Fma):
            vals = [lit_value(x) for x in (e.a, e.b, e.c)]
            if any(v is None or v.dtype != np.float32 for v in vals):
                return None
            return to_lit(fma_f32(*(np.asarray(v, np.float64) for v in vals)))
        if isinstance(e, E.Select):
            c = lit_value(e.cond)
            if c is None:
                return None
            keep, drop = (e.true_val, e.false_val) if bool(c != 0) else (e.false_val, e.true_val)
            if facts.may_trap(drop):
                return None  # both arms are evaluated: the dropped one must be effect- and trap-free
            return keep
    return None


def _holds_atomic(nodes) -> bool:
    return any(isinstance(x, E.Atomic) for x in node_all_exprs(nodes))


def _fold_list(nodes: tuple, consts: dict, facts: Facts, assigned: set, counter: list) -> list:
    out: list = []
    consts = dict(consts)

    def substitute(x: E.Expr) -> Optional[E.Expr]:
        if isinstance(x, E.Var) and x.name in consts:
            counter[0] += 1
            return consts[x.name]
        return None

    def fold(new: E.Expr, old: E.Expr) -> E.Expr:
        if (isinstance(new, E.BinOpExpr) and new.op in (BinOp.Div, BinOp.Mod) and _static_zero(new.right)
                and not _static_zero(old.right)):
            new = with_children(new, (new.left, old.right))  # validation rejects a literal-zero divisor (V044)
        r = fold_expr(new, facts)
        if r is not None:
            counter[0] += 1
            return r
        return new

    def fx(e: E.Expr) -> E.Expr:
        return transform_expr(e, pre=substitute, post=fold)

    for n in nodes:
        orig = n
        n = map_node_exprs(n, fx)
        if isinstance(n, N.Store) and isinstance(n.index, E.LitU32):
            buf = facts.bufs.get(n.buffer)
            if buf is not None and buf.count and n.index.value >= buf.count:
                n = N.Store(n.buffer, orig.index, n.value)  # V036 rejects a literal out-of-range index
        # Statements that never run go, unless they hold an atomic: a program's atomics decide its
        # dispatch grid (vyre_vk/ir/grid.py covers every bound buffer then), so dropping the last
        # one would run another grid (found by test_random_programs_identical).
        if isinstance(n, N.If):
            c = lit_value(n.cond)
            dropped = n.otherwise if c is not None and bool(c != 0) else n.then
            if c is not None and not _holds_atomic(dropped):
                counter[0] += 1
                arm = n.then if bool(c != 0) else n.otherwise
                if arm:
                    out.append(N.Block(tuple(_fold_list(arm, consts, facts, assigned, counter))))
                continue
        if isinstance(n, N.Loop):
            lo, hi = lit_value(n.from_), lit_value(n.to)
            if lo is not None and hi is not None and int(lo) >= int(hi) and not _holds_atomic(n.body):
                counter[0] += 1
                continue
        bodies = [_fold_list(body, consts, facts, assigned, counter) for body in node_bodies(n)]
        n = with_bodies(n, bodies)
        if isinstance(n, N.Let) and n.name not in assigned and lit_value(n.value) is not None:
            consts[n.name] = n.value
        out.append(n)
    return out


def _fold(p: Program) -> tuple[Program, int]:
    """`p` folded, and how many expressions/statements were folded or propagated."""
    facts = Facts(p)
    counter = [0]
    entry = _fold_list(p.entry, {}, facts, assigned_vars(p.entry), counter)
    return replace_entry(p, entry), counter[0]


class ConstantFold(PassBase):
    """Constant folding and propagation (module docstring)."""
    name = "constant_fold"
    kind = "scalar"

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        q, n = _fold(program)
        return Rewrite((q,), detail=n)

    def explain(self, rewrite: Rewrite) -> str:
        return (f"folded {rewrite.detail} constant expression(s)/statement(s) with the reference's own "
                "operator functions")


CONSTANT_FOLD = ConstantFold()


def constant_fold(p: Program) -> tuple[Program, str]:
    """`p` with constants folded and propagated, and the one-line why.

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
    >>> p = Program.wrapped([BufferDecl.output("out", 0, DataType.U32).with_count(1)], (1, 1, 1),
    ...                     [Node.store("out", Expr.u32(0), Expr.add(Expr.u32(2), Expr.u32(3)))])
    >>> q, why = constant_fold(p)
    >>> why.split(" constant")[0]
    'folded 1'
    """
    return CONSTANT_FOLD.on(p)
