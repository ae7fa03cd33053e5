"""Dead-code elimination.

Removes a `let` whose variable is never read afterwards (together with the assignments
to it), and `if`/`loop`/block statements left with nothing inside, but only when every
removed expression is free of effects and cannot trap (removing an i32 division that
the reference would abort on would turn an error into a result). Stores, atomics,
barriers, returns and traps always stay.
"""
from __future__ import annotations

from ..ir import node as N
from ..ir.program import Program
from ..ir.walk import node_bodies, rewrite_nodes, walk_nodes, with_bodies
from .analysis import Facts, read_vars, replace_entry
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
        while i >= 0:  # backwards: a removal can make an earlier let dead
            n = nodes[i]
            if node_bodies(n):
                n = nodes[i] = with_bodies(n, [self.run_list(b) for b in node_bodies(n)])
                if self._empty_removable(n):
                    del nodes[i]
                    self.removed += 1
                    i -= 1
                    continue
            if isinstance(n, N.Let) and not self.facts.may_trap(n.value):
                rest = nodes[i + 1:]
                if n.name not in _reads_excluding_self(rest, n.name):
                    assigns = [a for a in walk_nodes(rest) if isinstance(a, N.Assign) and a.name == n.name]
                    if not any(self.facts.may_trap(a.value) for a in assigns):
                        nodes[i + 1:] = _drop_assigns(rest, n.name)
                        del nodes[i]
                        self.removed += 1 + len(assigns)
                        # the dropped assignments may have been the last readers of other lets
                        i = len(nodes) - 1 if assigns else i - 1
                        continue
            i -= 1
        return nodes


def _reads_excluding_self(nodes, name: str) -> set:
    """Variables read in `nodes`, not counting `name`'s reads inside assignments to `name`."""
    reads = set()
    for n in walk_nodes(nodes):
        if isinstance(n, N.Assign) and n.name == name:
            continue
        reads |= read_vars([_shallow(n)])
    return reads


def _shallow(n):
    bodies = node_bodies(n)
    return with_bodies(n, [() for _ in bodies]) if bodies else n


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
