"""Spreading one workgroup's strided loops over the grid (after ``split_phases``).

A phase of vyre's one-workgroup reductions is one of two strided loops, run by the T lanes of
workgroup 0, lane ``local`` visiting ``idx = chunk * T + local`` for ``chunk`` in 0..C:

* a **map**: ``if idx < n { out[idx] = f(idx) }`` (softmax's and the norms' write-back). No
  element depends on another, so it becomes one invocation per element:
  ``idx = gid.x; if idx < min(n, C*T) { out[idx] = f(idx) }``. Same expression per element:
  same bits. 4096 serial elements per lane become one each.
* a **fold**: ``acc = init; for chunk { if idx < n { acc = g(acc, idx) } }; scratch[local] = acc``.
  Lane l's chain is independent of every other lane's, so the chains keep their order but run
  32 to a workgroup over T/32 workgroups (``local = gid.x``), i.e. on T/32 SMs instead of one.
  Each fold's map part -- an expensive sub-expression of ``g`` that reads neither accumulator
  (``exp(x[idx] - max)``, a division, a square root) -- is computed first by a map stage, one
  invocation per element, into a scratch buffer the chain then loads. Every operation's f32
  result is canonical (the reference flushes and canonicalises after each operation), so a
  value stored and loaded back is the same bits: the fold adds exactly what it added before.
  A chain step would otherwise wait a whole memory latency for its load: the ``unroll`` pass
  (unroll.py), which runs later, issues the loads of 16 steps ahead of their folds.

The phases left in workgroup 0 (the trees) then run as one kernel again, barriers between them
(rejoin.py): softmax's max tree and its store of the max are one kernel below.

Only stages of exactly that shape are rewritten: the loop guarded by ``workgroup_x == 0`` and
nothing else, literal bounds, lanes named only through ``local``, no barrier, no workgroup
memory, no trap, stores of a map only at ``idx`` to buffers the stage never loads.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt import optimize
    >>> graph, reports = optimize(get("vyre-libs::nn::softmax").build_with(n=1000), ["split_phases", "spread"])
    >>> [st.workgroup_size[0] for st in graph.stages]
    [32, 256, 256, 32, 256, 256]
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp, TRANSCENDENTAL_UNOPS, UnOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import expr_children, node_all_exprs, replace_expr, rewrite_nodes, walk_expr, walk_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, read_only, read_vars, stored_buffers
from .phases import implies_wg0, invocation_pure, resolve
from .rejoin import rejoin
from .protocol import PassBase, PassContext, Rewrite

SPREAD_GENERATOR = "vyre_vk.opt.spread"
#: Lanes per workgroup for spread fold chains: one warp/subgroup, so T/32 SMs share the chains.
CHAIN_LANES = 32
MAP_LOCAL_SIZE = 256
_EXPENSIVE_UNOPS = TRANSCENDENTAL_UNOPS | {UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Reciprocal}
_GID = E.InvocationId(0)


@dataclasses.dataclass
class _Loop:
    """The matched stage: `pre` (lets before the loop), the loop, `post` (statements after)."""
    root: Region
    tile: int
    local: str
    env: dict
    pre: list
    loop: N.Loop
    idx: str
    bound: int
    body: tuple
    post: list


def _match(p: Program) -> Optional[_Loop]:
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None
    if any(b.is_workgroup for b in p.buffers) or any(isinstance(n, (N.Barrier, N.Return, N.Trap) + N.UNSUPPORTED_NODES)
                                                    for n in walk_nodes(p.entry)):
        return None
    root, tile = p.entry[0], p.workgroup_size[0]
    env: dict = {}
    stmts = list(root.body)
    while True:
        while stmts and isinstance(stmts[0], N.Let) and invocation_pure(stmts[0].value, env):
            let = stmts.pop(0)
            env[let.name] = let.value
        if len(stmts) == 1 and isinstance(stmts[0], Region):
            stmts = list(stmts[0].body)
            continue
        break
    if len(stmts) != 1 or not isinstance(stmts[0], N.If) or stmts[0].otherwise:
        return None
    guard = resolve(stmts[0].cond, env)
    if not (implies_wg0(guard, env) and isinstance(guard, E.BinOpExpr) and guard.op is BinOp.Eq):
        return None  # exactly `workgroup_x == 0`: a conjunction would keep lanes out
    inner = list(stmts[0].then)
    loops = [k for k, s in enumerate(inner) if isinstance(s, N.Loop)]
    if len(loops) != 1:
        return None
    k = loops[0]
    loop, pre, post = inner[k], inner[:k], inner[k + 1:]
    if not (isinstance(loop.from_, E.LitU32) and loop.from_.value == 0 and isinstance(loop.to, E.LitU32)):
        return None
    if len(loop.body) != 2 or not isinstance(loop.body[0], N.Let) or not isinstance(loop.body[1], N.If):
        return None
    let, cond = loop.body
    v = let.value  # idx = chunk * T + local
    if not (isinstance(v, E.BinOpExpr) and v.op is BinOp.Add and v.left == E.BinOpExpr(BinOp.Mul, E.Var(loop.var),
                                                                                       E.LitU32(tile))):
        return None
    if not (isinstance(v.right, E.Var) and resolve(v.right, env) == E.LocalId(0)):
        return None
    c = cond.cond
    if cond.otherwise or not (isinstance(c, E.BinOpExpr) and c.op is BinOp.Lt and c.left == E.Var(let.name)
                              and isinstance(c.right, E.LitU32)):
        return None
    bound = min(c.right.value, loop.to.value * tile)
    return _Loop(root, tile, v.right.name, env, pre, loop, let.name, bound, tuple(cond.then), post)


def _only_vars(nodes, allowed: set, env: dict) -> bool:
    """`nodes` read no invocation builtin and no outer pure let except those in `allowed`."""
    for x in node_all_exprs(nodes):
        if isinstance(x, (E.LocalId, E.WorkgroupId, E.InvocationId)):
            return False
        if isinstance(x, E.Var) and x.name in env and x.name not in allowed:
            return False
    return True


def _stage(p: Program, body, size: int, bufs) -> Program:
    return Program(tuple(bufs), (size, 1, 1), (Region(SPREAD_GENERATOR, None, tuple(body)),), p.entry_op_id)


def _grid_covers(p: Program, n: int) -> bool:
    """The stage's inferred grid (result buffers' declared counts) reaches `n` invocations."""
    outs = [b.count for b in p.buffers if b.is_result]
    return bool(outs) and all(c > 0 for c in outs) and max(outs) >= n


def spread_map(p: Program, m: _Loop) -> Optional[tuple[Program, str]]:
    facts = Facts(p)
    stored = stored_buffers(m.body)
    if m.post or any(not isinstance(s, N.Let) for s in m.pre) or any(facts.may_trap(s.value) for s in m.pre):
        return None
    if not all(isinstance(s, (N.Let, N.Store)) for s in m.body):
        return None
    if any(isinstance(s, N.Store) and s.index != E.Var(m.idx) for s in m.body):
        return None
    if stored & {x.buffer for x in node_all_exprs(m.pre + list(m.body)) if isinstance(x, (E.Load, E.BufLen))}:
        return None
    if not _only_vars(m.pre + list(m.body), set(), m.env) or m.loop.var in read_vars(m.pre + list(m.body)):
        return None
    body = [N.Let(m.idx, _GID), N.If(E.BinOpExpr(BinOp.Lt, E.Var(m.idx), E.LitU32(m.bound)),
                                     tuple(m.pre) + m.body, ())]
    out = _stage(p, body, m.tile, p.buffers)
    if not _grid_covers(out, m.bound):
        return None
    return out, f"strided write-back of {', '.join(sorted(stored))}: one invocation per element ({m.bound})"


def _expensive(e: E.Expr, facts: Facts) -> bool:
    for x in walk_expr(e):
        if isinstance(x, E.UnOpExpr) and x.op in _EXPENSIVE_UNOPS:
            return True
        if isinstance(x, E.BinOpExpr) and x.op is BinOp.Div and facts.type_of(x.left) is DataType.F32:
            return True
    return False


def _map_parts(m: _Loop, facts: Facts, stored: set) -> list[E.Expr]:
    """Maximal expensive sub-expressions of the fold body that read only `idx` and unwritten buffers."""
    parts: list = []

    def ok(e: E.Expr) -> bool:
        vs = {x.name for x in walk_expr(e) if isinstance(x, E.Var)}
        loads = {x.buffer for x in walk_expr(e) if isinstance(x, (E.Load, E.BufLen))}
        return (vs <= {m.idx} and not (loads & stored) and not facts.may_trap(e)
                and not any(isinstance(x, (E.LocalId, E.WorkgroupId, E.InvocationId)) for x in walk_expr(e)))

    def visit(e: E.Expr) -> None:
        if ok(e) and _expensive(e, facts) and facts.type_of(e) in (DataType.F32, DataType.U32, DataType.I32):
            if e not in parts:
                parts.append(e)
            return
        for kid in expr_children(e):
            visit(kid)

    for s in m.body:
        visit(s.value)
    return parts


def spread_fold(p: Program, m: _Loop, map_parts: bool = True) -> Optional[tuple[tuple[Program, ...], tuple, str]]:
    facts = Facts(p)
    accs = [s.name for s in m.pre if isinstance(s, N.Let)]
    if len(accs) != len(m.pre) or not accs or any(facts.may_trap(s.value) for s in m.pre):
        return None
    if not all(isinstance(s, (N.Let, N.Assign)) for s in m.body) or not assigned_vars(m.body) <= set(accs):
        return None
    if not all(isinstance(s, N.Store) and s.index == E.Var(m.local) and isinstance(s.value, E.Var)
               and s.value.name in accs for s in m.post) or not m.post:
        return None
    stored = {s.buffer for s in m.post}
    if {b.name for b in p.buffers if b.is_result} != stored:
        return None  # the stage returns only what the chains store (never the graph's last stage)
    if stored & {x.buffer for x in node_all_exprs(m.pre + list(m.body)) if isinstance(x, (E.Load, E.BufLen))}:
        return None
    if not _only_vars(m.pre + list(m.body), set(), m.env) or m.loop.var in read_vars(m.pre + list(m.body)):
        return None
    if m.tile % CHAIN_LANES:
        return None
    parts = _map_parts(m, facts, stored) if map_parts else []
    fresh = NameSource(all_names(p), "opt_map_")
    names = [fresh("m") for _ in parts]
    swap = dict(zip(parts, names))
    body = tuple(m.body)
    if parts:
        body = rewrite_nodes(body, expr=lambda e: replace_expr(
            e, lambda x: E.Load(swap[x], E.Var(m.idx)) if x in swap else None))
    loop = dataclasses.replace(m.loop, body=(m.loop.body[0], dataclasses.replace(m.loop.body[1], then=body)))
    chain_body = [N.Let(m.local, _GID),
                  N.If(E.BinOpExpr(BinOp.Lt, E.Var(m.local), E.LitU32(m.tile)), tuple(m.pre) + (loop,) + tuple(m.post), ())]
    scratch = tuple(BufferDecl(nm, 0, BufferAccess.ReadWrite, facts.type_of(e), m.bound) for e, nm in zip(parts, names))
    used = {x.buffer for x in node_all_exprs(chain_body) if isinstance(x, (E.Load, E.BufLen))} | stored
    chain_bufs = [dataclasses.replace(b, binding=k) for k, b in enumerate(b for b in p.buffers if b.name in used)]
    chain_bufs += [dataclasses.replace(s, binding=len(chain_bufs) + k, access=BufferAccess.ReadOnly)
                   for k, s in enumerate(scratch)]
    chain = _stage(p, chain_body, CHAIN_LANES, chain_bufs)
    if not _grid_covers(chain, m.tile):
        return None
    stages: tuple = (chain,)
    if parts:
        src = {x.buffer for e in parts for x in walk_expr(e) if isinstance(x, (E.Load, E.BufLen))}
        map_bufs = [read_only(b, k) for k, b in enumerate(b for b in p.buffers if b.name in src)]
        map_bufs += [dataclasses.replace(s, binding=len(map_bufs) + k, pipeline_live_out=True)
                     for k, s in enumerate(scratch)]
        map_body = [N.Let(m.idx, _GID), N.If(E.BinOpExpr(BinOp.Lt, E.Var(m.idx), E.LitU32(m.bound)),
                                             tuple(N.Store(nm, E.Var(m.idx), e) for e, nm in zip(parts, names)), ())]
        stages = (_stage(p, map_body, MAP_LOCAL_SIZE, map_bufs), chain)
    what = f"; its map part ({len(parts)} value(s) per element) runs first, one invocation per element" if parts else ""
    why = (f"strided fold into {', '.join(sorted(stored))}: {m.tile} chains of {m.loop.to.value} steps run "
           f"{CHAIN_LANES} to a workgroup over {m.tile // CHAIN_LANES} workgroups{what}")
    return stages, scratch, why


class Spread(PassBase):
    """Spreading one workgroup's strided map and fold loops (module docstring)."""
    name = "spread"
    kind = "split"

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        m = _match(program)
        r = None if m is None else spread_map(program, m)
        if r is not None:
            return Rewrite((r[0],), (), detail=r[1])
        f = None if m is None else spread_fold(program, m)
        return None if f is None else Rewrite(f[0], f[1], detail=f[2])

    def merge(self, stages: list, scratch: list) -> tuple[list, list, Optional[str]]:
        """After every stage was spread: the phases left in workgroup 0 as one kernel (rejoin.py)."""
        joined, why = rejoin(stages)
        return joined, scratch, why


SPREAD = Spread()
