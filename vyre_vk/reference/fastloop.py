"""The reference's accumulate fast path for loops.

Loops whose body only accumulates (`acc = acc + term` with terms independent of the
accumulators, plus `let`s) are evaluated for all iterations at once and summed in iteration
order (np.add.accumulate is strictly sequential), which is bit-identical to the step-by-step
loop; if a partial sum is subnormal (where per-step flush-to-zero would differ) the loop falls
back to stepping.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import FLT_MIN, BinOp, canon
from ..ir.walk import walk_expr

#: One step of a plan: ("let" | "acc", variable name, expression: the let's value or the added term).
Plan = list[tuple[str, str, E.Expr]]
_BLOCKERS = (E.Atomic, E.Call) + E.SUBGROUP_COLLECTIVES


def fast_plan(n: N.Loop) -> Optional[Plan]:
    """The plan of a loop whose body is `let`s and `acc = acc + term` with terms independent of
    every accumulator (and free of atomics, calls and subgroup collectives); None otherwise."""
    accs = [s.name for s in n.body if isinstance(s, N.Assign)]
    if not accs or len(set(accs)) != len(accs):
        return None
    acc_set = set(accs)
    plan: Plan = []
    for s in n.body:
        if isinstance(s, N.Let):
            e = s.value
            kind = "let"
        elif isinstance(s, N.Assign):
            v = s.value
            if not (isinstance(v, E.BinOpExpr) and v.op is BinOp.Add):
                return None
            if v.left == E.Var(s.name):
                e = v.right
            elif v.right == E.Var(s.name):
                e = v.left
            else:
                return None
            kind = "acc"
        else:
            return None
        for x in walk_expr(e):
            if isinstance(x, _BLOCKERS) or (isinstance(x, E.Var) and x.name in acc_set):
                return None
        plan.append((kind, s.name, e))
    return plan


def run_fast_loop(mach: Any, var: str, plan: Plan, a: int, b: int, m: np.ndarray, full: bool) -> bool:
    """Run the loop `var` in [a, b) of `plan` on machine `mach` (its `env` and `ev`) for every
    iteration at once; False (nothing changed) if it cannot be done bit-identically."""
    steps = b - a
    env = mach.env
    temps: list[str] = [var]
    env[var] = np.arange(a, b, dtype=np.uint32).reshape(steps, 1)
    results: dict[str, np.ndarray] = {}
    try:
        for kind, name, e in plan:
            if kind == "let":
                env[name] = np.asarray(mach.ev(e, m))
                temps.append(name)
                continue
            term = np.asarray(mach.ev(e, m))
            acc0 = np.asarray(env[name])
            if term.dtype != acc0.dtype:
                return False
            if term.ndim != 2:  # loop-invariant term: the same value every iteration
                term = term[None]
            rest = np.broadcast_shapes(term.shape[1:], acc0.shape)
            term = np.broadcast_to(term, (steps,) + rest)
            if acc0.dtype == np.float32:
                seq = np.empty((steps + 1,) + rest, np.float32)
                seq[0] = acc0
                seq[1:] = term
                np.add.accumulate(seq, axis=0, out=seq)  # strictly sequential, float32
                part = seq[1:]
                if np.any((np.abs(part) < FLT_MIN) & (part != 0)):
                    return False  # a subnormal partial sum: per-step flush-to-zero would differ
                res = canon(seq[-1])
            else:
                res = (acc0 + term.sum(axis=0, dtype=acc0.dtype)).astype(acc0.dtype)  # wrapping
            results[name] = res
    finally:
        for t in temps:
            env.pop(t, None)
    for name, res in results.items():
        env[name] = res if full else np.where(m, res, env[name])
    return True


__all__ = ["Plan", "fast_plan", "run_fast_loop"]
