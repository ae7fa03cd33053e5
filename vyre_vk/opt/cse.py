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
from ..ir.walk import expr_children, map_node_exprs, node_bodies, node_exprs, replace_expr, walk_nodes, with_bodies
from .analysis import Facts, NameSource, all_names, assigned_vars, expr_vars, replace_entry
from .protocol import PassBase, PassContext, Rewrite


def _candidate(e: E.Expr, facts: Facts) -> bool:
    return bool(expr_children(e)) and facts.is_pure(e)


def _count(nodes, facts: Facts) -> Counter:
    """How often each candidate is evaluated in `nodes` (own expressions and nested lists)."""
    c: Counter = Counter()
    for n in walk_nodes(nodes):
        for e in node_exprs(n):
            for x, pure in facts.pure_subtrees(e):
                if pure and expr_children(x):
                    c[x] += 1
    return c


class _Cse:
    def __init__(self, p: Program) -> None:
        self.facts = Facts(p)
        self.fresh = NameSource(all_names(p), "cse_")
        self.made = 0

    def replace(self, e: E.Expr, avail: dict) -> E.Expr:
        return replace_expr(e, lambda x: E.Var(avail[x]) if x in avail else None)

    def run_list(self, nodes: tuple, avail: dict) -> list:
        avail = dict(avail)
        counts = _count(nodes, self.facts)
        out: list = []
        for n in nodes:
            # bind repeated candidates this statement evaluates itself (largest first)
            stack = list(node_exprs(n))[::-1]
            while stack:
                x = stack.pop()
                if x in avail:
                    continue
                if counts[x] < 2 or not _candidate(x, self.facts):
                    stack.extend(reversed(expr_children(x)))
                    continue
                name = self.fresh()
                out.append(N.Let(name, self.replace(x, avail)))
                avail[x] = name
                self.made += 1
            n = map_node_exprs(n, lambda e: self.replace(e, avail))
            bodies = node_bodies(n)
            written = assigned_vars([n]) if bodies else set()
            if isinstance(n, N.Assign):
                written = {n.name}
            if written:  # a loop body sees its own assignments from the second iteration on
                avail = {k: v for k, v in avail.items() if not (expr_vars(k) & written)}
            if bodies:
                n = with_bodies(n, [self.run_list(body, avail) for body in bodies])
            out.append(n)
        return out


class CommonSubexpressions(PassBase):
    """Common-subexpression elimination (module docstring)."""
    name = "cse"
    kind = "scalar"

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        c = _Cse(program)
        entry = c.run_list(program.entry, {})
        return Rewrite((replace_entry(program, entry),), detail=c.made)

    def explain(self, rewrite: Rewrite) -> str:
        return f"bound {rewrite.detail} repeated pure expression(s) to a let evaluated once"


CSE = CommonSubexpressions()


def cse(p: Program) -> tuple[Program, str]:
    """`p` with repeated pure expressions bound once, and the one-line why."""
    return CSE.on(p)
