"""Welford's running mean and variance, recognised in a fold step so the fast precision can merge
partial states (split_chains.py).

The step ``x = X; n = n + 1; d = x - M1; M1 = M1 + d / f32(n); d2 = x - M1; M2 = M2 + d * d2``
(reduce_variance's lanes) is not a sum: each update reads the others. Two states over disjoint
pieces merge exactly in real arithmetic by Chan, Golub and LeVeque's pairwise formula, which is
how vyre's own tree combines its lanes::

    n = na + nb;  d = M1b - M1a;  M1 = M1a + d * (nb / n);  M2 = M2a + M2b + d*d * (na * nb / n)

(``n == 0``: both empty, the state stays 0). Its rounding error is of the order of Welford's own
(Chan et al. 1979); docs/PRECISION.md states the bound the fast precision is tested against.

>>> from vyre_vk.ir import expr as E
>>> w = Welford("n", "M1", "M2")
>>> from vyre_vk.opt.analysis import NameSource
>>> stmts = w.merge({"n": E.Var("nb"), "M1": E.Var("m1b"), "M2": E.Var("m2b")}, NameSource(set(), "w_"))
>>> [type(s).__name__ for s in stmts][-3:]
['Assign', 'Assign', 'Assign']
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.types import DataType
from ..ir.walk import replace_expr, walk_expr


@dataclasses.dataclass(frozen=True)
class Welford:
    """The state's three accumulators: count (u32), mean and M2 (f32)."""
    n: str
    m1: str
    m2: str

    def merge(self, other: dict, fresh) -> tuple:
        """Statements folding the state `other` ({accumulator: expression}) into this one."""
        nb, m1b, m2b, nc, d, na_f, nb_f, nc_f = (fresh(h) for h in ("nb", "m1b", "m2b", "nc", "d", "naf", "nbf", "ncf"))
        v, f32 = E.Var, lambda e: E.Cast(DataType.F32, e)
        b = E.BinOpExpr
        empty = b(BinOp.Eq, v(nc), E.LitU32(0))
        return (
            N.Let(nb, other[self.n]), N.Let(m1b, other[self.m1]), N.Let(m2b, other[self.m2]),
            N.Let(nc, b(BinOp.Add, v(self.n), v(nb))),
            N.Let(d, b(BinOp.Sub, v(m1b), v(self.m1))),
            N.Let(na_f, f32(v(self.n))), N.Let(nb_f, f32(v(nb))), N.Let(nc_f, f32(v(nc))),
            N.Assign(self.m1, E.Select(empty, E.Expr.f32(0.0), b(BinOp.Add, v(self.m1),
                                                               b(BinOp.Mul, v(d), b(BinOp.Div, v(nb_f), v(nc_f)))))),
            N.Assign(self.m2, b(BinOp.Add, b(BinOp.Add, v(self.m2), v(m2b)), b(BinOp.Mul, b(BinOp.Mul, v(d), v(d)), E.Select(
                empty, E.Expr.f32(0.0), b(BinOp.Div, b(BinOp.Mul, v(na_f), v(nb_f)), v(nc_f)))))),
            N.Assign(self.n, v(nc)),
        )


def match_welford(ch, facts) -> Optional[Welford]:
    """The chain's loop body (or its one guarded block) as Welford's update (module docstring), with
    zero inits among the chain's pre-loop lets, or None. The body is run symbolically (each let and
    assignment substituted into the next), so common subexpressions bound to lets and renamed
    temporaries match too."""
    step = ch.loop.body
    while len(step) >= 1 and isinstance(step[-1], N.If) and not step[-1].otherwise and all(
            isinstance(s, N.Let) for s in step[:-1]):
        step = step[-1].then  # spread's `let idx = chunk * T + local; if idx < n { ... }`
    if not all(isinstance(s, (N.Let, N.Assign)) for s in step):
        return None
    order = list(dict.fromkeys(s.name for s in step if isinstance(s, N.Assign)))
    inits = {s.name: s.value for s in ch.pre if isinstance(s, N.Let)}
    ints = [a for a in order if facts.type_of(E.Var(a)) is DataType.U32]
    floats = [a for a in order if facts.type_of(E.Var(a)) is DataType.F32]
    if len(order) != 3 or len(ints) != 1 or len(floats) != 2:
        return None
    w = Welford(ints[0], floats[0], floats[1])
    if any(inits.get(a) != z for a, z in ((w.n, E.LitU32(0)), (w.m1, E.Expr.f32(0.0)), (w.m2, E.Expr.f32(0.0)))):
        return None
    sym: dict = {}
    for s in step:
        sym[s.name] = replace_expr(s.value, lambda x: sym.get(x.name) if isinstance(x, E.Var) else None)
    n0, m10, m20 = E.Var(w.n), E.Var(w.m1), E.Var(w.m2)
    b = E.BinOpExpr
    n1 = b(BinOp.Add, n0, E.LitU32(1))
    m1 = sym[w.m1]
    # M1' = M1 + (X - M1) / f32(n + 1), X reading no accumulator
    if not (isinstance(m1, E.BinOpExpr) and m1.op is BinOp.Add and m1.left == m10 and isinstance(m1.right, E.BinOpExpr)
            and m1.right.op is BinOp.Div and m1.right.right == E.Cast(DataType.F32, n1)
            and isinstance(m1.right.left, E.BinOpExpr) and m1.right.left.op is BinOp.Sub and m1.right.left.right == m10):
        return None
    x = m1.right.left.left
    if {v.name for v in walk_expr(x) if isinstance(v, E.Var)} & {w.n, w.m1, w.m2}:
        return None
    m2 = b(BinOp.Add, m20, b(BinOp.Mul, b(BinOp.Sub, x, m10), b(BinOp.Sub, x, m1)))
    return w if sym[w.n] == n1 and sym[w.m2] == m2 else None
