"""Phase splitting: a program whose workgroup memory lives in workgroup 0 alone runs as one
stage per barrier-separated phase, its workgroup buffers becoming device scratch buffers.

vyre writes its reductions (softmax, rms_norm, layer_norm, ...) as one workgroup: every
lane accumulates a strided chain, a barrier, a tree in workgroup memory, a barrier, then the
lanes write the outputs, all under ``if workgroup_x == 0``. A barrier of one workgroup orders
exactly what a kernel boundary orders (every lane's earlier accesses before every later one),
so cutting the program at its top-level barriers, and at the barrier that ends a top-level
Region, changes no value: each phase runs the same statements in the same order, in the same
lanes of the same workgroup, and workgroup memory read by a later phase is a storage buffer
that holds the same values. Splitting is what lets ``spread`` (spread.py) give each phase the
grid it needs: a strided write-back becomes one invocation per element, a strided fold one
chain per lane across many workgroups, with its map part computed beforehand.

Refused (the program is kept): workgroup shapes other than (T, 1, 1); any access to a
workgroup buffer used by two phases that is not under a condition implying
``workgroup_x == 0`` (other workgroups would share the scratch); atomics, subgroup
operations, traps, returns or calls; a storage buffer stored before the last phase; a value
other than a pure function of the invocation id carried from one phase into another.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt.phases import split_phases
    >>> stages, scratch, why = split_phases(get("vyre-libs::nn::softmax").build_with(n=1000))
    >>> len(stages), [b.name for b in scratch]
    (6, ['softmax_scratch', 'softmax_max'])
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess
from ..ir.walk import node_all_exprs, node_bodies, node_exprs, walk_expr, walk_nodes
from .analysis import OPAQUE_EXPRS, assigned_vars, read_only, read_vars, stored_buffers

#: Stages one split may produce (each costs a dispatch and a pipeline barrier, ~2 us on an H200).
MAX_PHASES = 12
_BUILTINS = (E.LocalId, E.WorkgroupId, E.InvocationId)


def _single_region(p: Program) -> Optional[Region]:
    return p.entry[0] if len(p.entry) == 1 and isinstance(p.entry[0], Region) else None


def cut(stmts) -> list[list]:
    """Statement lists between top-level barriers; a Region ending in barriers ends its phase."""
    phases: list[list] = [[]]
    for s in stmts:
        if isinstance(s, N.Barrier):
            phases.append([])
        elif isinstance(s, Region) and s.body and isinstance(s.body[-1], N.Barrier):
            body = tuple(s.body)
            while body and isinstance(body[-1], N.Barrier):
                body = body[:-1]
            phases[-1].append(dataclasses.replace(s, body=body))
            phases.append([])
        else:
            phases[-1].append(s)
    return [ph for ph in phases if ph]


def invocation_pure(e: E.Expr, env: dict, divisions: bool = False) -> bool:
    """`e` is built from literals, invocation builtins and variables in `env` (such lets) only
    (`divisions`: an integer division or remainder by a non-zero literal too; it cannot trap)."""
    for x in walk_expr(e):
        if isinstance(x, E.Var):
            if x.name not in env:
                return False
        elif not isinstance(x, (E.LitU32, E.LitI32, E.LitBool, E.BinOpExpr, E.UnOpExpr, E.Select, E.Cast) + _BUILTINS):
            return False
        elif isinstance(x, E.BinOpExpr) and x.op in (BinOp.Div, BinOp.Mod):
            if not (divisions and isinstance(x.right, E.LitU32) and x.right.value):
                return False  # an integer division may trap: never duplicate one
    return True


def resolve(e: E.Expr, env: dict) -> E.Expr:
    """`e` with a variable bound in `env` (pure lets by name) replaced by its value, repeatedly."""
    for _ in range(64):
        if not (isinstance(e, E.Var) and e.name in env):
            break
        e = env[e.name]
    return e


def implies_wg0(cond: E.Expr, env: dict) -> bool:
    """True when `cond` can only hold in workgroup (0, *, *): ``workgroup_x == 0``, a conjunction
    with it, or a variable bound to one (`env`: pure lets by name)."""
    cond = resolve(cond, env)
    if isinstance(cond, E.BinOpExpr):
        if cond.op is BinOp.Eq:
            a, b = cond.left, cond.right
            return (a == E.WorkgroupId(0) and b == E.LitU32(0)) or (b == E.WorkgroupId(0) and a == E.LitU32(0))
        if cond.op is BinOp.And:
            return implies_wg0(cond.left, env) or implies_wg0(cond.right, env)
    return False


def _touches(e: E.Expr, bufs: set) -> bool:
    return any(isinstance(x, (E.Load, E.BufLen)) and x.buffer in bufs for x in walk_expr(e))


def wg0_only(nodes, bufs: set, env: dict, under: bool = False) -> bool:
    """Every load and store of `bufs` in `nodes` runs only in workgroup 0: it sits under an if
    whose condition implies ``workgroup_x == 0`` (`env`: pure lets in scope, extended per scope)."""
    env = dict(env)
    for n in nodes:
        mine = any(_touches(e, bufs) for e in node_exprs(n)) or (isinstance(n, N.Store) and n.buffer in bufs)
        if mine and not under:
            return False
        if isinstance(n, N.Let) and invocation_pure(n.value, env):
            env[n.name] = n.value
        if isinstance(n, N.If):
            if not (wg0_only(n.then, bufs, env, under or implies_wg0(n.cond, env))
                    and wg0_only(n.otherwise, bufs, env, under)):
                return False
        elif any(not wg0_only(body, bufs, env, under) for body in node_bodies(n)):
            return False
    return True


def _used_bufs(nodes) -> set:
    return ({x.buffer for x in node_all_exprs(nodes) if isinstance(x, (E.Load, E.BufLen))} | stored_buffers(nodes))


def split_phases(p: Program) -> tuple[list[Program], list[BufferDecl], str]:
    """The stage programs, the scratch buffers and why; ([p], [], reason) when refused."""
    root = _single_region(p)
    if root is None:
        return [p], [], "entry is not one Region"
    if tuple(p.workgroup_size[1:]) != (1, 1):
        return [p], [], "2-D/3-D workgroup"
    bad = next((type(n).__name__ for n in walk_nodes(root.body)
                if isinstance(n, (N.Return, N.Trap) + N.UNSUPPORTED_NODES)), None)
    bad = bad or next((type(x).__name__ for x in node_all_exprs(root.body) if isinstance(x, OPAQUE_EXPRS)
                       or isinstance(x, (E.SubgroupLocalId, E.SubgroupSize))), None)
    if bad:
        return [p], [], f"uses {bad}"
    phases = cut(root.body)
    # top-level lets: pure invocation values (never assigned) are recomputed in every phase that
    # reads them; any other top-level value must not be used outside its own phase
    mutated = assigned_vars(root.body)
    env: dict = {}
    pure_at: dict = {}  # name -> phase index of its definition
    for k, ph in enumerate(phases):
        for s in ph:
            if isinstance(s, N.Let) and s.name not in mutated and invocation_pure(s.value, env):
                env[s.name], pure_at[s.name] = s.value, k
    phases = [[s for s in ph if not (isinstance(s, N.Let) and s.name in pure_at)] for ph in phases]
    keep = [k for k, ph in enumerate(phases) if ph]
    if not 2 <= len(keep) <= MAX_PHASES:
        return [p], [], f"{len(keep)} phase(s)"
    for k, ph in enumerate(phases):
        own = {s.name for s in ph if isinstance(s, N.Let)}
        for j, other in enumerate(phases):
            carried = own & (read_vars(other) | assigned_vars(other)) if j != k else set()
            if carried:
                return [p], [], f"`{sorted(carried)[0]}` is carried from one phase into another"
    first_use = {k: n for n, k in enumerate(keep)}
    pure_at = {name: min((first_use[k] for k in keep if k >= at), default=len(keep)) for name, at in pure_at.items()}
    phases = [phases[k] for k in keep]
    by_name = {b.name: b for b in p.buffers}
    uses = [_used_bufs(ph) for ph in phases]
    stores = [stored_buffers(ph) for ph in phases]
    wg = {b.name for b in p.buffers if b.is_workgroup}
    shared = {w for w in wg if sum(w in u for u in uses) > 1}
    if not shared:
        return [p], [], "no workgroup buffer is shared between phases"
    if not wg0_only(root.body, shared, {}):
        return [p], [], "a workgroup buffer is used outside workgroup 0"
    last = len(phases) - 1
    results = {b.name for b in p.buffers if b.is_result}
    for k in range(last):
        early = (stores[k] - wg) or (uses[k] & results)
        if early:
            return [p], [], f"`{sorted(early)[0]}` is a result used before the last phase"
    if not wg0_only(phases[last], stores[last], env):
        return [p], [], "the last phase stores outside workgroup 0 (its grid would change)"
    stages: list[Program] = []
    for k, ph in enumerate(phases):
        lets = [N.Let(name, env[name]) for name in env if pure_at[name] <= k]
        body = list(ph)
        need = set(read_vars(body))
        grow = True
        while grow:  # the pure lets the body needs, and the lets those need
            more = set().union(*(read_vars([n]) for n in lets if n.name in need)) - need
            need |= more
            grow = bool(more)
        body = [n for n in lets if n.name in need] + body
        bufs: list[BufferDecl] = []
        for b in p.buffers:
            if b.name in shared and b.name in uses[k]:
                acc = BufferAccess.ReadWrite if b.name in stores[k] else BufferAccess.ReadOnly
                bufs.append(BufferDecl(b.name, len(bufs), acc, b.element, b.count))
            elif b.is_workgroup and b.name in uses[k]:
                bufs.append(b)
            elif not b.is_workgroup and k == last and (b.name in uses[k] or b.is_result):
                bufs.append(dataclasses.replace(b, binding=len(bufs)))
            elif not b.is_workgroup and b.name in uses[k]:
                bufs.append(read_only(b, len(bufs)))
        stages.append(Program(tuple(bufs), p.workgroup_size,
                              (Region(root.generator, root.source_region, tuple(body)),), p.entry_op_id))
    scratch = [BufferDecl(w, 0, BufferAccess.ReadWrite, by_name[w].element, by_name[w].count)
               for w in (b.name for b in p.buffers) if w in shared]
    why = (f"one workgroup's {len(phases)} barrier-separated phases run as {len(phases)} kernels "
           f"(workgroup buffers {', '.join(b.name for b in scratch)} become scratch), so each can take its own grid")
    return stages, scratch, why
