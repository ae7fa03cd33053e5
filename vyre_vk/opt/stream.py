"""Streamed chains: the loads of few, long serial chains go through workgroup memory in tiles.

linear_relu (4096 chains of 4096 steps) and the seed op's grad_x stage (2048 of 8192) keep one
exact chain per invocation, ``acc = acc + x[k] * w[idx(r, k)]`` for k in order. With so few
chains an SM holds about one warp, whose own loads are all it has in flight, and bytes in flight
over memory latency bound each SM's bandwidth (H100, tools/bench/gemv_layouts.py: 139-157 us for
hand-written chains, against 20 us of DRAM traffic). Here each workgroup runs C chains with L > C
lanes: every lane loads its share of the next C x T tile of each streamed buffer into registers
(consecutive lanes on consecutive addresses), while lanes 0..C-1 run T steps of their chains over
the current tile in workgroup memory; a double buffer and one barrier per tile::

    let r = gid.x                       let lane = local.x; let g0 = wg.x * C; let g = g0 + lane
    if r < R {                          if g0 < R {                                  (uniform)
        PRE                                 PRE (id read as g); tile 0 -> shared[0]; barrier
        for k in a..b { BODY }   ->         for t in 0..K/T {
        POST                                    if t + 1 < K/T { tile t+1 -> registers }
    }                                           if lane < C && g < R { for kk in 0..T { let k = a + t*T + kk; BODY' } }
                                                if t + 1 < K/T { registers -> shared[1 - t%2] }; barrier
                                            }
                                            if lane < C && g < R { POST }
                                        }

BODY' reads ``shared[t%2][kk][lane]`` where BODY read ``buf[idx(id, k)]``: the value of the same
element (the loader evaluates idx at (g0 + c, k) for each chain c), so every chain runs the same
operations on the same values in the same order: the same bits. A load qualifies (is streamed)
when its index, with the lets before the loop inlined (those that load nothing and are never
assigned), reads only the invocation id and k and reads k, from a 4-byte buffer the stage never
writes. PRE runs for every lane (lets only: loads out of bounds read zero, nothing in the stage
may trap); loads move ahead of BODY's statements because the stage has no stores before POST and
loads have no effect (as unroll.py argues).

Arms: a stage whose ids branch (fission's ``if id < M { chain a } else { chain b }``) streams each
arm's chain; its workgroups take the branch by g0 (uniform), so a split point must be a multiple
of C, and a workgroup whose ids fall between two arms' ranges acts on none.

Shape: C chains of L lanes per workgroup by class (``$VYRE_VK_STREAM_SHAPE=C,L``); without the knob
C halves (not below 8) while the stage would have fewer workgroups than the class wants (as
workgroup_size spreads few invocations). T is the largest tile whose double buffers fit the
device's workgroup memory (PassContext.shared_memory_bytes). The grid: workgroup memory makes
vyre's rule count every bound buffer, so a coarsening region (dispatch.py) divides it down to at
least ceil(ids / C) workgroups; later ones do nothing.

On by default for the nvidia class (STREAM_BY_CLASS); ``$VYRE_VK_STREAM=1`` / ``0`` turns it on /
off for A/B runs.

Example::

    >>> from vyre_vk.ops import get
    >>> s = stream(get("vyre-libs::nn::linear_relu").build_with(in_dim=256, out_dim=64))
    >>> s.chains, s.steps, s.per_group, s.lanes, s.tile, s.program.workgroup_size
    (64, 256, 32, 256, 64, (256, 1, 1))
    >>> [(b.name, b.count) for b in s.program.buffers if b.is_workgroup]  # double buffers: x[k], w[k][r]
    [('opt_st_x0', 128), ('opt_st_w1', 4224)]
"""
from __future__ import annotations

