"""Speculative chains: mark the loops whose f32 chain may run in plain IEEE arithmetic, checked.

Exact mode's serial folds are bound by the latency of their chain: on the H200 an exact add
(canonicalise the sum: subnormal -> signed zero, NaN -> one payload; zero sums spelled out)
costs 21.4 ns a step where a plain add costs 2.1 (tools/bench/chain_latency.py). While every
value the chain produces is normal, infinite or NaN, the plain add *is* the exact one up to
NaN payloads, which nothing observes (vyre_vk.ir.chains). So a marked loop runs with plain
arithmetic on its chain (add, sub, mul; division by Markstein's correction where the device's
fma is fused), keeping the smallest exponent field the chain produced, off the chain's
critical path; when that is 0 (a zero or subnormal appeared, or a quotient left the fast
division's window) the loop runs again with the exact helpers from the values saved before
it. The loads, and every value not derived from the chain, keep their exact helpers.

A stored value with at least :data:`MIN_STORE_OPS` f32 operations (an elementwise map's: gelu's
x * (1 + tanh(...)) * 0.5) is computed the same way, then stored once.

The pass itself only wraps each qualifying outermost loop (and each such store) in a ``Region`` named
:data:`~vyre_vk.ir.chains.SPECULATE` (for the reference a plain scope: the same results);
the lowering (vyre_vk.lower.speculate) emits the two loops. Exact precision only (the fast
one's chains are plain already); ``$VYRE_VK_SPECULATE=0`` / ``1`` turns it off / on.

Example::

    >>> from vyre_vk.ops import get
    >>> p, why = SPECULATE_CHAINS.on(get("vyre-libs::math::reduce_variance").build_with(n=4096))
    >>> why
    'loop chunk: chain M1_i, M2_i in IEEE f32, checked; an exact re-run if a zero or subnormal appears'
"""
from __future__ import annotations

import os
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.chains import NO_PEEL, SPECULATE, blocker, carried, chain_vars, loop_types, store_ops
from ..ir.program import Program, Region
from ..ir.walk import node_bodies, node_exprs, rewrite_nodes, walk_nodes, with_bodies
from .analysis import Facts, assigned_vars, replace_entry
from .protocol import PassBase, PassContext, Rewrite

#: A stored value is speculated from this many f32 operations on (one saves too little for the check).
MIN_STORE_OPS = 2
#: Device classes where the pass is off (none: every class measured so far gains).
OFF_BY_CLASS: frozenset = frozenset()


def peel_everywhere() -> bool:
    """Whether every speculative loop runs its first iteration exactly (``$VYRE_VK_SPEC_PEEL=always``)
    or only a loop that starts a chain from a literal (the default, ``auto``: :func:`unpeeled`). H200,
    pass_ab.py, with absorbed products: mlp_backward 1.72 -> 1.45 ms; a first rule that looked at the
    loop's own block alone lost flash_attention (0.47 -> 0.81: its chains start from 0.0 further out).

    >>> peel_everywhere() == (os.environ.get("VYRE_VK_SPEC_PEEL", "auto") == "always")
    True
    """
    return os.environ.get("VYRE_VK_SPEC_PEEL", "auto") == "always"


def unpeeled(block: tuple, facts: Facts, literal: Optional[dict] = None) -> tuple:
    """`block` with each SPECULATE region marked NO_PEEL unless a carried chain variable of its loop
    enters it with a literal value: its latest definition in scope (this block, then the enclosing
    ones, not across an enclosing loop, whose later iterations carry run-time values) sets a literal.
    The exact first iteration is for such a chain: Welford's first step (M1 = 0 + x / 1, then x - M1
    is an exact zero, which fails the check), sums and rescaled sums from 0.0 whose first terms are
    zeros (flash_attention's ``o = r * o + p * v``). Exact first iterations of a chain carried in from
    an enclosing loop (a stream tile's) or loaded cost the most: one per tile, 1/8 of a streamed
    GEMV's steps. The choice only moves time: a chain whose check fails runs again exactly either way."""
    lit = dict(literal or {})
    out = []
    for n in block:
        if (isinstance(n, Region) and n.generator == SPECULATE and n.source_region is None
                and len(n.body) == 1 and isinstance(n.body[0], N.Loop)):
            loop = n.body[0]
            f32 = set(carried(loop)) & chain_vars(loop, loop_types(loop, facts.env, facts.bufs))
            if not any(lit.get(v) for v in f32):
                n = Region(SPECULATE, NO_PEEL, n.body)
        elif node_bodies(n):
            inner = dict(lit)
            if isinstance(n, N.Loop):
                inner.update(dict.fromkeys(assigned_vars(n.body), False))
            n = with_bodies(n, [unpeeled(b, facts, inner) for b in node_bodies(n)])
        if isinstance(n, (N.Let, N.Assign)):
            lit[n.name] = isinstance(n.value, E.LitF32)
        else:
            lit.update(dict.fromkeys(assigned_vars([n]), False))
        out.append(n)
    return tuple(out)


def speculating(device_class: str, precision: str) -> bool:
    """Whether the pass runs; ``$VYRE_VK_SPECULATE=1`` / ``0`` overrides the class (a knob for A/B runs).

    >>> speculating("nvidia", "fast")
    False
    """
    if precision != "exact":
        return False
    env = os.environ.get("VYRE_VK_SPECULATE")
    return env == "1" if env in ("0", "1") else device_class not in OFF_BY_CLASS


def speculate(p: Program) -> tuple[Program, str]:
    """Wrap each outermost loop that qualifies (vyre_vk.ir.chains.blocker, and nothing inside may
    trap) in a SPECULATE region; (program, the loops and their chains)."""
    facts = Facts(p)
    done: list = []
    stores = [0]

    def mark(n: N.Node) -> Optional[tuple]:
        if isinstance(n, Region) and n.generator == SPECULATE:
            return (n,)
        if isinstance(n, N.Store):
            if store_ops(n, facts.env, facts.bufs) < MIN_STORE_OPS or facts.may_trap(n.value):
                return None
            stores[0] += 1
            return (Region(SPECULATE, None, (n,)),)
        if not isinstance(n, N.Loop):
            return None
        types = loop_types(n, facts.env, facts.bufs)
        chain = chain_vars(n, types)
        if blocker(n, chain, types, facts.bufs) is not None or any(
                facts.may_trap(e) for m in walk_nodes(n.body) for e in node_exprs(m)):
            return None  # an inner loop may still qualify
        done.append(f"loop {n.var}: chain {', '.join(v for v in carried(n) if v in chain)}")
        return (Region(SPECULATE, None, (n,)),)

    entry = rewrite_nodes(p.entry, stmt=mark)
    if done and not peel_everywhere():
        entry = unpeeled(entry, facts)
    if stores[0]:
        done.append(f"{stores[0]} stored value(s)")
    if not done:
        return p, ""
    unpeel = sum(isinstance(n, Region) and n.generator == SPECULATE and n.source_region == NO_PEEL
                 for n in walk_nodes(entry))
    return replace_entry(p, entry), "; ".join(done) + (
        " in IEEE f32, checked; an exact re-run if a zero or subnormal appears") + (
        f"; {unpeel} loop(s) without an exact first iteration (their chains enter with run-time values)"
        if unpeel else "")


class SpeculateChains(PassBase):
    """Speculative chains (module docstring)."""
    name = "speculate"
    kind = "schedule"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return speculating(ctx.device_class, ctx.precision) and any(
            isinstance(n, (N.Loop, N.Store)) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        q, why = speculate(program)
        return Rewrite((q,), detail=why)


SPECULATE_CHAINS = SpeculateChains()
