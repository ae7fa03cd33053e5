"""Invocation splitting: a loop whose iterations each own one output column becomes a grid
dimension -- D invocations per original invocation, each running one iteration.

vyre's flash_attention runs one invocation per query row: for each key ``j`` it updates the
running max and sum, then ``for t in 0..D`` rescales ``flash_o[local*D + t]`` (workgroup
memory, one slot per lane and column), and at the end ``for t`` writes ``out[row*D + t]``. Only
1024 invocations (8 workgroups, 8 SMs) for a 1024-row problem, each 64K serial steps.

Iteration ``t`` of those loops touches only slot ``X + t`` of what they write (``X`` = the
lane's or row's base, the same at every access), and nothing else in the invocation writes
memory or assigns a variable from inside them. So the columns never meet: invocation
``(r, t)`` of the new program runs the whole body of invocation ``r`` with each such loop
reduced to its iteration ``t``. Every statement outside those loops runs D times over -- same
values (they never depended on ``t``); every column runs its own statements in the same order
-- same bits. A workgroup buffer used only at ``local*D + t`` becomes one private variable
(workgroup memory starts at zero in the reference; so does the variable).

Refused: barriers, atomics, subgroups, traps; a store outside the split loops; loops of
different ranges; a written buffer accessed other than at ``X + t`` with one ``X`` per
invocation built from ``local*D`` (workgroup memory) or ``id*D`` (storage); no ``id < B`` guard
around the loops, or a grid that would not cover ``B*D`` invocations.

Example::

    >>> from vyre_vk.ops import get
    >>> p = split_invocations(get("vyre-libs::nn::flash_attention").build_with(seq_len=16, head_dim=8))
    >>> p.workgroup_size, [b.name for b in p.buffers]
    ((128, 1, 1), ['q', 'k', 'v', 'out'])
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.grid import dispatch_grid
from ..ir.optable import BinOp
from ..ir.program import Program, Region
from ..ir.walk import node_all_exprs, node_bodies, node_exprs, replace_expr, walk_expr, walk_nodes
from .analysis import (ZERO_TYPES, NameSource, all_names, assigned_vars, defined_vars, replace_entry, stored_buffers,
                       zero_literal)
from .keyed import _lit, literal_limits
from .phases import invocation_pure
from .protocol import PassBase, PassContext, Rewrite

_GID, _LID, _WGX = E.InvocationId(0), E.LocalId(0), E.WorkgroupId(0)


def _deep(e: E.Expr, env: dict) -> E.Expr:
    """`e` with every pure let inlined (to compare slot bases structurally)."""
    return replace_expr(e, lambda x: _deep(env[x.name], env) if isinstance(x, E.Var) and x.name in env else None)


@dataclasses.dataclass
class _Plan:
    loops: list          # the split loops (node objects)
    lo: int
    d: int
    private: dict        # workgroup buffer -> element type (becomes a variable)
    bound: int           # invocations that act: id < bound


def _env(nodes, mutated: set) -> dict:
    env: dict = {}
    for n in walk_nodes(nodes):
        if isinstance(n, N.Let) and n.name not in mutated and invocation_pure(n.value, env, divisions=True):
            env[n.name] = n.value
    return env


def plan(p: Program) -> tuple[Optional[_Plan], str]:
    """What to split, or (None, why not)."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None, "not one Region over a 1-D workgroup"
    root, tile = p.entry[0], p.workgroup_size[0]
    if any(isinstance(n, (N.Barrier, N.Return, N.Trap) + N.UNSUPPORTED_NODES) for n in walk_nodes(root.body)):
        return None, "a barrier, return or trap"
    if any(isinstance(x, (E.Atomic, E.Call, E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce, E.SubgroupLocalId,
                          E.SubgroupSize, E.BufLen)) or (isinstance(x, (E.InvocationId, E.LocalId, E.WorkgroupId))
                                                         and x.axis != 0) for x in node_all_exprs(root.body)):
        return None, "an atomic, subgroup, call, buffer length or y/z builtin"
    mutated = assigned_vars(root.body)
    env = _env(root.body, mutated)
    found: list = []
    conds_of: list = []

    def scan(nodes, conds):
        for n in nodes:
            if isinstance(n, N.Loop) and stored_buffers(n.body) and not any(
                    isinstance(m, N.Loop) and stored_buffers(m.body) for m in walk_nodes(n.body)):
                found.append(n)  # an innermost loop that stores
                conds_of.append(conds)
                continue
            if isinstance(n, N.If):
                scan(n.then, conds + [n.cond])
                scan(n.otherwise, conds)
            else:
                for body in (n.body,) if isinstance(n, (N.Loop, N.Block, Region)) else ():
                    scan(body, conds)
    scan(root.body, [])
    if not found:
        return None, "no loop stores"
    ranges = {(_lit(lp.from_), _lit(lp.to)) for lp in found}
    if len(ranges) != 1 or None in next(iter(ranges)):
        return None, "split loops of different or non-literal ranges"
    lo, hi = next(iter(ranges))
    d = hi - lo
    if d < 2:
        return None, "one iteration"
    ids = {id(n) for lp in found for n in walk_nodes([lp])}
    if any(isinstance(n, N.Store) and id(n) not in ids for n in walk_nodes(root.body)):
        return None, "a store outside the split loops"
    for lp in found:
        if assigned_vars(lp.body) - defined_vars(lp.body):
            return None, f"loop `{lp.var}` assigns a variable of its invocation"
    written = stored_buffers(root.body)
    wg = {b.name: b for b in p.buffers if b.is_workgroup}
    bases: dict = {}
    for lp in found:
        accesses = [(n.buffer, n.index) for n in walk_nodes(lp.body) if isinstance(n, N.Store)]
        accesses += [(x.buffer, x.index) for x in node_all_exprs(lp.body) if isinstance(x, E.Load)]
        for buf, idx in accesses:
            if buf not in written:
                continue
            if not (isinstance(idx, E.BinOpExpr) and idx.op is BinOp.Add and idx.right == E.Var(lp.var)
                    and lp.var not in {v.name for v in walk_expr(idx.left) if isinstance(v, E.Var)}
                    and invocation_pure(idx.left, env, divisions=True)):
                return None, f"`{buf}` is accessed other than at base + `{lp.var}`"
            bases.setdefault(buf, set()).add(_deep(idx.left, env))
    inside = {id(n) for lp in found for n in walk_nodes([lp])}
    if any(x.buffer in written for x in _loads_outside(root.body, inside)):
        return None, "a written buffer is read outside the split loops"
    for buf, xs in bases.items():
        want = E.BinOpExpr(BinOp.Mul, _LID if buf in wg else _GID, E.LitU32(d))
        if xs != {want}:
            return None, f"`{buf}`'s base is not one {'local' if buf in wg else 'id'} * {d}"
    bound = None
    for conds in conds_of:
        b = min((n for left, n in literal_limits(conds, env) if n and left == _GID), default=None)
        if b is None:
            return None, "no `id < N` guard around a split loop"
        bound = b if bound is None else max(bound, b)
    if dispatch_grid(p, {})[0] * tile < bound:
        return None, "the program's grid does not cover the guard"
    private = {b: wg[b].element for b in bases if b in wg}
    if any(t not in ZERO_TYPES for t in private.values()):
        return None, "a workgroup buffer of an unsupported element type"
    return _Plan(found, lo, d, private, bound), ""