import dataclasses
import os
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import DataType
from ..ir.walk import map_expr, node_all_exprs, node_exprs, rewrite_nodes, walk_expr, walk_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, stored_buffers, uses_workgroup_scope, zero_literal
from .dispatch import COARSEN_GENERATOR, coarsen_factor
from .protocol import OptimizerError, PassBase, PassContext, Rewrite

STREAM_GENERATOR = "vyre_vk.opt.stream"
#: Wraps each tile's chain loop: between the barriers around it no invocation writes the half of the
#: double buffers it reads, so unroll may issue its workgroup loads ahead like any other load.
TILE_GENERATOR = "vyre_vk.opt.stream.tile"
TILES = (256, 128, 64, 32)  # steps per tile: the largest that divides the loop and fits
MAX_CHAINS = 1 << 15   # more chains than this fill the GPU by themselves
MIN_CHAINS = 8         # chains per workgroup when halving C for more workgroups
#: Device classes that stream by default. nvidia: H200, pass_ab.py with absorbed products and peels
#: only where needed: linear_relu 0.61 -> 0.30 ms, mlp_backward 1.36 -> 0.81, flash_attention and
#: top_k unchanged; ops.py: linear_relu 0.274 -> 0.076, mlp_backward 0.827 -> 0.399 (with both).
STREAM_BY_CLASS: dict[str, bool] = {"nvidia": True}
#: (chains per workgroup C, lanes per workgroup L) per class; ``$VYRE_VK_STREAM_SHAPE=C,L`` overrides.
SHAPE_BY_CLASS = {"default": (32, 256)}
_TYPES = (DataType.F32, DataType.U32, DataType.I32)


def streaming(device_class: str) -> bool:
    """The class's choice; ``$VYRE_VK_STREAM=1`` / ``0`` overrides it (a knob for measurements).

    >>> streaming("no such class") == (os.environ.get("VYRE_VK_STREAM") == "1")
    True
    """
    env = os.environ.get("VYRE_VK_STREAM")
    if env not in (None, "", "0", "1"):
        raise OptimizerError(f"VYRE_VK_STREAM={env!r} is not 0 or 1. Fix: set it to 1 (on), 0 (off), or unset it.")
    return env == "1" if env in ("0", "1") else STREAM_BY_CLASS.get(device_class, False)


def stream_shape(device_class: str) -> tuple[int, int]:
    """(C, L) for the class; ``$VYRE_VK_STREAM_SHAPE=C,L`` overrides it (C a power of two <= L,
    L a multiple of 32 up to 1024).

    >>> stream_shape("no such class") if not os.environ.get("VYRE_VK_STREAM_SHAPE") else (32, 256)
    (32, 256)
    """
    env = os.environ.get("VYRE_VK_STREAM_SHAPE")
    if not env:
        return SHAPE_BY_CLASS.get(device_class, SHAPE_BY_CLASS["default"])
    parts = env.split(",")
    ok = len(parts) == 2 and all(x.strip().isdigit() for x in parts)
    c, lanes = (int(x) for x in parts) if ok else (0, 0)
    if not (ok and 1 <= c <= lanes <= 1024 and c & (c - 1) == 0 and lanes % 32 == 0):
        raise OptimizerError(f"VYRE_VK_STREAM_SHAPE={env!r} is not C,L (chains and lanes per workgroup). "
                             "Fix: set it to e.g. 32,256 (C a power of two <= L, L a multiple of 32 <= 1024).")
    return c, lanes


@dataclasses.dataclass(frozen=True)
class Streamed:
    program: Program
    loop_vars: tuple  # each arm's loop
    chains: int       # invocations whose chains are streamed (all arms)
    steps: int        # the longest arm's loop
    tile: int         # T
    per_group: int    # C
    lanes: int        # L
    buffers: tuple    # streamed buffers, in order


@dataclasses.dataclass(frozen=True)
class _Arm:
    """A leaf of the stage's branches on the invocation id: ids lo..hi-1 run PRE, the loop, POST."""
    lo: int
    hi: int
    pre: tuple      # the lets before the loop (outer ones included), reading the id as InvocationId
    loop: N.Loop
    post: tuple
    lets: dict      # those of `pre` that load nothing and are never assigned: name -> value (inlined)


