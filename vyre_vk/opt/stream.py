"""Streamed chains: the loads of few, long serial chains go through workgroup memory in tiles.

linear_relu (4096 chains of 4096 steps) and the seed op's grad_x stage (2048 of 8192) keep one
exact chain per invocation, ``acc = acc + x[k] * w[idx(r, k)]`` for k in order. With so few
chains an SM holds about one warp, whose own loads are all it has in flight, and bytes in flight
over memory latency bound each SM's bandwidth (H100, tools/bench/gemv_layouts.py: 139-157 us for
hand-written chains, against 20 us of DRAM traffic). Here each workgroup runs C chains with L > C
lanes: every lane loads its share of the next C x T tile of each streamed buffer into registers
(consecutive lanes on consecutive addresses), while lanes 0..C-1 run T steps of their chains over
the current tile in workgroup memory; a double buffer and one barrier per tile::

    let r = gid.x                       let lane = local.x; let r0 = wg.x * C; let r = r0 + lane
    if r < R {                          if r0 < R {                                  (uniform)
        PRE                                 PRE; tile 0 -> shared[0]; barrier
        for k in a..b { BODY }   ->         for t in 0..K/T {
        POST                                    if t + 1 < K/T { tile t+1 -> registers }
    }                                           if lane < C && r < R { for kk in 0..T { let k = a + t*T + kk; BODY' } }
                                                if t + 1 < K/T { registers -> shared[1 - t%2] }; barrier
                                            }
                                            if lane < C && r < R { POST }
                                        }

BODY' reads ``shared[t%2][kk][lane]`` where BODY read ``buf[idx(r, k)]``: the value of the same
element (the loader evaluates idx at (r0 + c, k) for each chain c), so every chain runs the same
operations on the same values in the same order: the same bits. A load qualifies (is streamed)
when its index, with PRE's load-free lets inlined, reads only ``r`` and ``k`` and reads k, from a
4-byte buffer the stage never writes. PRE runs for every lane (lets only: loads out of bounds
read zero, nothing in the stage may trap); loads move ahead of BODY's statements because the
stage has no stores before POST and loads have no effect (as unroll.py argues).

The grid: workgroup memory makes vyre's rule count every bound buffer, so a coarsening region
(dispatch.py) divides it down to at least ceil(R / C) workgroups; later ones do nothing.

Off by default everywhere until measured (STREAM_BY_CLASS); ``$VYRE_VK_STREAM=1`` / ``0``
turns it on / off for A/B runs.

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
from ..ir.walk import map_expr, node_all_exprs, node_bodies, node_exprs, rewrite_nodes, walk_expr, walk_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, stored_buffers, uses_workgroup_scope, zero_literal
from .dispatch import COARSEN_GENERATOR, coarsen_factor
from .protocol import OptimizerError, PassBase, PassContext, Rewrite

STREAM_GENERATOR = "vyre_vk.opt.stream"
TILES = (256, 128, 64, 32)  # steps per tile: the largest that divides the loop and fits
MAX_CHAINS = 1 << 15   # more chains than this fill the GPU by themselves
#: Device classes that stream by default: none until tools/bench/gemv_layouts.py's stream rows and
#: an ops.py A/B say it wins there.
STREAM_BY_CLASS: dict[str, bool] = {}
#: (chains per workgroup C, lanes per workgroup L) per class; ``$VYRE_VK_STREAM_SHAPE=C,L`` overrides.
SHAPE_BY_CLASS = {"default": (32, 256)}
#: Workgroup memory the double buffers may take: nvidia's maxComputeSharedMemorySize is 48 KB on
#: every card since Kepler; elsewhere 32 KB, what lavapipe and most desktop drivers report.
SHARED_BYTES_BY_CLASS = {"nvidia": 48 * 1024, "default": 32 * 1024}
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
    loop_var: str
    chains: int      # R
    steps: int       # K
    tile: int        # T
    per_group: int   # C
    lanes: int       # L
    buffers: tuple   # streamed buffers, in order


@dataclasses.dataclass(frozen=True)
class _Stream:
    load: E.Load
    index: E.Expr    # the load's index with PRE's lets inlined: reads only r and k
    shared: str
    two_d: bool      # reads r too: C values per step, else one
    chain_fast: bool  # consecutive chains are consecutive addresses (else consecutive steps)


def _b(op: BinOp, a: E.Expr, b: E.Expr) -> E.Expr:
    return E.BinOpExpr(op, a, b)


def _u(v: int) -> E.Expr:
    return E.LitU32(v)


def _peel(entry: tuple) -> tuple[list, tuple]:
    """The Regions wrapping the whole body (outermost first) and the body inside them."""
    regions = []
    while len(entry) == 1 and isinstance(entry[0], Region):
        regions.append(entry[0])
        entry = tuple(entry[0].body)
    return regions, entry


def _match(p: Program) -> Optional[tuple]:
    """(regions, r, R, PRE, loop, POST) of a stage of the module docstring's shape, else None."""
    if coarsen_factor(p) != 1 or uses_workgroup_scope(p) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None
    if any(isinstance(n, (N.Return, N.Trap)) or type(n).__name__ not in _NODES for n in walk_nodes(p.entry)):
        return None
    facts = Facts(p)
    if any(facts.may_trap(e) for n in walk_nodes(p.entry) for e in node_exprs(n)):
        return None
    regions, body = _peel(tuple(p.entry))
    gid = E.InvocationId(0)
    r = None
    if len(body) == 2 and isinstance(body[0], N.Let) and body[0].value == gid:
        r, body = body[0].name, body[1:]
    if len(body) != 1 or not isinstance(body[0], N.If) or body[0].otherwise:
        return None
    cond = body[0].cond
    if not (isinstance(cond, E.BinOpExpr) and cond.op is BinOp.Lt and isinstance(cond.right, E.LitU32)
            and cond.left in (gid, E.Var(r) if r else gid)):
        return None
    then = tuple(body[0].then)
    loops = [k for k, n in enumerate(then) if isinstance(n, N.Loop)]
    if len(loops) != 1:
        return None
    k = loops[0]
    pre, loop, post = then[:k], then[k], then[k + 1:]
    if r is not None and r in assigned_vars(then):
        return None
    if not all(isinstance(n, N.Let) for n in pre):
        return None
    if not (isinstance(loop.from_, E.LitU32) and isinstance(loop.to, E.LitU32)):
        return None
    if any(isinstance(n, (N.Loop, N.Store)) for n in walk_nodes(loop.body)):
        return None
    return regions, r, cond.right.value, pre, loop, post


