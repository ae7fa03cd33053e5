"""Idle workgroups exit at once: a program with workgroup memory or atomics gets a grid that
covers its largest buffer (vyre's rule), often far more workgroups than ever write anything.

vyre's cross_entropy runs one workgroup per token, but its grid covers the logits: 128,000
workgroups for 1,024 tokens. Each idle one still runs the max and sum trees (barriers,
workgroup memory) before finding that it stores nothing. When every store to a storage buffer
and every atomic sits under a condition that bounds ``workgroup_x < N`` (directly, or through
``id < M``), a workgroup at or past ``N`` has no effect that anyone can see; wrapping the
whole body in ``if workgroup_x < N`` (one test, the same for every lane of a workgroup, so its
barriers stay uniform) changes no result and makes those workgroups free.

Refused: programs without workgroup memory or atomics (their grid follows their results),
anything that may trap (an idle workgroup's trap is an effect), an effect without such a bound.

Example::

    >>> from vyre_vk.ops import get
    >>> p = guard_idle(get("vyre-libs::nn::cross_entropy").build_with(n=3, vocab_size=1000))
    >>> cond = p.entry[0].body[0].cond
    >>> cond.left, cond.right
    (WorkgroupId(axis=0), LitU32(value=3))
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.grid import dispatch_grid, has_workgroup_or_atomic
from ..ir.optable import BinOp
from ..ir.program import Program, Region
from ..ir.walk import node_exprs, walk_expr, walk_nodes
from .analysis import Facts, assigned_vars
from .keyed import literal_limits
from .phases import invocation_pure
from .protocol import PassBase, PassContext, Rewrite

_WGX, _GID = E.WorkgroupId(0), E.InvocationId(0)


def _bound(conds: list, env: dict, tile: int) -> Optional[int]:
    """Workgroups the conditions allow (``workgroup_x < N``: N; ``id < M``: ceil(M / T))."""
    ns = [n if left == _WGX else -(-n // tile) for left, n in literal_limits(conds, env) if left in (_WGX, _GID)]
    return min(ns, default=None)


def idle_bound(p: Program) -> tuple[Optional[int], str]:
    """The workgroups that can have an effect (``wgx < N``), or (None, why not)."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None, "not one Region over a 1-D workgroup"
    if not has_workgroup_or_atomic(p):
        return None, "the grid follows the results"
    root, tile = p.entry[0], p.workgroup_size[0]
    if any(isinstance(n, (N.Trap, N.Return) + N.UNSUPPORTED_NODES) for n in walk_nodes(root.body)):
        return None, "a trap or return"
    facts = Facts(p)
    if any(facts.may_trap(e) for n in walk_nodes(root.body) for e in node_exprs(n)):
        return None, "an expression that may trap"
    wg = {b.name for b in p.buffers if b.is_workgroup}
    mutated = assigned_vars(root.body)
    worst: list = [0]
    ok: list = [True]

    def scan(nodes, conds, env):
        env = dict(env)
        for n in nodes:
            if isinstance(n, N.Let) and n.name not in mutated and invocation_pure(n.value, env, divisions=True):
                env[n.name] = n.value
            effect = (isinstance(n, N.Store) and n.buffer not in wg) or any(
                isinstance(x, E.Atomic) and x.buffer not in wg for e in node_exprs(n) for x in walk_expr(e))
            if effect:
                b = _bound(conds, env, tile)
                if b is None:
                    ok[0] = False
                else:
                    worst[0] = max(worst[0], b)
            if isinstance(n, N.If):
                scan(n.then, conds + [n.cond], env)
                scan(n.otherwise, conds, env)
            elif isinstance(n, (N.Loop, N.Block, Region)):
                scan(n.body, conds, env)
    scan(root.body, [], {})
    if not ok[0]:
        return None, "an effect without a workgroup bound"
    n = worst[0]
    if n >= dispatch_grid(p, {})[0]:
        return None, "no workgroup is idle"
    return n, ""


def guard_idle(p: Program) -> Optional[Program]:
    n, _ = idle_bound(p)
    if n is None:
        return None
    root = p.entry[0]
    body = (N.If(E.BinOpExpr(BinOp.Lt, _WGX, E.LitU32(n)), tuple(root.body), ()),)
    return dataclasses.replace(p, entry=(dataclasses.replace(root, body=body),))


class GuardIdle(PassBase):
    """Idle-workgroup exit (module docstring)."""
    name = "guard_idle"

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        out = guard_idle(program)
        return None if out is None else Rewrite((out,), (), detail=(idle_bound(program)[0], dispatch_grid(program, {})[0]))

    def explain(self, rewrite: Rewrite) -> str:
        n, grid = rewrite.detail
        return (f"only workgroups < {n} store or run atomics (the grid at declared sizes has {grid}): the others "
                "exit at a workgroup-uniform test instead of running the program for nothing")


GUARD_IDLE = GuardIdle()