@dataclasses.dataclass(frozen=True)
class _Stream:
    load: E.Load
    index: E.Expr     # the load's index with the arm's load-free lets inlined: reads only the id and k
    shared: str
    two_d: bool       # reads the id too: C values per step, else one
    chain_fast: bool  # consecutive chains are consecutive addresses (else consecutive steps)


def _b(op: BinOp, a: E.Expr, b: E.Expr) -> E.Expr:
    return E.BinOpExpr(op, a, b)


def _u(v: int) -> E.Expr:
    return E.LitU32(v)


_GID = E.InvocationId(0)
_NODES = (N.Let, N.Assign, N.Store, N.If, N.Loop, N.Block, N.Region)


def _peel(entry: tuple) -> tuple[list, tuple]:
    """The Regions wrapping the whole body (outermost first) and the body inside them."""
    regions = []
    while len(entry) == 1 and isinstance(entry[0], Region):
        regions.append(entry[0])
        entry = tuple(entry[0].body)
    return regions, entry


def _inline(e: E.Expr, lets: dict) -> E.Expr:
    """`e` with the lets in `lets` replaced by their values (transitively)."""
    return map_expr(e, lambda x: _inline(lets[x.name], lets) if isinstance(x, E.Var) and x.name in lets else None)


def _arms(nodes: tuple, pre: tuple, lets: dict, lo: int, hi: Optional[int], splits: list,
          assigned: set) -> Optional[list]:
    """The arms under `nodes`: leading lets, then either one ``if id < M`` (recursing into both
    branches, id through the load-free lets `lets`) or a leaf (lets, one literal loop, the rest).
    Split points of two-way branches go to `splits` (they must be multiples of C)."""
    k = 0
    while k < len(nodes) and isinstance(nodes[k], N.Let):
        k += 1
    pre = pre + tuple(nodes[:k])
    lets = dict(lets)
    for n in nodes[:k]:
        if n.name not in assigned and not any(isinstance(x, (E.Load, E.BufLen)) for x in walk_expr(n.value)):
            lets[n.name] = n.value
    rest = nodes[k:]
    if len(rest) == 1 and isinstance(rest[0], N.If):
        c = rest[0].cond
        if not (isinstance(c, E.BinOpExpr) and c.op is BinOp.Lt and isinstance(c.right, E.LitU32)
                and _inline(c.left, lets) == _GID):
            return None
        m = c.right.value
        top = m if hi is None else min(hi, m)
        out = _arms(tuple(rest[0].then), pre, lets, lo, top, splits, assigned)
        if rest[0].otherwise:
            if hi is None:
                return None  # the else branch would run to the end of the grid
            splits.append(m)
            other = _arms(tuple(rest[0].otherwise), pre, lets, max(lo, m), hi, splits, assigned)
            out = None if out is None or other is None else out + other
        return out
    loops = [j for j, n in enumerate(rest) if isinstance(n, N.Loop)]
    if hi is None or not loops or loops[0] != 0 or len(loops) != 1:
        return None
    loop = rest[0]
    if not (isinstance(loop.from_, E.LitU32) and isinstance(loop.to, E.LitU32)) or lo >= hi:
        return None
    if any(isinstance(n, (N.Loop, N.Store)) for n in walk_nodes(loop.body)):
        return None
    return [_Arm(lo, hi, pre, loop, tuple(rest[1:]), lets)]


def _match(p: Program) -> Optional[tuple]:
    """(regions, arms, two-way split points) of a stage of the module docstring's shape, else None."""
    if coarsen_factor(p) != 1 or uses_workgroup_scope(p) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None
    if any(not isinstance(n, _NODES) for n in walk_nodes(p.entry)):
        return None  # a return or a trap would leave the tile loop's barriers
    facts = Facts(p)
    if any(facts.may_trap(e) for n in walk_nodes(p.entry) for e in node_exprs(n)):
        return None
    regions, body = _peel(tuple(p.entry))
    splits: list = []
    arms = _arms(body, (), {}, 0, None, splits, assigned_vars(p.entry))
    return (regions, arms, splits) if arms else None


