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
from ..ir.walk import walk_expr


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


def _is(e: E.Expr, op: BinOp, left: E.Expr, right: Optional[E.Expr] = None) -> bool:
    return isinstance(e, E.BinOpExpr) and e.op is op and e.left == left and (right is None or e.right == right)


def match_welford(ch, facts) -> Optional[Welford]:
    """The chain's step as Welford's update (module docstring) with zero inits, or None."""
    inits = {s.name: s.value for s in ch.pre if isinstance(s, N.Let)}
    step = ch.loop.body[1].then if len(ch.loop.body) == 2 and isinstance(ch.loop.body[1], N.If) else ()
    if len(step) != 6 or len(inits) != 3 or len(ch.pre) != 3:
        return None
    lx, an, ld, am1, ld2, am2 = step
    if not all(isinstance(s, t) for s, t in zip(step, (N.Let, N.Assign, N.Let, N.Assign, N.Let, N.Assign))):
        return None
    n, m1, m2 = an.name, am1.name, am2.name
    if set(inits) != {n, m1, m2} or inits[n] != E.LitU32(0) or inits[m1] != E.Expr.f32(0.0) or inits[m2] != E.Expr.f32(0.0):
        return None
    if facts.type_of(E.Var(n)) is not DataType.U32 or facts.type_of(E.Var(m1)) is not DataType.F32:
        return None
    if {x.name for x in walk_expr(lx.value) if isinstance(x, E.Var)} & set(inits):
        return None
    x, d, d2 = E.Var(lx.name), E.Var(ld.name), E.Var(ld2.name)
    ok = (_is(an.value, BinOp.Add, E.Var(n), E.LitU32(1)) and _is(ld.value, BinOp.Sub, x, E.Var(m1))
          and _is(am1.value, BinOp.Add, E.Var(m1), E.BinOpExpr(BinOp.Div, d, E.Cast(DataType.F32, E.Var(n))))
          and _is(ld2.value, BinOp.Sub, x, E.Var(m1)) and _is(am2.value, BinOp.Add, E.Var(m2), E.BinOpExpr(BinOp.Mul, d, d2)))
    return Welford(n, m1, m2) if ok else None

