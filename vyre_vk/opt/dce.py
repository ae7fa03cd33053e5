"""Dead-code elimination.

Removes a `let` whose variable is never read afterwards (together with the assignments
to it), and `if`/`loop`/block statements left with nothing inside, but only when every
removed expression is free of effects and cannot trap (removing an i32 division that
the reference would abort on would turn an error into a result). Stores, atomics,
barriers, returns and traps always stay.
"""
from __future__ import annotations

from collections import Counter

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program
from ..ir.walk import node_bodies, node_exprs, rewrite_nodes, walk_expr, walk_nodes, with_bodies
from .analysis import Facts, replace_entry
from .protocol import PassBase, PassContext, Rewrite


def _drop_assigns(nodes, name: str) -> list:
    return list(rewrite_nodes(nodes, stmt=lambda n: () if isinstance(n, N.Assign) and n.name == name else None))


class _Dce:
    def __init__(self, p: Program) -> None:
        self.facts = Facts(p)
        self.removed = 0

    def _empty_removable(self, n) -> bool:
        if isinstance(n, N.Block):
            return not n.body
        if isinstance(n, N.If):
            return not n.then and not n.otherwise and not self.facts.may_trap(n.cond)
        if isinstance(n, N.Loop):
            return not n.body and not self.facts.may_trap(n.from_) and not self.facts.may_trap(n.to)
        return False

    def run_list(self, nodes) -> list:
        nodes = list(nodes)
        i = len(nodes) - 1
        after = _Reads()  # what nodes[i + 1:] read and assign: one walk per statement, not per let
        while i >= 0:  # backwards: a removal can make an earlier let dead
            n = nodes[i]
            if node_bodies(n):
                n = nodes[i] = with_bodies(n, [self.run_list(b) for b in node_bodies(n)])
                if self._empty_removable(n):
                    del nodes[i]
                    self.removed += 1
                    i -= 1
                    continue
            if isinstance(n, N.Let) and not self.facts.may_trap(n.value) and not after.reads(n.name):
                rest = nodes[i + 1:]
                assigns = ([a for a in walk_nodes(rest) if isinstance(a, N.Assign) and a.name == n.name]
                           if after.assigns[n.name] else [])
                if not any(self.facts.may_trap(a.value) for a in assigns):
                    nodes[i + 1:] = _drop_assigns(rest, n.name) if assigns else rest
                    del nodes[i]
                    self.removed += 1 + len(assigns)
                    if assigns:  # they may have been the last readers of other lets: start over
                        i, after = len(nodes) - 1, _Reads()
                    else:
                        i -= 1
                    continue
            after.add(n)
            i -= 1
        return nodes


class _Reads:
    """Counts over a run of statements (nested ones included): per variable, the statements that
    read it, those of them that are assignments to it, and the assignments to it. A variable is
    read there, not counting its own assignments' reads, iff the first count beats the second."""

    def __init__(self) -> None:
        self.total: Counter = Counter()
        self.own: Counter = Counter()
        self.assigns: Counter = Counter()

    def add(self, stmt: N.Node) -> None:
        for m in walk_nodes([stmt]):
            names = {x.name for e in node_exprs(m) for x in walk_expr(e) if isinstance(x, E.Var)}
            self.total.update(names)
            if isinstance(m, N.Assign):
                self.assigns[m.name] += 1
                if m.name in names:
                    self.own[m.name] += 1

    def reads(self, name: str) -> bool:
        return self.total[name] > self.own[name]


class DeadCode(PassBase):
    """Dead-code elimination (module docstring)."""
    name = "dce"
    kind = "scalar"

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        d = _Dce(program)
        # top-level statements (the program's regions) stay; their bodies are cleaned
        entry = [with_bodies(r, [d.run_list(b) for b in node_bodies(r)]) for r in program.entry]
        return Rewrite((replace_entry(program, entry),), detail=d.removed)

    def explain(self, rewrite: Rewrite) -> str:
        return f"removed {rewrite.detail} dead statement(s) (unused lets/assignments, empty control flow)"


DCE = DeadCode()


def dce(p: Program) -> tuple[Program, str]:
    """`p` without dead lets/assignments and empty control flow, and the one-line why."""
    return DCE.on(p)