def _loads_outside(nodes, inside: set) -> list:
    """Loads in `nodes` outside the statements whose ids are in `inside`."""
    out: list = []
    for n in nodes:
        if id(n) not in inside:
            out += [x for e in node_exprs(n) for x in walk_expr(e) if isinstance(x, E.Load)]
            for body in node_bodies(n):
                out += _loads_outside(body, inside)
    return out


def split_invocations(p: Program) -> Optional[Program]:
    """The split program, or None (see :func:`plan` for why not)."""
    pl, _ = plan(p)
    if pl is None:
        return None
    root, tile = p.entry[0], p.workgroup_size[0]
    fresh = NameSource(all_names(p), "sp_")
    g, r, t = fresh("g"), fresh("r"), fresh("t")
    var = {b: fresh(b) for b in pl.private}
    split = {id(lp) for lp in pl.loops}

    def builtin(x: E.Expr) -> Optional[E.Expr]:
        if x == _GID:
            return E.Var(r)
        if x == _LID:
            return E.BinOpExpr(BinOp.Mod, E.Var(r), E.LitU32(tile))
        if x == _WGX:
            return E.BinOpExpr(BinOp.Div, E.Var(r), E.LitU32(tile))
        if isinstance(x, E.Load) and x.buffer in var:
            return E.Var(var[x.buffer])
        return None

    def stmt(n: N.Node):
        if isinstance(n, N.Store) and n.buffer in var:
            return (N.Assign(var[n.buffer], replace_expr(n.value, builtin)),)
        return None

    def post(n: N.Loop):
        at = E.Var(t) if not pl.lo else E.BinOpExpr(BinOp.Add, E.Var(t), E.LitU32(pl.lo))
        return (N.Block((N.Let(n.var, at),) + tuple(n.body)),)

    body = _rewrite(root.body, split, stmt, builtin, post)
    head = (N.Let(g, _GID), N.Let(r, E.BinOpExpr(BinOp.Div, E.Var(g), E.LitU32(pl.d))),
            N.Let(t, E.BinOpExpr(BinOp.Mod, E.Var(g), E.LitU32(pl.d))),
            *(N.Let(var[b], zero_literal(el)) for b, el in pl.private.items()))
    bufs = tuple(b for b in p.buffers if b.name not in pl.private)
    out = replace_entry(dataclasses.replace(p, buffers=bufs),
                        (Region(root.generator, root.source_region, head + tuple(body)),))
    if dispatch_grid(out, {})[0] * out.workgroup_size[0] < pl.bound * pl.d:
        return None
    return out


