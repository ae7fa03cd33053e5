"""Two-stage grid reductions: the fast precision's split of spread fold chains (docs/PRECISION.md).

``spread`` (spread.py) leaves a one-workgroup reduction's fold as T chains (T = the program's
lanes, 256 for vyre's norms and softmax), lane ``local`` folding ``idx = chunk * T + local`` for
``chunk`` in 0..C in order: C dependent steps (4096 for rms_norm over 2^20 values) on T/32 SMs.
In the fast precision a chain may be regrouped, so this pass cuts each chain into P pieces of
L = ceil(C/P) consecutive chunks, run by T*P invocations, and folds the P partial results of
each lane in a second stage::

    stage A (T*P invocations)                     stage B (T invocations)
    local = g % T; part = g / T                   local = g
    accs = inits                                  accs = partials[local]              (part 0)
    for c in 0..L { chunk = part*L + c; BODY }    for p in 1..P { accs = accs (+) partials[p*T + local] }
    partials[g] = accs                            POST (scratch[local] = accs)

Accumulators qualify when each is updated once per step as ``acc = acc (+) t`` with (+) an f32 or
integer Add, or Max/Min (vyre's Max/Min ignore NaN: order-free but for the sign of a zero), ``t``
reads no accumulator and the init is the operation's identity (0 for Add; any literal for
Max/Min, which are idempotent). Welford's mean and M2 (reduce_variance) are recognised as one
idiom and merged by Chan et al.'s pairwise formula (welford.py). Every term is folded once: f32
sums stay within the recursive-summation bound of docs/PRECISION.md, integer sums are exact.

>>> from vyre_vk.ops import get
>>> from vyre_vk.opt import optimize
>>> g, _ = optimize(get("vyre-libs::nn::rms_norm").build_with(n=1 << 16), ["split_phases", "spread", "split_chains"],
...                 precision="fast")
>>> [st.workgroup_size[0] for st in g.stages]
[256, 32, 256, 256, 256]
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import node_all_exprs, walk_expr
from .analysis import Facts, NameSource, all_names
from .protocol import PassBase, PassContext, Rewrite
from .spread import CHAIN_LANES, MAP_LOCAL_SIZE, SPREAD_GENERATOR
from .welford import Welford, match_welford

#: Invocations stage A may use (T*P): enough warps to fill an H200 several times over.
MAX_LANES = 1 << 16
#: Chains shorter than this stay whole (the second stage and its dispatch would cost more).
MIN_CHAIN = 64
_ORDER_FREE = (BinOp.Add, BinOp.Max, BinOp.Min)


@dataclasses.dataclass(frozen=True)
class Chain:
    """A spread fold stage: lanes `tile`, chunks `chunks`, the loop's parts and the post stores."""
    local: str
    tile: int
    pre: tuple
    loop: N.Loop
    post: tuple


