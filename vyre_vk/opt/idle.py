"""Idle workgroups exit at once: a program with workgroup memory or atomics gets a grid that
covers its largest buffer (vyre's rule), often far more workgroups than ever write anything.

vyre's cross_entropy runs one workgroup per token, but its grid covers the logits: 128,000
workgroups for 1,024 tokens. Each idle one still runs the max and sum trees (barriers,
workgroup memory) before finding that it stores nothing. When every store to a storage buffer
and every atomic sits under a condition that bounds ``workgroup_x < N`` (directly, or through
``id < M``), a workgroup at or past ``N`` has no effect that anyone can see; wrapping the
whole body in ``if workgroup_x < N`` (one test, the same for every lane of a workgroup, so its
barriers stay uniform) changes no result and makes those workgroups free.

A program no id reaches (every invocation runs the same code, vyre's single-invocation ops such
as fft_convolve_circular_complex) with workgroups of one invocation gets a grid of several all the
same, and the reference runs them one after another. Where a second run stores exactly what the
first did (repeated(): every load from a storage buffer the program writes reads an element an
earlier unconditional store of this run wrote), only workgroup 0 has an effect the reference
shows; the others, run at the same time on a GPU, would race on the buffers it rewrites in place
(H100: 2 of 8 outputs wrong, a second scaling applied), so they exit (``workgroup_x < 1``).

Refused: programs without workgroup memory or atomics (their grid follows their results) unless
they repeat as above, anything that may trap (an idle workgroup's trap is an effect), an effect
without such a bound.

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
from ..ir.walk import node_all_exprs, node_bodies, node_exprs, walk_expr, walk_nodes
from .analysis import Facts, assigned_vars
from .keyed import literal_limits
from .phases import invocation_pure
from .protocol import PassBase, PassContext, Rewrite

_WGX, _GID = E.WorkgroupId(0), E.InvocationId(0)


def _bound(conds: list, env: dict, tile: int) -> Optional[int]:
    """Workgroups the conditions allow (``workgroup_x < N``: N; ``id < M``: ceil(M / T))."""
    ns = [n if left == _WGX else -(-n // tile) for left, n in literal_limits(conds, env) if left in (_WGX, _GID)]
    return min(ns, default=None)


_IDS = (E.InvocationId, E.WorkgroupId, E.LocalId, E.SubgroupLocalId)
REPEATED = "every invocation runs the same code and a second run stores what the first did"


def repeated(p: Program) -> bool:
    """Whether every invocation of `p` runs the same code (no id reaches it) and running it again
    stores exactly what the first run did: no atomics, and each load from a storage buffer it
    stores to reads a literal element that an earlier store outside any branch or loop wrote.

        >>> from vyre_vk.ops import get
        >>> repeated(get("vyre-libs::math::fft::fft_convolve_circular_complex").build())
        True
        >>> repeated(get("vyre-libs::nn::softmax").build_with(n=64))
        False
    """
    xs = [x for e in node_all_exprs(p.entry) for x in walk_expr(e)]
    if any(isinstance(x, _IDS + (E.Atomic,)) for x in xs):
        return False
    wg = {b.name for b in p.buffers if b.is_workgroup}
    written = {n.buffer for n in walk_nodes(p.entry) if isinstance(n, N.Store) and n.buffer not in wg}
    stored: dict[str, set[int]] = {}

    def scan(nodes, top: bool) -> bool:
        for n in nodes:
            for e in node_exprs(n):
                for x in walk_expr(e):
                    if isinstance(x, E.Load) and x.buffer in written and not (
                            isinstance(x.index, E.LitU32) and x.index.value in stored.get(x.buffer, ())):
                        return False
            if top and isinstance(n, N.Store) and n.buffer in written and isinstance(n.index, E.LitU32):
                stored.setdefault(n.buffer, set()).add(n.index.value)
            inner = top and isinstance(n, (N.Block, Region))
            if not all(scan(body, inner) for body in node_bodies(n)):
                return False
        return True
    return scan(p.entry, True)


def idle_bound(p: Program) -> tuple[Optional[int], str]:
    """The workgroups that can have an effect (``wgx < N``), or (None, why not)."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None, "not one Region over a 1-D workgroup"
    root, tile = p.entry[0], p.workgroup_size[0]
    if any(isinstance(n, (N.Trap, N.Return) + N.UNSUPPORTED_NODES) for n in walk_nodes(root.body)):
        return None, "a trap or return"
    facts = Facts(p)
    if any(facts.may_trap(e) for n in walk_nodes(root.body) for e in node_exprs(n)):
        return None, "an expression that may trap"
    if tile == 1 and repeated(p):
        return (1, REPEATED) if dispatch_grid(p, {})[0] > 1 else (None, "no workgroup is idle")
    if not has_workgroup_or_atomic(p):
        return None, "the grid follows the results"
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
    return None if n is None else _guarded(p, n)


def _guarded(p: Program, n: int) -> Program:
    """`p` with its body under ``workgroup_x < n``."""
    root = p.entry[0]
    body = (N.If(E.BinOpExpr(BinOp.Lt, _WGX, E.LitU32(n)), tuple(root.body), ()),)
    return dataclasses.replace(p, entry=(dataclasses.replace(root, body=body),))


class GuardIdle(PassBase):
    """Idle-workgroup exit (module docstring)."""
    name = "guard_idle"

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        n, why = idle_bound(program)
        if n is None:
            return None
        return Rewrite((_guarded(program, n),), (), detail=(n, dispatch_grid(program, {})[0], why))

    def explain(self, rewrite: Rewrite) -> str:
        n, grid, why = rewrite.detail
        if why == REPEATED:
            return (f"{why} (the reference runs them one after another): only workgroup 0 runs, the other "
                    f"{grid - 1} at declared sizes exit instead of racing on the buffers it rewrites")
        return (f"only workgroups < {n} store or run atomics (the grid at declared sizes has {grid}): the others "
                "exit at a workgroup-uniform test instead of running the program for nothing")


GUARD_IDLE = GuardIdle()
