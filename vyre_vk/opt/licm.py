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
from .analysis import (Facts, NameSource, all_names, assigned_vars, defined_vars, map_node_exprs, rebuild,
                       replace_entry, stored_buffers, with_bodies)


class _Licm:
    def __init__(self, p: Program) -> None:
        self.facts = Facts(p)
        self.atomic_bufs = {x.buffer for n in p.entry for x in _exprs([n]) if isinstance(x, E.Atomic)}
        self.fresh = NameSource(all_names(p), "licm_")
        self.hoisted = 0

    def run_list(self, nodes) -> list:
        out: list = []
        for n in nodes:
            if N.node_bodies(n):
                n = with_bodies(n, [self.run_list(b) for _, b in N.node_bodies(n)])
            if isinstance(n, N.Loop):
                lets, n = self.hoist(n)
                out.extend(lets)
            out.append(n)
        return out

    def invariant(self, x: E.Expr, blocked: set, written: set) -> bool:
        if not E.children(x) or self.facts.may_trap(x):
            return False
        for y in E.walk(x):
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

        def rewrite(e: E.Expr) -> E.Expr:
            if self.invariant(e, blocked, written):
                name = made.get(e)
                if name is None:
                    name = made[e] = self.fresh()
                    lets.append(N.Let(name, e))
                    self.hoisted += 1
                return E.Var(name)
            kids = E.children(e)
            new = tuple(rewrite(k) for k in kids)
            return rebuild(e, new) if any(a is not b for a, b in zip(new, kids)) else e

        def body(nodes):
            res = []
            for n in nodes:
                n = map_node_exprs(n, rewrite)
                if N.node_bodies(n):
                    n = with_bodies(n, [body(b) for _, b in N.node_bodies(n)])
                res.append(n)
            return res

        new_body = body(loop.body)
        return lets, N.Loop(loop.var, loop.from_, loop.to, tuple(new_body))


def _exprs(nodes):
    from .analysis import node_all_exprs
    return node_all_exprs(nodes)


def licm(p: Program) -> tuple[Program, str]:
    lm = _Licm(p)
    entry = lm.run_list(p.entry)
    return replace_entry(p, entry), f"moved {lm.hoisted} loop-invariant expression(s) out of their loop"