def match_chain(p: Program) -> Optional[Chain]:
    """The fold stage spread.py writes, or None (any other shape)."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or p.entry[0].generator != SPREAD_GENERATOR:
        return None
    body = p.entry[0].body
    if len(body) != 2 or not isinstance(body[0], N.Let) or body[0].value != E.InvocationId(0):
        return None
    local, guard = body[0].name, body[1]
    if not (isinstance(guard, N.If) and not guard.otherwise and isinstance(guard.cond, E.BinOpExpr)
            and guard.cond.op is BinOp.Lt and guard.cond.left == E.Var(local) and isinstance(guard.cond.right, E.LitU32)):
        return None
    loops = [k for k, s in enumerate(guard.then) if isinstance(s, N.Loop)]
    if len(loops) != 1:
        return None
    k = loops[0]
    loop = guard.then[k]
    if not (isinstance(loop.from_, E.LitU32) and loop.from_.value == 0 and isinstance(loop.to, E.LitU32)):
        return None
    return Chain(local, guard.cond.right.value, tuple(guard.then[:k]), loop, tuple(guard.then[k + 1:]))


def order_free(ch: Chain, facts: Facts) -> Optional[dict]:
    """{accumulator: its combine} when every accumulator's steps may be regrouped (module
    docstring); a combine maps (accumulator, partial) expressions to the merged value."""
    inits = {s.name: s.value for s in ch.pre if isinstance(s, N.Let)}
    if len(inits) != len(ch.pre):
        return None
    step = ch.loop.body[1].then if len(ch.loop.body) == 2 and isinstance(ch.loop.body[1], N.If) else ()
    if not step or ch.loop.body[1].otherwise or not all(isinstance(s, (N.Let, N.Assign)) for s in step):
        return None
    ops: dict = {}
    for s in step:
        reads = _vars(s.value) & set(inits)
        if isinstance(s, N.Let):
            if reads:
                return None
            continue
        if s.name not in inits or s.name in ops or reads - {s.name}:
            return None
        combine = _combine(s.value, E.Var(s.name), inits[s.name])
        if combine is None or facts.type_of(E.Var(s.name)) not in (DataType.F32, DataType.U32, DataType.I32):
            return None
        ops[s.name] = combine
    if set(ops) != set(inits):
        return None
    return ops


def _combine(v: E.Expr, acc: E.Var, init: E.Expr):
    """``acc (+) t`` (Add with a zero init; Max or Min) or ``select(t > acc, t, acc)`` and its
    mirror images (softmax's max: NaN terms ignored, like Max) with a literal init, as a combine."""
    literal = isinstance(init, (E.LitF32, E.LitU32, E.LitI32))
    if isinstance(v, E.BinOpExpr) and v.op in _ORDER_FREE and v.left == acc and acc.name not in _vars(v.right):
        zero = init in (E.Expr.f32(0.0), E.LitU32(0), E.LitI32(0))
        return (lambda a, b, op=v.op: E.BinOpExpr(op, a, b)) if (zero if v.op is BinOp.Add else literal) else None
    if not (literal and isinstance(v, E.Select) and isinstance(v.cond, E.BinOpExpr) and v.false_val == acc):
        return None
    c, t = v.cond, v.true_val
    if acc.name in _vars(t) or c.op not in (BinOp.Gt, BinOp.Lt) or {c.left, c.right} != {t, acc}:
        return None
    t_left = c.left == t  # select(t > acc, t, acc) keeps the larger; (acc > t) the smaller
    return lambda a, b, op=c.op: E.Select(E.BinOpExpr(op, b, a) if t_left else E.BinOpExpr(op, a, b), b, a)


def _vars(e: E.Expr) -> set[str]:
    return {x.name for x in walk_expr(e) if isinstance(x, E.Var)}


def pieces(chunks: int, tile: int) -> int:
    """P: the power of two nearest sqrt(chunks) (both stages' chains ~equal), within MAX_LANES.

    >>> pieces(4096, 256), pieces(65536, 256), pieces(63, 256)
    (64, 256, 1)
    """
    if chunks < MIN_CHAIN:
        return 1
    p = 1 << round(math.log2(math.sqrt(chunks)))
    return max(1, min(p, MAX_LANES // tile))


def split_chain(p: Program, ch: Chain) -> Optional[tuple[tuple[Program, Program], tuple, str]]:
    facts = Facts(p)
    ops = order_free(ch, facts)
    welford = None if ops is not None else match_welford(ch, facts)
    if ops is None and welford is None:
        return None
    accs = [s.name for s in ch.pre]
    if not all(isinstance(s, N.Store) and isinstance(s.value, E.Var) for s in ch.post):
        return None
    if not _guarded(ch):
        return None
    n_pieces = pieces(ch.loop.to.value, ch.tile)
    if n_pieces < 2:
        return None
    steps = -(-ch.loop.to.value // n_pieces)
    lanes = ch.tile * n_pieces
    fresh = NameSource(all_names(p), "opt_part_")
    part, chunk, gid = fresh("p"), fresh("c"), fresh("g")
    bufs = {a: fresh(a + "_") for a in accs}
    types = {a: facts.type_of(E.Var(a)) for a in accs}
    scratch = tuple(BufferDecl(bufs[a], 0, BufferAccess.ReadWrite, types[a], lanes) for a in accs)
    tile = E.LitU32(ch.tile)
    # stage A: piece `part` of lane `local`'s chain; the loop variable is the original chunk
    loop = N.Loop(chunk, E.LitU32(0), E.LitU32(steps), (
        N.Let(ch.loop.var, E.BinOpExpr(BinOp.Add, E.BinOpExpr(BinOp.Mul, E.Var(part), E.LitU32(steps)), E.Var(chunk))),
        *ch.loop.body))
    a_body = (N.Let(gid, E.InvocationId(0)), N.If(E.BinOpExpr(BinOp.Lt, E.Var(gid), E.LitU32(lanes)), (
        N.Let(ch.local, E.BinOpExpr(BinOp.Mod, E.Var(gid), tile)),
        N.Let(part, E.BinOpExpr(BinOp.Div, E.Var(gid), tile)),
        *ch.pre, loop, *(N.Store(bufs[a], E.Var(gid), E.Var(a)) for a in accs)), ()))
    stored = {s.buffer for s in ch.post}
    used = {x.buffer for x in node_all_exprs(a_body) if isinstance(x, (E.Load, E.BufLen))}
    a_bufs = [b for b in p.buffers if b.name in used and b.name not in stored]
    a_bufs = [dataclasses.replace(b, binding=k) for k, b in enumerate(a_bufs)]
    a_bufs += [dataclasses.replace(s, binding=len(a_bufs) + k, pipeline_live_out=True) for k, s in enumerate(scratch)]
    stage_a = _stage(p, a_body, MAP_LOCAL_SIZE, a_bufs)
    # stage B: lane `local` folds its P partial results in piece order, then the original stores
    q = fresh("q")
    at = E.BinOpExpr(BinOp.Add, E.BinOpExpr(BinOp.Mul, E.Var(q), tile), E.Var(ch.local))
    if welford is None:
        merge = tuple(N.Assign(a, ops[a](E.Var(a), E.Load(bufs[a], at))) for a in accs)
    else:
        merge = welford.merge({a: E.Load(bufs[a], at) for a in accs}, fresh)
    b_body = (N.Let(ch.local, E.InvocationId(0)), N.If(E.BinOpExpr(BinOp.Lt, E.Var(ch.local), tile), (
        *(N.Let(a, E.Load(bufs[a], E.Var(ch.local))) for a in accs),
        N.Loop(q, E.LitU32(1), E.LitU32(n_pieces), merge), *ch.post), ()))
    b_bufs = [dataclasses.replace(s, binding=k, access=BufferAccess.ReadOnly) for k, s in enumerate(scratch)]
    b_bufs += [dataclasses.replace(b, binding=len(b_bufs) + k)
               for k, b in enumerate(b for b in p.buffers if b.name in stored)]
    stage_b = _stage(p, b_body, CHAIN_LANES, b_bufs)
    how = "Welford states merged pairwise (Chan et al.)" if welford else "partials folded in piece order"
    why = (f"fast precision: {ch.tile} chains of {ch.loop.to.value} steps cut into {n_pieces} pieces of {steps} "
           f"({lanes} invocations), then {how} by {ch.tile} lanes")
    return (stage_a, stage_b), scratch, why


def _guarded(ch: Chain) -> bool:
    """The step runs only for ``idx = chunk * T + local < c`` with c <= C * T, so the last piece's
    chunks past C (P * L may exceed C) add nothing."""
    let, cond = (ch.loop.body + (None, None))[:2]
    return (isinstance(let, N.Let) and isinstance(cond, N.If) and not cond.otherwise
            and let.value == E.BinOpExpr(BinOp.Add, E.BinOpExpr(BinOp.Mul, E.Var(ch.loop.var), E.LitU32(ch.tile)),
                                         E.Var(ch.local))
            and isinstance(cond.cond, E.BinOpExpr) and cond.cond.op is BinOp.Lt and cond.cond.left == E.Var(let.name)
            and isinstance(cond.cond.right, E.LitU32) and cond.cond.right.value <= ch.loop.to.value * ch.tile)


def _stage(p: Program, body, size: int, bufs) -> Program:
    return Program(tuple(bufs), (size, 1, 1), (Region(SPREAD_GENERATOR, None, tuple(body)),), p.entry_op_id)


class SplitChains(PassBase):
    """Two-stage grid reductions of spread fold chains (module docstring); the fast precision only."""
    name = "split_chains"
    kind = "split"
    precision = "fast"  # results within docs/PRECISION.md's bound, not the reference's bits

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return ctx.precision == "fast" and match_chain(program) is not None

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        if ctx.precision != "fast":  # the exact precision's bits: nothing to do
            return None
        ch = match_chain(program)
        r = None if ch is None else split_chain(program, ch)
        return None if r is None else Rewrite(r[0], r[1], detail=r[2])

    def explain(self, rewrite: Rewrite) -> str:
        return rewrite.detail


SPLIT_CHAINS = SplitChains()