def _rewrite(nodes, split: set, stmt, builtin, post) -> tuple:
    out: list = []
    for n in nodes:
        r = stmt(n)
        if r is not None:
            out += r
            continue
        if isinstance(n, (N.Let, N.Assign)):
            out.append(dataclasses.replace(n, value=replace_expr(n.value, builtin)))
        elif isinstance(n, N.Store):
            out.append(N.Store(n.buffer, replace_expr(n.index, builtin), replace_expr(n.value, builtin)))
        elif isinstance(n, N.If):
            out.append(N.If(replace_expr(n.cond, builtin), _rewrite(n.then, split, stmt, builtin, post),
                            _rewrite(n.otherwise, split, stmt, builtin, post)))
        elif isinstance(n, N.Loop):
            new = N.Loop(n.var, replace_expr(n.from_, builtin), replace_expr(n.to, builtin),
                         _rewrite(n.body, split, stmt, builtin, post))
            out += post(new) if id(n) in split else [new]
        elif isinstance(n, (N.Block, Region)):
            out.append(dataclasses.replace(n, body=_rewrite(n.body, split, stmt, builtin, post)))
        else:
            out.append(n)
    return tuple(out)


class SplitInvocations(PassBase):
    """Invocation splitting (module docstring)."""
    name = "split_invocations"

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        out = split_invocations(program)
        return None if out is None else Rewrite((out,), (), detail=plan(program)[0])

    def explain(self, rewrite: Rewrite) -> str:
        pl: _Plan = rewrite.detail
        return (f"loop(s) {', '.join(sorted({f'`{lp.var}`' for lp in pl.loops}))} write column `{pl.loops[0].var}` of their "
                f"own slots only: {pl.d} invocations per original one, each running one column"
                + (f" (workgroup buffer(s) {', '.join(pl.private)} become a private variable)" if pl.private else ""))


SPLIT_INVOCATIONS = SplitInvocations()
