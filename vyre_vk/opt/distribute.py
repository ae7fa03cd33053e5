"""Loop distribution of a key chain (keychain.py): the key part of a loop split into per-key
serial loops, one per group of carried variables that depend on each other, and parallel
per-(key, iteration) map kernels for the values between them.

flash_attention's key part is ``m' = max(m, s_j); r = exp(m - m'); p = exp(s_j - m');
l' = r*l + p; m = m'; l = l'``. Run as one serial loop per query, the exponentials sit on the
loop's path: H100 1.5 ms for 1024 queries x 1024 keys. Distributed:

1. map: ``s_j`` for every (query, j) in parallel (it reads no carried value);
2. chain {m}: per query, ``m' = max(m, s_j)`` in order, storing m at each iteration's start;
3. map: ``r``, ``p`` for every (query, j) from the stored m (and ``m'``, recomputed from it);
4. chain {l}: per query, ``l' = r*l + p`` in order, the final l stored.

Every value is computed by the same operations on the same operands as in the loop (a carried
value read where the loop read it: at its iteration's start, since the loop assigns carried
variables after all its lets), so the bits are the loop's. A chain kernel's stores go to tables
that its own loads never read, so unroll may issue its loads ahead (unroll.py).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess
from ..ir.walk import node_all_exprs, walk_nodes
from .analysis import expr_vars, read_only
from .dispatch import COARSEN_GENERATOR

KEYCHAIN_GENERATOR = "vyre_vk.opt.keychain"


@dataclasses.dataclass
class Chain:
    """What keychain found: the stage, the key, the guard, the loop's key part."""
    p: Program
    key: str
    top: list            # the key-only lets before the guard (the key's own excluded)
    cond: E.Expr
    before: list         # the key-only lets between the guard and the loop (carried inits among them)
    var: str
    lo: int
    trips: int
    nkeys: int
    lets: list           # the loop's key lets, in order
    assigns: dict        # carried variable -> its assigned value
    exported: list       # key lets the rest of the loop reads
    finals: list         # carried variables read after the loop
    env: dict            # variable -> DataType
    fresh: object
    local_size: int       # the pre-pass kernels' (workgroup_size re-sizes them)

    def slot(self) -> E.Expr:
        """``key * trips + (var - lo)``: an iteration's element of a per-(key, iteration) table."""
        j = E.BinOpExpr(BinOp.Sub, E.Var(self.var), E.LitU32(self.lo)) if self.lo else E.Var(self.var)
        return E.BinOpExpr(BinOp.Add, E.BinOpExpr(BinOp.Mul, E.Var(self.key), E.LitU32(self.trips)), j)


def _order(ch: Chain) -> Optional[tuple[list, dict, dict]]:
    """(the carried groups in dependence order, each let's level, each let's value); a let's level is
    the index of the last group it depends on (-1: none), or None when the groups form no order."""
    value = {n.name: n.value for n in ch.lets}
    dep: dict = {}
    for name, v in value.items():  # carried variables a let reads, directly or through earlier lets
        d = set()
        for r in expr_vars(v):
            d |= {r} if r in ch.assigns else dep.get(r, set())
        dep[name] = d
    upd = {c: set().union(*[{r} if r in ch.assigns else dep.get(r, set()) for r in expr_vars(v)] or [set()])
           for c, v in ch.assigns.items()}
    reach = {c: set(upd[c]) for c in upd}
    for _ in range(len(upd)):
        for c in reach:
            reach[c] |= set().union(*[reach[d] for d in reach[c]] or [set()])
    groups: list = []
    for c in sorted(upd):
        if not any(c in g for g in groups):
            groups.append({c} | {d for d in reach[c] if c in reach[d]})
    ordered: list = []
    while groups:
        ready = [g for g in groups if all(any(d in o for o in ordered) or d in g
                                          for c in g for d in reach[c])]
        if not ready:
            return None
        ordered.append(ready[0])
        groups.remove(ready[0])
    index = {c: k for k, g in enumerate(ordered) for c in g}
    level = {x: max((index[c] for c in dep[x]), default=-1) for x in value}
    return ordered, level, value


def _needed(names: set, value: dict) -> set:
    """`names` and every let they read, transitively."""
    out, todo = set(), list(names)
    while todo:
        x = todo.pop()
        if x in out or x not in value:
            continue
        out.add(x)
        todo += list(expr_vars(value[x]))
    return out