def _value_at(e: E.Expr, g: int, k: str, kv: int, facts: Facts) -> Optional[int]:
    """`e` (u32 arithmetic of the id and k) at id = g, k = kv, or None where it does not fold."""
    from .fold import fold_expr, lit_value

    sub = map_expr(e, lambda x: _u(g) if x == _GID else _u(kv) if x == E.Var(k) else None)
    v = lit_value(map_expr(sub, lambda x: fold_expr(x, facts)))
    return None if v is None else int(v)


def _streams(arm: _Arm, facts: Facts, written: set, fresh: NameSource) -> dict:
    """The arm's loads to stream: index (the arm's lets inlined) reads only the id and k, and k."""
    out: dict = {}
    for x in node_all_exprs(arm.loop.body):
        if not isinstance(x, E.Load) or x in out:
            continue
        b = facts.bufs.get(x.buffer)
        idx = _inline(x.index, arm.lets)
        names = {y.name for y in walk_expr(idx) if isinstance(y, E.Var)}
        kinds = {type(y) for y in walk_expr(idx)}
        if (b is None or b.is_workgroup or x.buffer in written or b.element not in _TYPES or names != {arm.loop.var}
                or kinds & {E.Load, E.BufLen, E.WorkgroupId, E.LocalId}
                or any(isinstance(y, E.InvocationId) and y != _GID for y in walk_expr(idx))):
            continue
        two_d = _GID in list(walk_expr(idx))
        base = _value_at(idx, arm.lo, arm.loop.var, 0, facts)
        fast = two_d and base is not None and _value_at(idx, arm.lo + 1, arm.loop.var, 0, facts) == base + 1
        out[x] = _Stream(x, idx, fresh(x.buffer), two_d, fast)
    return out


