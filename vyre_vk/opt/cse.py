"""Common-subexpression elimination.

An expression tree (at least one operator, no effects, cannot trap, loads only from
buffers the program never writes) that is evaluated more than once in a statement list is
bound once by a new `let` placed right before the first statement that evaluates it, and
later occurrences read that variable. The bound value is computed by the same operations
in the same order, so results are bit-identical. A binding stops being available when a
variable it reads is assigned (a loop that assigns it invalidates it before its body).
"""
from __future__ import annotations

from collections import Counter

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program
from .analysis import Facts, NameSource, all_names, assigned_vars, expr_vars, map_node_exprs, replace_entry, with_bodies


def _candidate(e: E.Expr, facts: Facts) -> bool:
    return bool(E.children(e)) and facts.is_pure(e)


def _count(nodes, facts: Facts) -> Counter:
    """How often each candidate is evaluated in `nodes` (own expressions and nested lists)."""
    c: Counter = Counter()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        for e in N.node_exprs(n):
            for x, pure in facts.pure_subtrees(e):
                if pure and E.children(x):
                    c[x] += 1
        for _, body in N.node_bodies(n):
            stack.extend(body)
    return c


class _Cse:
    def __init__(self, p: Program) -> None:
        self.facts = Facts(p)
        self.fresh = NameSource(all_names(p), "cse_")
        self.made = 0

    def replace(self, e: E.Expr, avail: dict) -> E.Expr:
        if e in avail:
            return E.Var(avail[e])
        kids = E.children(e)
        if not kids:
            return e
        from .analysis import rebuild
        new = tuple(self.replace(k, avail) for k in kids)
        return rebuild(e, new) if any(a is not b for a, b in zip(new, kids)) else e

    def run_list(self, nodes: tuple, avail: dict) -> list:
        avail = dict(avail)
        counts = _count(nodes, self.facts)
        out: list = []
        for n in nodes:
            # bind repeated candidates this statement evaluates itself (largest first)
            stack = list(N.node_exprs(n))[::-1]
            while stack:
                x = stack.pop()
                if x in avail:
                    continue
                if counts[x] < 2 or not _candidate(x, self.facts):
                    stack.extend(reversed(E.children(x)))
                    continue
                name = self.fresh()
                out.append(N.Let(name, self.replace(x, avail)))
                avail[x] = name
                self.made += 1
            n = map_node_exprs(n, lambda e: self.replace(e, avail))
            written = assigned_vars([n]) if N.node_bodies(n) else set()
            if isinstance(n, N.Assign):
                written = {n.name}
            if written:  # a loop body sees its own assignments from the second iteration on
                avail = {k: v for k, v in avail.items() if not (expr_vars(k) & written)}
            if N.node_bodies(n):
                n = with_bodies(n, [self.run_list(body, avail) for _, body in N.node_bodies(n)])
            out.append(n)
        return out


def cse(p: Program) -> tuple[Program, str]:
    c = _Cse(p)
    entry = c.run_list(p.entry, {})
    return replace_entry(p, entry), f"bound {c.made} repeated pure expression(s) to a let evaluated once"
