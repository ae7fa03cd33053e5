"""Load-prefetching unroll of innermost reduction loops.

The seed op's kernels are long serial loops (``for m in 0..2048: acc = acc + x[m] *
w1[m*H + j]``) run by few invocations: each iteration's load is a fresh DRAM line, and a
GPU thread that waits for one load before issuing the next is latency-bound (~1 us per
round trip on an H200, 2048 of them in a row). Splitting the sum would change the f32
rounding, so the order of the arithmetic must stay; the loads need not wait, though.
This pass unrolls such a loop by U and issues the loads of all U iterations first::

    for m in a..b { BODY(m) }
 ->
    for mo in 0..N/U {
        let mb = a + mo * U
        let p0 = LOAD0(m := mb + 0) ... let p(U-1) = LOAD(m := mb + U-1)   // all loads first
        { let m = mb + 0; BODY(m), each prefetched load replaced by its p }
        ... (U copies, in order)
    }
    for m in a + (N/U)*U .. b { BODY(m) }                                   // the rest

Same values, same operations in the same order: bit-identical. A load may move ahead
of statements of earlier iterations because the loop body writes no buffer (no store,
no atomic): a load has no effect, and reads out of bounds give zero wherever they are
evaluated. Prefetched loads are those whose index depends only on the loop variable
and on variables the loop body does not define or assign (the body's leading index lets,
``let idx = chunk * T + local``, are inlined into it), and that cannot trap.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import TRANSCENDENTAL_UNOPS, BinOp, UnOp
from ..ir.program import Program, Region
from ..ir.walk import map_expr, node_all_exprs, rewrite_nodes, walk_expr, walk_nodes
from .analysis import (Facts, NameSource, all_names, assigned_vars, blocked_loop, defined_vars, holds_costly, iteration,
                       replace_entry, size_of)
from .distribute import KEYCHAIN_GENERATOR
from .spread import SPREAD_GENERATOR
from .stream import TILE_GENERATOR
from .protocol import OptimizerError, PassBase, PassContext, Rewrite

UNROLL = 16
#: Loads in flight per invocation, per device class: a long serial loop on a GPU is bound by
#: memory latency, so more copies mean fewer round trips (registers permitting).
UNROLL_BY_CLASS = {"nvidia": 16, "default": 16}
#: The exact precision's factors where they differ. nvidia 32: with speculative chains
#: (speculate.py) the folds wait on loads, not arithmetic; H200, ops.py, 16 -> 32: rms_norm 0.149 ->
#: 0.126 ms, layer_norm 0.168 -> 0.153, linear_relu 0.340 -> 0.275, softmax 0.209 -> 0.175,
#: mlp_backward 0.799 -> 0.826, the rest within 1%; 64 lost on attention (0.53 -> 0.79). The fast
#: precision keeps 16 (H100: its reduce_variance went 0.083 -> 0.126 ms at 32).
EXACT_UNROLL_BY_CLASS = {"nvidia": 32}
MAX_BODY_SIZE = 64      # expression nodes in the loop body (code size: U copies)


def unroll_factor(device_class: str, precision: str = "exact") -> int:
    """The class's factor in that precision; ``$VYRE_VK_UNROLL`` overrides it (a tuning knob for
    measurements).

    >>> unroll_factor("no such class") == int(os.environ.get("VYRE_VK_UNROLL") or UNROLL_BY_CLASS["default"])
    True
    """
    env = os.environ.get("VYRE_VK_UNROLL")
    if not env:
        exact = EXACT_UNROLL_BY_CLASS.get(device_class) if precision == "exact" else None
        return exact or UNROLL_BY_CLASS.get(device_class, UNROLL_BY_CLASS["default"])
    try:
        factor = int(env)
    except ValueError:
        factor = 0
    if factor < 1:
        raise OptimizerError(f"VYRE_VK_UNROLL={env!r} is not a positive whole number of loop copies. "
                             "Fix: set it to e.g. 8 or 16, or unset it to use the device class's factor.")
    return factor


#: Device classes whose unrolled blocks issue the next block's loads first (:func:`_pipelined`).
PIPELINE_BY_CLASS: dict[str, bool] = {}


def pipelined(device_class: str) -> bool:
    """The class's choice; ``$VYRE_VK_PIPELINE=1`` / ``0`` overrides it (a tuning knob for measurements).

    >>> pipelined("no such class") == (os.environ.get("VYRE_VK_PIPELINE") == "1")
    True
    """
    env = os.environ.get("VYRE_VK_PIPELINE")
    return env == "1" if env in ("0", "1") else PIPELINE_BY_CLASS.get(device_class, False)


#: Loads in flight per invocation that a light loop's copies aim at, per device class, exact
#: precision (0: the factor alone decides). With it, a loop of one load per iteration gets budget
#: copies where the factor would give fewer (up to MAX_INFLIGHT_FACTOR), a loop of two budget / 2,
#: never fewer than the factor. nvidia 64 (H100, ops.py --warm-up 8, 11 fold ops): layer_norm
#: 0.154 -> 0.142 ms, rms_norm_linear 0.377 -> 0.332, the rest within 1%; 128 lost (attention
#: 0.53 -> 0.80, layer_norm 0.188, linear_relu 0.297). Only fold chains (spread's, keychain's) get
#: it: elsewhere it would also widen the hash, decode and parsing loops, which that run did not time
#: (rms_norm_linear's loop is not such a chain, so its 0.332 is not kept).
INFLIGHT_BY_CLASS: dict[str, int] = {"nvidia": 64}
MAX_INFLIGHT_FACTOR = 128


def loads_in_flight(device_class: str, precision: str = "exact") -> int:
    """The class's load budget in `precision` (0: none); ``$VYRE_VK_INFLIGHT`` overrides it (a tuning
    knob for measurements, like ``$VYRE_VK_UNROLL``).

    >>> loads_in_flight("no such class") == int(os.environ.get("VYRE_VK_INFLIGHT") or 0)
    True
    """
    env = os.environ.get("VYRE_VK_INFLIGHT")
    if env is None or env == "":
        return INFLIGHT_BY_CLASS.get(device_class, 0) if precision == "exact" else 0
    if not env.isdigit():
        raise OptimizerError(f"VYRE_VK_INFLIGHT={env!r} is not a whole number of loads. "
                             "Fix: set it to e.g. 64, 0 for none, or unset it to use the device class's budget.")
    return int(env)


def rolling(precision: str) -> bool:
    """Whether heavy loops get :func:`rolling_prefetch`: by default in the fast precision (its split
    Welford pieces, reduce_variance's), not yet in exact mode; ``$VYRE_VK_ROLL=1`` / ``0`` turns it
    on / off in both (a tuning knob for measurements, like ``$VYRE_VK_UNROLL``).

    >>> rolling("exact") == (os.environ.get("VYRE_VK_ROLL") == "1")
    True
    """
    env = os.environ.get("VYRE_VK_ROLL")
    return env == "1" if env in ("0", "1") else precision == "fast"


_HEAVY = TRANSCENDENTAL_UNOPS | {UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Reciprocal}


def loop_factor(loop: N.Loop, factor: int) -> int:
    """Copies for this loop: `factor` for a body within MAX_BODY_SIZE expression nodes; for a larger
    body fewer (the copies within MAX_BODY_SIZE * min(factor, UNROLL) nodes; 0 when fewer than 2 fit), unless
    it holds an exponential-class op, a division or a square root -- each lowers to a routine of
    ~100 instructions, and copies of those spill: H200 flash_attention's key loop (two exps)
    unrolled x9 ran 5.8x slower (1.54 -> 8.96 ms)."""
    size = size_of(loop.body)
    if size <= MAX_BODY_SIZE:
        return factor
    if _heavy(loop):
        return 0
    # the code-size budget stays UNROLL bodies' worth whatever the class factor: nvidia's 32 gave
    # top_k's large body x8 instead of x4 (H100 1.88 -> 2.01 ms)
    f = (MAX_BODY_SIZE * min(factor, UNROLL)) // size
    return f if f >= 2 else 0


def _heavy(loop: N.Loop) -> bool:
    """Whether the body holds an exponential-class op, a division or a square root."""
    return holds_costly(loop.body, _HEAVY)


def _loop_locals(loop: N.Loop, min_trips: int, stores: bool = False) -> Optional[set]:
    """The names `loop`'s body defines or assigns, when its loads may be issued early: literal bounds,
    at least `min_trips` iterations, a body of lets, assignments, ifs and blocks that writes no
    memory (no store, atomic, barrier, nested loop) and never assigns the loop variable; else None.
    With `stores`, stores are allowed to buffers the loop never loads (a key chain's tables:
    distribute.py): the loads then still read what they read before wherever they are issued."""
    if not (isinstance(loop.from_, E.LitU32) and isinstance(loop.to, E.LitU32)):
        return None
    if loop.to.value - loop.from_.value < min_trips:
        return None
    loaded = {x.buffer for x in node_all_exprs(loop.body) if isinstance(x, E.Load)} if stores else set()
    for n in walk_nodes(loop.body):
        if isinstance(n, N.Store) and stores and n.buffer not in loaded:
            continue
        if isinstance(n, (N.Loop, N.Store, N.Barrier, N.Return, N.Trap)) or not isinstance(
                n, (N.Let, N.Assign, N.If, N.Block, N.Region)):
            return None
    if any(isinstance(x, E.Atomic) for x in node_all_exprs(loop.body)):
        return None
    local = defined_vars(loop.body) | assigned_vars(loop.body)
    return None if loop.var in local else local


def _candidate(loop: N.Loop, facts: Facts, factor: int, inline_index: bool = True,
               stores: bool = False, shared: bool = False) -> Optional[list]:
    """The loads to prefetch (distinct, first-seen order), or None. Workgroup loads only with
    `shared` (a stream tile's loop: nothing writes what it reads while it runs, stream.py)."""
    local = _loop_locals(loop, 2 * factor, stores) if factor else None
    if local is None:
        return None
    index_lets = _index_lets(loop, local, facts) if inline_index else {}
    loads: list = []
    for x in node_all_exprs(loop.body):
        if not isinstance(x, E.Load) or x in [ld for ld, _ in loads] or (
                x.buffer in facts.workgroup_bufs and not shared):
            continue
        at = _inline(x.index, index_lets)
        if not facts.may_trap(x) and not any(isinstance(v, E.Var) and v.name in local for v in walk_expr(at)):
            loads.append((x, at))
    return loads or None


def _index_lets(loop: N.Loop, local: set, facts: Facts) -> dict:
    """The loop body's leading lets that compute an index from the loop variable and values the
    body never changes (``let idx = chunk * T + local``): name -> value, for inlining into a
    prefetched load's index. Pure arithmetic only (no load, nothing that may trap)."""
    out: dict = {}
    changed = assigned_vars(loop.body)
    for n in loop.body:
        if not isinstance(n, N.Let) or n.name in changed:
            break
        v = _inline(n.value, out)
        if not _pure_index(v, facts) or any(isinstance(x, E.Var) and x.name in local for x in walk_expr(v)):
            break
        out[n.name] = v
    return out


def _at(index: E.Expr, var: str, value: E.Expr) -> E.Expr:
    """`index` with the loop variable `var` replaced by `value` (one iteration's load index)."""
    return map_expr(index, lambda x: value if x == E.Var(var) else None)


def _block_loads(loop: N.Loop, loads: list, factor: int, start: E.Expr, names: list) -> list:
    """``let names[k][j] = load j of iteration start + k`` for the `factor` iterations of a block."""
    return [N.Let(name, E.Load(ld.buffer, _at(at_index, loop.var, iteration(start, k))))
            for k in range(factor) for (ld, at_index), name in zip(loads, names[k])]


def _block_bodies(loop: N.Loop, loads: list, base: E.Expr, names: list) -> list:
    """The block's iterations, each a scope binding the loop variable, its loads read from `names`."""
    return [N.Block((N.Let(loop.var, iteration(base, k)),)
                    + _replace_loads(loop.body, {ld: E.Var(name) for (ld, _), name in zip(loads, row)}))
            for k, row in enumerate(names)]


def _inline(e: E.Expr, lets: dict) -> E.Expr:
    return map_expr(e, lambda x: lets.get(x.name) if isinstance(x, E.Var) else None) if lets else e


def _pipelined(loop: N.Loop, loads: list, factor: int, fresh) -> list:
    """The blocked loop with block b+1's loads issued before block b's arithmetic (software
    pipelining: a block waits for no load, where the plain blocked loop waits one round trip per
    block), block 0's loads before the loop. The last block's look-ahead reads past the blocks
    (the rest, or out of bounds): harmless, never used."""
    cur = [[fresh("pf") for _ in loads] for _ in range(factor)]
    nxt = [[fresh("nx") for _ in loads] for _ in range(factor)]
    prologue = _block_loads(loop, loads, factor, loop.from_, cur)

    def block(base: E.Expr) -> list:
        body = _block_loads(loop, loads, factor, E.BinOpExpr(BinOp.Add, base, E.LitU32(factor)), nxt)
        body += _block_bodies(loop, loads, base, cur)
        return body + [N.Assign(c, E.Var(n)) for cs, ns in zip(cur, nxt) for c, n in zip(cs, ns)]

    return prologue + blocked_loop(loop, factor, fresh, block)


def unroll_loads(p: Program, factor: int = UNROLL, roll: bool = False, pipeline: bool = False,
                 inflight: int = 0) -> tuple[Program, str]:
    """Unroll every innermost literal-bounds loop that reads memory and writes none; with `roll`, a
    loop whose body is too large or heavy to copy gets a ring of prefetched loads instead
    (:func:`rolling_prefetch`); with `pipeline`, each block's loads are issued a block ahead
    (:func:`_pipelined`); with `inflight`, a light loop of a fold chain (a body within MAX_BODY_SIZE,
    nothing heavy) gets up to `inflight` loads per block (:data:`INFLIGHT_BY_CLASS`)."""
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise OptimizerError(f"unroll factor {factor!r} is not a positive whole number of loop copies. "
                             "Fix: pass e.g. 8 or 16.")
    facts = Facts(p)
    unroll = factor
    fresh = NameSource(all_names(p), "ur_")
    # Index lets are inlined only in spread's fold chains (few invocations, each a 4096-step latency-bound
    # chain: H200 rms_norm 1.09 -> 0.45 ms). Elsewhere it would newly unroll programs (cross_entropy,
    # gqa_attention, the int4 matvecs) whose speed with it was not measured: they keep their schedule.
    # keychain's chain kernels (distribute.py) are such chains too, and store their tables in the loop
    chains = any(isinstance(r, Region) and r.generator == KEYCHAIN_GENERATOR for r in walk_nodes(p.entry))
    inline_index = chains or any(isinstance(r, Region) and r.generator == SPREAD_GENERATOR for r in p.entry)
    done: list = []

    def rewrite(loop: N.Loop, shared: bool = False) -> Optional[tuple]:
        factor = loop_factor(loop, unroll)
        loads = _candidate(loop, facts, factor, inline_index, chains, shared)
        if loads is None and not factor and roll:
            r = rolling_prefetch(loop, facts, unroll, fresh)
            if r is not None:
                done.append(f"{loop.var} ({loop.to.value - loop.from_.value} iterations, a large or heavy body: "
                            f"{r[1]} load(s) kept in flight by a ring, no copies)")
                return tuple(r[0])
        if loads is None:
            return None
        if inflight and inline_index and factor == unroll and not _heavy(loop):
            more = min(MAX_INFLIGHT_FACTOR, inflight // len(loads))
            wider = _candidate(loop, facts, more, inline_index, chains) if more > factor else None
            if wider is not None:
                factor, loads = more, wider
        lo, hi = loop.from_.value, loop.to.value

        def block(base: E.Expr) -> list:
            names = [[fresh("pf") for _ in loads] for _ in range(factor)]
            return _block_loads(loop, loads, factor, base, names) + _block_bodies(loop, loads, base, names)

        fewer = "" if factor == unroll else (f", x{factor}: a large body" if factor < unroll
                                             else f", x{factor}: {len(loads)} load(s) per iteration")
        if pipeline and (hi - lo) // factor >= 2:
            out = _pipelined(loop, loads, factor, fresh)
            fewer += ", the next block's loads issued before each block"
        else:
            out = blocked_loop(loop, factor, fresh, block)
        done.append(f"{loop.var} ({hi - lo} iterations, {len(loads)} load(s) each{fewer})")
        return tuple(out)

    def tile(r: Region) -> Optional[tuple]:
        inner = rewrite(r.body[0], shared=True) if len(r.body) == 1 and isinstance(r.body[0], N.Loop) else None
        return None if inner is None else (dataclasses.replace(r, body=inner),)

    entry = rewrite_nodes(p.entry, stmt=lambda n: rewrite(n) if isinstance(n, N.Loop) else tile(n) if (
        isinstance(n, Region) and n.generator == TILE_GENERATOR) else None)
    if not done:
        return p, ""
    return replace_entry(p, entry), (f"unrolled x{unroll} or prefetched, loads issued before the arithmetic "
                                     f"(same order of operations): loop {', '.join(done)}")


def _pure_index(v: E.Expr, facts: Facts) -> bool:
    return not facts.may_trap(v) and all(not isinstance(x, (E.Load, E.BufLen, E.Atomic, E.Call)) for x in walk_expr(v))


def _scoped(nodes, env: dict, changed: set, facts: Facts, fix) -> tuple:
    """`nodes` (lets, assignments, ifs, blocks) rebuilt with ``fix(expr, env)`` on every expression,
    `env` holding the pure lets in scope (never assigned) by name, substituted."""
    env = dict(env)
    out: list = []
    for n in nodes:
        if isinstance(n, N.If):
            out.append(dataclasses.replace(n, cond=fix(n.cond, env), then=_scoped(n.then, env, changed, facts, fix),
                                           otherwise=_scoped(n.otherwise, env, changed, facts, fix)))
        elif isinstance(n, (N.Block, N.Region)):
            out.append(dataclasses.replace(n, body=_scoped(n.body, env, changed, facts, fix)))
        else:  # Let, Assign
            out.append(dataclasses.replace(n, value=fix(n.value, env)))
            v = _inline(n.value, env)
            if isinstance(n, N.Let) and n.name not in changed and _pure_index(v, facts):
                env[n.name] = v
    return tuple(out)


def rolling_prefetch(loop: N.Loop, facts: Facts, depth: int, fresh) -> Optional[tuple[list, int]]:
    """``loop`` with each load issued `depth` iterations ahead through a ring of lets (no body
    copies: for bodies too large or too heavy to unroll), or None. A load is keyed by its buffer and
    its index with the lets before it substituted (reassociate's copies bind the same names in
    sibling blocks), and qualifies when that index reads only the loop variable and values the loop
    never changes. Loads only move earlier and the body writes no buffer, so values are unchanged;
    the ring's loads past the end read beyond the loop's range or out of bounds, harmlessly (a load
    cannot trap), and are never used."""
    local = _loop_locals(loop, 4 * depth)
    if local is None:
        return None
    lo, changed = loop.from_.value, assigned_vars(loop.body)
    found: dict = {}  # (buffer, index) -> None, in first-seen order

    def find(e: E.Expr, env: dict) -> E.Expr:
        for x in walk_expr(e):
            if isinstance(x, E.Load) and x.buffer not in facts.workgroup_bufs and not facts.may_trap(x):
                at = _inline(x.index, env)
                if not any(isinstance(v, E.Var) and v.name in local for v in walk_expr(at)):
                    found.setdefault((x.buffer, at), None)
        return e

    _scoped(loop.body, {}, changed, facts, find)
    if not found:
        return None
    ahead = max(1, depth // len(found))
    pre: list = []
    head: list = []
    cur: dict = {}
    for buf, at in found:
        ring = [fresh("rp") for _ in range(ahead)]
        pre += [N.Let(r, E.Load(buf, _at(at, loop.var, E.LitU32(lo + d)))) for d, r in enumerate(ring)]
        c = fresh("rc")
        head += [N.Let(c, E.Var(ring[0]))] + [N.Assign(ring[d], E.Var(ring[d + 1])) for d in range(ahead - 1)]
        head.append(N.Assign(ring[-1], E.Load(buf, _at(at, loop.var, iteration(E.Var(loop.var), ahead)))))
        cur[(buf, at)] = E.Var(c)

    def use(e: E.Expr, env: dict) -> E.Expr:
        return map_expr(e, lambda x: cur.get((x.buffer, _inline(x.index, env))) if isinstance(x, E.Load) else None)

    body = tuple(head) + _scoped(loop.body, {}, changed, facts, use)
    return pre + [N.Loop(loop.var, loop.from_, loop.to, body)], len(found) * ahead


def _replace_loads(nodes, row: dict) -> tuple:
    return rewrite_nodes(nodes, expr=lambda e: map_expr(e, lambda x: row.get(x) if isinstance(x, E.Load) else None))


class Unroll(PassBase):
    """Load-prefetching unroll (module docstring), by the device class's factor."""
    name = "unroll"
    kind = "schedule"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        unroll_factor(ctx.device_class)  # a bad $VYRE_VK_UNROLL is reported whenever the pass is asked for
        return any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        q, why = unroll_loads(program, unroll_factor(ctx.device_class, ctx.precision), rolling(ctx.precision),
                              pipelined(ctx.device_class), loads_in_flight(ctx.device_class, ctx.precision))
        return Rewrite((q,), detail=why)


UNROLL_LOADS = Unroll()