def distribute(ch: Chain) -> Optional[tuple[list, dict, dict]]:
    """(pre-pass programs in order, table name by value name (lets and final carried values), each
    table's (element type, count)), or None if the key part cannot be ordered."""
    got = _order(ch)
    if got is None:
        return None
    groups, level, value = got
    carried = set(ch.assigns)
    lets = [n.name for n in ch.lets]
    # per chain: the lets it computes in its loop (those that depend on its own group), the lets it
    # loads (computed by an earlier map kernel), the other groups' carried values it loads
    inloop, loads, others, tabled = {}, {}, {}, set(ch.exported)
    for k, g in enumerate(groups):
        top = set().union(*[expr_vars(ch.assigns[c]) for c in g])
        need = _needed(top - carried, value)
        inloop[k] = [x for x in lets if x in need and level[x] == k]
        direct = top | set().union(*[expr_vars(value[y]) for y in inloop[k]] or [set()])
        loads[k] = [x for x in lets if x in direct and x not in inloop[k]]
        others[k] = sorted((direct & carried) - g)
        tabled |= set(loads[k])
    starts = set().union(*[set(o) for o in others.values()] or [set()])
    for x in tabled:  # a map kernel recomputes x from the lets it needs, carried values from their tables
        starts |= {r for y in _needed({x}, value) for r in expr_vars(value[y]) if r in carried}
    names = {x: ch.fresh(f"{x}_") for x in sorted(tabled)}
    start = {c: ch.fresh(f"{c}_at_") for c in sorted(starts)}
    final = {c: ch.fresh(f"{c}_") for c in ch.finals}
    size = ch.nkeys * ch.trips
    decl = {t: (ch.env[x], size) for x, t in names.items()}
    decl.update({t: (ch.env[c], size) for c, t in start.items()})
    decl.update({t: (ch.env[c], ch.nkeys) for c, t in final.items()})
    kvar, slot = E.Var(ch.key), ch.slot()
    inits = [n for n in ch.before if n.name not in carried]
    stages: list = []

    def map_stage(outs: list) -> None:
        """One invocation per (key, iteration): the lets `outs` need, carried values from their tables."""
        need = _needed(set(outs), value)
        body = [N.Let(c, E.Load(start[c], slot)) for c in sorted(start)
                if any(c in expr_vars(value[y]) for y in need)]
        body += [n for n in ch.lets if n.name in need]
        body += [N.Store(names[x], slot, E.Var(x)) for x in outs]
        g = E.Var(ch.fresh("g"))
        stages.append(_program(ch, decl, (
            N.Let(g.name, E.InvocationId(0)),
            N.Let(ch.key, E.BinOpExpr(BinOp.Div, g, E.LitU32(ch.trips))),
            *ch.top,
            N.If(ch.cond, (*inits, N.Let(ch.var, E.BinOpExpr(BinOp.Add, E.BinOpExpr(BinOp.Mod, g, E.LitU32(ch.trips)),
                                                             E.LitU32(ch.lo))), *body), ()))))

    def chain_stage(k: int, g: set) -> None:
        """One invocation per key, the group's loop in order."""
        own = [n for n in ch.before if n.name in g]
        body = [N.Let(x, E.Load(names[x], slot)) for x in loads[k]]
        body += [N.Let(c, E.Load(start[c], slot)) for c in others[k]]
        body += [n for n in ch.lets if n.name in inloop[k]]
        body += [N.Store(start[c], slot, E.Var(c)) for c in sorted(start) if c in g]
        body += [N.Assign(c, ch.assigns[c]) for c in sorted(g)]
        tail = [N.Store(final[c], kvar, E.Var(c)) for c in sorted(g) if c in final]
        chain = N.If(ch.cond, (*inits, *own, N.Loop(ch.var, E.LitU32(ch.lo), E.LitU32(ch.lo + ch.trips), tuple(body)),
                               *tail), ())
        # One invocation per key. A stage that stores a per-(key, iteration) table gets its grid from
        # that table (keys x trips): the coarsening factor `trips` brings it back to the keys, so
        # workgroup_size spreads them as it does the others. Before, every trips-th id ran a chain,
        # one acting lane per 256-lane workgroup: flash_attention's max chain took 0.205 ms on an
        # H100, 0.050 ms now (tools/bench/stage_times.py, one run each way).
        tables = any(c in start for c in g)
        stages.append(_program(ch, decl, (
            N.Let(ch.key, E.InvocationId(0)),
            N.If(E.BinOpExpr(BinOp.Lt, kvar, E.LitU32(ch.nkeys)), (*ch.top, chain), ())),
            factor=ch.trips if tables else 1))

    for k in range(-1, len(groups)):
        if k >= 0:
            chain_stage(k, groups[k])
        outs = [x for x in lets if x in tabled and level[x] == k]
        if outs:
            map_stage(outs)
    out_tables = {**names, **final}
    return stages, out_tables, decl


def _program(ch: Chain, decl: dict, body: tuple, factor: int = 1) -> Program:
    """A pre-pass program: the buffers it loads (read-only, renumbered) and the tables it stores;
    `factor` > 1: ids act only below count / factor of its largest table (a coarsened grid)."""
    root = Region(KEYCHAIN_GENERATOR, None, body)
    if factor > 1:
        root = Region(f"{COARSEN_GENERATOR}:{factor}", None, (root,))
    loads = {x.buffer for x in node_all_exprs([root]) if isinstance(x, E.Load)}
    stores = {n.buffer for n in walk_nodes(body) if isinstance(n, N.Store)}
    bufs = [read_only(b, 0) for b in ch.p.buffers if b.name in loads]
    bufs += [BufferDecl(t, 0, BufferAccess.ReadOnly, *decl[t]) for t in sorted(loads) if t in decl]
    bufs += [BufferDecl(t, 0, BufferAccess.ReadWrite, *decl[t], pipeline_live_out=True) for t in sorted(stores)]
    bufs = [dataclasses.replace(b, binding=k) for k, b in enumerate(bufs)]
    return Program(tuple(bufs), (ch.local_size, 1, 1), (root,), ch.p.entry_op_id)