def stream(p: Program, device_class: str = "default", shared_bytes: int = 32768,
           min_workgroups: int = 1) -> Optional[Streamed]:
    """`p` with its chains streamed (module docstring) in the class's shape, its double buffers
    within `shared_bytes` of workgroup memory (the device's limit), or None where it does not qualify.
    Without ``$VYRE_VK_STREAM_SHAPE``, C halves (not below MIN_CHAINS) while there would be fewer
    than `min_workgroups` workgroups (PassContext's, as workgroup_size sizes few invocations)."""
    chains, lanes = stream_shape(device_class)
    m = _match(p)
    if m is None:
        return None
    regions, arms, splits = m
    top = max(a.hi for a in arms)
    # the grid: vyre's rule over every bound buffer (workgroup memory), divided down to >= ceil(top / C)
    total = -(-max(max(b.count, 1) for b in p.buffers if not b.is_workgroup) // lanes)
    while (not os.environ.get("VYRE_VK_STREAM_SHAPE") and chains > MIN_CHAINS
           and -(-top // chains) < min_workgroups and -(-top // (chains // 2)) <= total):
        chains //= 2
    if top > MAX_CHAINS or any(s % chains for s in splits):
        return None  # too many chains, or a workgroup's chains would take both sides of a branch
    facts = Facts(p)
    written = stored_buffers(p.entry)
    fresh = NameSource(all_names(p), "opt_st_")
    per_arm = [_streams(a, facts, written, fresh) for a in arms]
    if not all(any(s.two_d for s in st.values()) for st in per_arm):
        return None
    trips = [a.loop.to.value - a.loop.from_.value for a in arms]
    words = sum(2 * ((chains + 1) if s.two_d else 1) for st in per_arm for s in st.values())
    tile = next((t for t in TILES if all(k % t == 0 and k // t >= 2 for k in trips) and (chains * t) % lanes == 0
                 and t <= lanes and words * t * 4 <= shared_bytes), None)
    if tile is None:
        return None
    need = -(-top // chains)
    if total < need:
        return None
    lane, g0, g = (fresh(h) for h in ("lane", "g0", "g"))
    bodies = [_streamed(a, st, facts, g0, g, lane, chains, lanes, tile, fresh) for a, st in zip(arms, per_arm)]
    # the arms by workgroup: a workgroup's chains g0..g0+C-1 lie in one arm (splits are multiples of C)
    tree: tuple = ()
    for a, body in reversed(list(zip(arms, bodies))):
        cond = _b(BinOp.Lt, E.Var(g0), _u(a.hi))
        tree = (N.If(cond, body, tree),)
    body = (N.Let(lane, E.LocalId(0)), N.Let(g0, _b(BinOp.Mul, E.WorkgroupId(0), _u(chains))),
            N.Let(g, _b(BinOp.Add, E.Var(g0), E.Var(lane)))) + tree
    for reg in reversed(regions):
        body = (dataclasses.replace(reg, body=body),)
    shared = tuple(BufferDecl.workgroup(s.shared, 2 * tile * ((chains + 1) if s.two_d else 1),
                                        facts.bufs[s.load.buffer].element)
                   for st in per_arm for s in st.values())
    factor = max(1, total // need)
    entry = (Region(f"{COARSEN_GENERATOR}:{factor}", None, (Region(STREAM_GENERATOR, None, body),)),)
    q = Program(tuple(p.buffers) + shared, (lanes, 1, 1), entry, p.entry_op_id, p.non_composable_with_self)
    return Streamed(q, tuple(a.loop.var for a in arms), sum(a.hi - a.lo for a in arms), max(trips), tile, chains,
                    lanes, tuple(dict.fromkeys(s.load.buffer for st in per_arm for s in st.values())))


def _streamed(arm: _Arm, streams: dict, facts: Facts, g0: str, g: str, lane_name: str, C: int, L: int, T: int,
              fresh: NameSource) -> tuple:
    """One arm's body (module docstring), the id read as ``g`` (per lane) and ``g0 + c`` (chain c)."""
    loop, lane = arm.loop, E.Var(lane_name)
    t, kk, cur = (E.Var(fresh(h)) for h in ("t", "kk", "cur"))
    nt = (loop.to.value - loop.from_.value) // T
    own = lambda nodes: tuple(rewrite_nodes(tuple(nodes), expr=lambda e: map_expr(  # noqa: E731
        e, lambda x: E.Var(g) if x == _GID else None)))
    regs: dict = {}  # (shared buffer, m) -> register name
    ss = list(streams.values())

    def element(s: _Stream, m: int) -> tuple[E.Expr, E.Expr, E.Expr]:
        """(lane's element e, its chain c, its step) of share m of a tile."""
        e = _b(BinOp.Add, lane, _u(m * L))
        if not s.two_d:
            return e, _u(0), e
        if s.chain_fast:
            return e, _b(BinOp.Mod, e, _u(C)), _b(BinOp.Div, e, _u(C))
        return e, _b(BinOp.Div, e, _u(T)), _b(BinOp.Mod, e, _u(T))

    def shares(s: _Stream) -> range:
        return range(C * T // L if s.two_d else 1)

    def loads(tt: E.Expr) -> list:
        out = []
        for s in ss:
            for m in shares(s):
                _, c, step = element(s, m)
                k = _b(BinOp.Add, _u(loop.from_.value), _b(BinOp.Add, _b(BinOp.Mul, tt, _u(T)), step))
                at = map_expr(s.index, lambda x: (_b(BinOp.Add, E.Var(g0), c) if x == _GID
                                                  else k if x == E.Var(loop.var) else None))
                name = regs.setdefault((s.shared, m), fresh("pf"))
                load = N.Assign(name, E.Load(s.load.buffer, at))
                out.append(load if s.two_d else N.If(_b(BinOp.Lt, lane, _u(T)), (load,), ()))
        return out

    def stores(buf: E.Expr) -> list:
        out = []
        for s in ss:
            for m in shares(s):
                e, c, step = element(s, m)
                row = _b(BinOp.Add, _b(BinOp.Mul, buf, _u(T)), step)
                if s.two_d:
                    out.append(N.Store(s.shared, _b(BinOp.Add, _b(BinOp.Mul, row, _u(C + 1)), c),
                                       E.Var(regs[(s.shared, m)])))
                else:
                    out.append(N.If(_b(BinOp.Lt, lane, _u(T)), (N.Store(s.shared, row, E.Var(regs[(s.shared, m)])),), ()))
        return out

    first = loads(_u(0))  # names the registers
    declare = [N.Let(name, zero_literal(facts.bufs[s.load.buffer].element)) for s in ss for m in shares(s)
               for name in (regs[(s.shared, m)],)]
    row = _b(BinOp.Add, _b(BinOp.Mul, cur, _u(T)), kk)
    table = {s.load: E.Load(s.shared, _b(BinOp.Add, _b(BinOp.Mul, row, _u(C + 1)), lane) if s.two_d else row)
             for s in ss}
    step_body = own(rewrite_nodes(tuple(loop.body), expr=lambda e: map_expr(
        e, lambda x: table.get(x) if isinstance(x, E.Load) else None)))
    acting = _b(BinOp.And, _b(BinOp.Lt, lane, _u(C)), _b(BinOp.Lt, E.Var(g), _u(arm.hi)))
    if arm.lo:  # a workgroup between two arms' ranges (g0 past the last arm, before this one) acts on none
        acting = _b(BinOp.And, acting, _b(BinOp.Ge, E.Var(g), _u(arm.lo)))
    more = _b(BinOp.Lt, _b(BinOp.Add, t, _u(1)), _u(nt))
    k_at = _b(BinOp.Add, _u(loop.from_.value), _b(BinOp.Add, _b(BinOp.Mul, t, _u(T)), kk))
    tiles = N.Loop(t.name, _u(0), _u(nt), (
        N.Let(cur.name, _b(BinOp.BitAnd, t, _u(1))),
        N.If(more, tuple(loads(_b(BinOp.Add, t, _u(1)))), ()),
        N.If(acting, (Region(TILE_GENERATOR, None, (
            N.Loop(kk.name, _u(0), _u(T), (N.Let(loop.var, k_at),) + tuple(step_body)),)),), ()),
        N.If(more, tuple(stores(_b(BinOp.BitXor, cur, _u(1)))), ()),
        N.Node.barrier(),
    ))
    return (own(arm.pre) + tuple(declare) + tuple(first) + tuple(stores(_u(0))) + (N.Node.barrier(), tiles)
            + (N.If(acting, own(arm.post), ()),))


class Stream(PassBase):
    """Streamed chains (module docstring); a schedule pass, on where :func:`streaming` says so."""
    name, kind = "stream", "schedule"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return streaming(ctx.device_class) and any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        s = stream(program, ctx.device_class, ctx.shared_memory_bytes, ctx.min_workgroups)
        return None if s is None else Rewrite((s.program,), detail=s)

    def explain(self, rewrite: Rewrite) -> str:
        s: Streamed = rewrite.detail
        return (f"loop {', '.join(s.loop_vars)}: {s.chains} chains of {'up to ' if len(s.loop_vars) > 1 else ''}"
                f"{s.steps} steps, {s.per_group} per workgroup of "
                f"{s.lanes} lanes: every lane loads its share of the next {s.per_group}x{s.tile} tile of "
                f"{', '.join(s.buffers)} while {s.per_group} lanes step through the current one in workgroup "
                "memory (each chain's operations in the same order)")


STREAM = Stream()
