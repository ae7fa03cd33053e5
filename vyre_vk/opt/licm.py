"""Loop-invariant code motion within one invocation.

A maximal sub-expression of a loop body is moved into a `let` right before the loop when
it reads no variable the loop binds or assigns (nor the loop variable), loads only from
buffers the loop never stores to (and no workgroup or atomically-written buffer), has no
effect and cannot trap. Because a hoisted expression can neither trap nor write, it is
safe to evaluate even when the loop runs zero times; it is computed by the same
operations in the same order, so f32 results are bit-identical. Inner loops are processed
first, so an expression can leave several loop levels.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program
from ..ir.walk import expr_children, node_all_exprs, replace_expr, rewrite_nodes, walk_expr, walk_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, defined_vars, replace_entry, stored_buffers
from .protocol import PassBase, PassContext, Rewrite


class _Licm:
    def __init__(self, p: Program) -> None:
        self.facts = Facts(p)
        self.atomic_bufs = {x.buffer for x in node_all_exprs(p.entry) if isinstance(x, E.Atomic)}
        self.fresh = NameSource(all_names(p), "licm_")
        self.hoisted = 0

    def run_list(self, nodes) -> tuple:
        """Inner loops first, so an expression can leave several loop levels."""
        def at_loop(n: N.Node):
            if not isinstance(n, N.Loop):
                return None
            lets, loop = self.hoist(n)
            return (*lets, loop)
        return rewrite_nodes(nodes, post=at_loop)

    def invariant(self, x: E.Expr, blocked: set, written: set) -> bool:
        if not expr_children(x) or self.facts.may_trap(x):
            return False
        for y in walk_expr(x):
            if isinstance(y, E.Var) and y.name in blocked:
                return False
            if isinstance(y, E.Load) and (y.buffer in written or y.buffer in self.facts.workgroup_bufs
                                          or y.buffer in self.atomic_bufs):
                return False
        return True

    def hoist(self, loop: N.Loop):
        blocked = assigned_vars(loop.body) | defined_vars(loop.body) | {loop.var}
        written = stored_buffers(loop.body)
        made: dict = {}
        lets: list = []

        def as_var(e: E.Expr):  # a maximal invariant subtree becomes a variable (top-down)
            if not self.invariant(e, blocked, written):
                return None
            name = made.get(e)
            if name is None:
                name = made[e] = self.fresh()
                lets.append(N.Let(name, e))
                self.hoisted += 1
            return E.Var(name)

        new_body = rewrite_nodes(loop.body, expr=lambda e: replace_expr(e, as_var))
        return lets, N.Loop(loop.var, loop.from_, loop.to, tuple(new_body))


class LoopInvariantMotion(PassBase):
    """Loop-invariant code motion (module docstring)."""
    name = "licm"
    kind = "scalar"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        lm = _Licm(program)
        entry = lm.run_list(program.entry)
        return Rewrite((replace_entry(program, entry),), detail=lm.hoisted)

    def explain(self, rewrite: Rewrite) -> str:
        return f"moved {rewrite.detail} loop-invariant expression(s) out of their loop"


LICM = LoopInvariantMotion()


def licm(p: Program) -> tuple[Program, str]:
    """`p` with loop-invariant expressions bound before their loop, and the one-line why."""
    return LICM.on(p)