_NODES = {"Let", "Assign", "Store", "If", "Loop", "Block", "Region"}


def _inline(e: E.Expr, lets: dict) -> E.Expr:
    """`e` with the PRE lets in `lets` replaced by their values (transitively)."""
    return map_expr(e, lambda x: _inline(lets[x.name], lets) if isinstance(x, E.Var) and x.name in lets else None)


def _value_at(e: E.Expr, r: str, rv: int, k: str, kv: int) -> Optional[int]:
    """`e` (u32 arithmetic of r and k) at r = rv, k = kv, or None where it does not fold."""
    from .fold import fold_expr, lit_value

    sub = map_expr(e, lambda x: _u(rv) if x == E.Var(r) else _u(kv) if x == E.Var(k) else None)
    facts = Facts(Program((), (1, 1, 1), ()))
    out = map_expr(sub, lambda x: fold_expr(x, facts))
    v = lit_value(out)
    return None if v is None else int(v)


def stream(p: Program, device_class: str = "default") -> Optional[Streamed]:
    """`p` with its chains streamed (module docstring) in the class's shape, or None where it
    does not qualify."""
    chains, lanes = stream_shape(device_class)
    budget = SHARED_BYTES_BY_CLASS.get(device_class, SHARED_BYTES_BY_CLASS["default"])
    m = _match(p)
    if m is None:
        return None
    regions, r_name, R, pre, loop, post = m
    K = loop.to.value - loop.from_.value
    if not 0 < R <= MAX_CHAINS:
        return None
    fresh = NameSource(all_names(p), "opt_st_")
    r = r_name or fresh("r")
    facts = Facts(p)
    written = stored_buffers(p.entry)
    assigned = assigned_vars(p.entry)
    lets = {n.name: n.value for n in pre if n.name not in assigned
            and not any(isinstance(x, (E.Load, E.BufLen)) or isinstance(x, E.InvocationId) and x != E.InvocationId(0)
                        for x in walk_expr(n.value))}
    lets = {name: map_expr(v, lambda x: E.Var(r) if x == E.InvocationId(0) else None) for name, v in lets.items()}
    streams: dict = {}
    for x in node_all_exprs(loop.body):
        if not isinstance(x, E.Load) or x in streams:
            continue
        b = facts.bufs.get(x.buffer)
        idx = _inline(map_expr(x.index, lambda y: E.Var(r) if y == E.InvocationId(0) else None), lets)
        names = {y.name for y in walk_expr(idx) if isinstance(y, E.Var)}
        if (b is None or b.is_workgroup or x.buffer in written or b.element not in _TYPES
                or loop.var not in names or not names <= {r, loop.var}
                or any(isinstance(y, (E.Load, E.BufLen, E.InvocationId, E.WorkgroupId, E.LocalId)) for y in walk_expr(idx))):
            continue
        two_d = r in names
        base = _value_at(idx, r, 0, loop.var, 0)
        fast = two_d and base is not None and _value_at(idx, r, 1, loop.var, 0) == base + 1
        streams[x] = _Stream(x, idx, fresh(x.buffer), two_d, fast)
    if not any(s.two_d for s in streams.values()):
        return None
    tile = next((t for t in TILES if K % t == 0 and K // t >= 2 and (chains * t) % lanes == 0 and t <= lanes
                 and sum(2 * t * ((chains + 1) if s.two_d else 1) * 4 for s in streams.values()) <= budget),
                None)
    if tile is None:
        return None
    # the grid: vyre's rule over every bound buffer (workgroup memory), divided down to >= ceil(R / C)
    total = -(-max(max(b.count, 1) for b in p.buffers if not b.is_workgroup) // lanes)
    need = -(-R // chains)
    if total < need:
        return None
    factor = max(1, total // need)
    body = _streamed(p, r, R, pre, loop, post, list(streams.values()), chains, lanes, tile, fresh)
    for reg in reversed(regions):
        body = (dataclasses.replace(reg, body=body),)
    shared = tuple(BufferDecl.workgroup(s.shared, 2 * tile * ((chains + 1) if s.two_d else 1), facts.bufs[s.load.buffer].element)
                   for s in streams.values())
    entry = (Region(f"{COARSEN_GENERATOR}:{factor}", None, (Region(STREAM_GENERATOR, None, body),)),)
    q = Program(tuple(p.buffers) + shared, (lanes, 1, 1), entry, p.entry_op_id, p.non_composable_with_self)
    return Streamed(q, loop.var, R, K, tile, chains, lanes, tuple(s.load.buffer for s in streams.values()))


def _streamed(p: Program, r: str, R: int, pre, loop: N.Loop, post, streams: list, C: int, L: int, T: int,
              fresh: NameSource) -> tuple:
    """The new body inside the original regions (see the module docstring)."""
    lane, r0, t, kk, cur = (E.Var(fresh(h)) for h in ("lane", "r0", "t", "kk", "cur"))
    nt = (loop.to.value - loop.from_.value) // T
    own = lambda nodes: tuple(rewrite_nodes(tuple(nodes), expr=lambda e: map_expr(  # noqa: E731
        e, lambda x: E.Var(r) if x == E.InvocationId(0) else None)))
    regs: dict = {}  # (stream, m) -> register name

    def loads(tt: E.Expr) -> list:
        out = []
        for s in streams:
            for m in range(C * T // L if s.two_d else 1):
                e = _b(BinOp.Add, lane, _u(m * L))
                if s.two_d:
                    c, step = ((_b(BinOp.Mod, e, _u(C)), _b(BinOp.Div, e, _u(C))) if s.chain_fast
                               else (_b(BinOp.Div, e, _u(T)), _b(BinOp.Mod, e, _u(T))))
                else:
                    c, step = _u(0), e
                k = _b(BinOp.Add, _u(loop.from_.value), _b(BinOp.Add, _b(BinOp.Mul, tt, _u(T)), step))
                at = map_expr(s.index, lambda x: (_b(BinOp.Add, r0, c) if x == E.Var(r) else k if x == E.Var(loop.var)
                                                  else None))
                name = regs.setdefault((s.shared, m), fresh("pf"))
                load = N.Assign(name, E.Load(s.load.buffer, at))
                out.append(load if s.two_d else N.If(_b(BinOp.Lt, lane, _u(T)), (load,), ()))
        return out

    def stores(buf: E.Expr) -> list:
        out = []
        for s in streams:
            for m in range(C * T // L if s.two_d else 1):
                e = _b(BinOp.Add, lane, _u(m * L))
                if s.two_d:
                    c, step = ((_b(BinOp.Mod, e, _u(C)), _b(BinOp.Div, e, _u(C))) if s.chain_fast
                               else (_b(BinOp.Div, e, _u(T)), _b(BinOp.Mod, e, _u(T))))
                    at = _b(BinOp.Add, _b(BinOp.Mul, _b(BinOp.Add, _b(BinOp.Mul, buf, _u(T)), step), _u(C + 1)), c)
                    out.append(N.Store(s.shared, at, E.Var(regs[(s.shared, m)])))
                else:
                    out.append(N.If(_b(BinOp.Lt, lane, _u(T)), (N.Store(
                        s.shared, _b(BinOp.Add, _b(BinOp.Mul, buf, _u(T)), e), E.Var(regs[(s.shared, m)])),), ()))
        return out

    first = loads(_u(0))  # names the registers
    elem = {s.shared: Facts(p).bufs[s.load.buffer].element for s in streams}
    declare = [N.Let(name, zero_literal(elem[sh])) for (sh, _), name in regs.items()]
    table = {s.load: E.Load(s.shared, _b(BinOp.Add, _b(BinOp.Mul, _b(BinOp.Add, _b(BinOp.Mul, cur, _u(T)), kk),
                                                      _u(C + 1)), lane) if s.two_d
                            else _b(BinOp.Add, _b(BinOp.Mul, cur, _u(T)), kk)) for s in streams}
    step_body = own(rewrite_nodes(tuple(loop.body), expr=lambda e: map_expr(
        e, lambda x: table.get(x) if isinstance(x, E.Load) else None)))
    acting = _b(BinOp.And, _b(BinOp.Lt, lane, _u(C)), _b(BinOp.Lt, E.Var(r), _u(R)))
    more = _b(BinOp.Lt, _b(BinOp.Add, t, _u(1)), _u(nt))
    k_at = _b(BinOp.Add, _u(loop.from_.value), _b(BinOp.Add, _b(BinOp.Mul, t, _u(T)), kk))
    tiles = N.Loop(t.name, _u(0), _u(nt), (
        N.Let(cur.name, _b(BinOp.BitAnd, t, _u(1))),
        N.If(more, tuple(loads(_b(BinOp.Add, t, _u(1)))), ()),
        N.If(acting, (N.Loop(kk.name, _u(0), _u(T), (N.Let(loop.var, k_at),) + tuple(step_body)),), ()),
        N.If(more, tuple(stores(_b(BinOp.BitXor, cur, _u(1)))), ()),
        N.Node.barrier(),
    ))
    inner = (own(pre) + tuple(declare) + tuple(first) + tuple(stores(_u(0))) + (N.Node.barrier(), tiles)
             + (N.If(acting, own(post), ()),))
    return (N.Let(lane.name, E.LocalId(0)), N.Let(r0.name, _b(BinOp.Mul, E.WorkgroupId(0), _u(C))),
            N.Let(r, _b(BinOp.Add, r0, lane)), N.If(_b(BinOp.Lt, r0, _u(R)), inner, ()))


class Stream(PassBase):
    """Streamed chains (module docstring); a schedule pass, on where :func:`streaming` says so."""
    name, kind = "stream", "schedule"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return streaming(ctx.device_class) and any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        s = stream(program, ctx.device_class)
        return None if s is None else Rewrite((s.program,), detail=s)

    def explain(self, rewrite: Rewrite) -> str:
        s: Streamed = rewrite.detail
        return (f"loop {s.loop_var}: {s.chains} chains of {s.steps} steps, {s.per_group} per workgroup of "
                f"{s.lanes} lanes: every lane loads its share of the next {s.per_group}x{s.tile} tile of "
                f"{', '.join(s.buffers)} while {s.per_group} lanes step through the current one in workgroup "
                "memory (each chain's operations in the same order)")


STREAM = Stream()
