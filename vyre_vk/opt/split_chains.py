"""Two-stage grid reductions: the fast precision's split of long per-invocation folds (docs/PRECISION.md).

Many of vyre's programs give each output one invocation that folds a long loop in order: GEMV rows
(linear_relu: ``acc = b[i]; for k in 0..4096 { acc = acc + x[k] * w[k*N + i] }``), the seed op's row
sums, and the T lane chains ``spread`` (spread.py) leaves of a one-workgroup reduction (256 chains
of 4096 steps for rms_norm over 2^20 values). In the fast precision a fold may be regrouped, so this
pass cuts each invocation's loop into P pieces, run by N*P invocations, and folds each output's P
partial results in a second stage::

    stage A (N*P invocations)                      stage B (the original invocations)
    i, piece = from g                              i = gid
    accs = identities                              accs = inits
    for k in piece's iterations { BODY }           for q in 0..P { accs = accs (+) partials[i, q] }
    partials[g] = accs                             POST (out[i] = f(accs), ...)

A piece is a run of consecutive iterations, with ``i`` the fastest-varying index of ``g`` (loads
like ``w[k*N + i]`` stay coalesced); where the loop walks a row (``w[i*K + k]``: consecutive ``k``
adjacent, consecutive ``i`` far apart) the pieces interleave instead (piece ``q`` takes ``k = q + P*c``)
and ``q`` varies fastest, so a warp reads one row's consecutive elements.

Accumulators qualify when each is updated once per iteration as ``acc = acc (+) t``, with (+) an f32
or integer Add, or Max/Min, or ``select(t > acc, t, acc)`` and its mirror images (softmax's max;
vyre's Max/Min and these selects ignore NaN terms: order-free but for the sign of a zero), ``t`` and
every condition reading no accumulator. Welford's mean and M2 (reduce_variance) are recognised as
one idiom and merged by Chan et al.'s pairwise formula (welford.py). Every term is folded once: f32
sums stay within the recursive-summation bound of docs/PRECISION.md, integer sums are exact.

>>> from vyre_vk.ops import get
>>> from vyre_vk.opt import optimize
>>> g, _ = optimize(get("vyre-libs::nn::rms_norm").build_with(n=1 << 16), ["split_phases", "spread", "split_chains"],
...                 precision="fast")
>>> [st.workgroup_size[0] for st in g.stages]
[256, 32, 256, 256]
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import map_expr, node_all_exprs, rewrite_nodes, walk_expr, walk_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, next_binding, read_only, stored_buffers, zero_literal
from .protocol import PassBase, PassContext, Rewrite
from .fission import FISSION_GENERATOR
from .phases import _used_bufs
from .welford import match_welford

SPLIT_GENERATOR = "vyre_vk.opt.split_chains"
#: Invocations stage A aims for (N*P): enough warps to fill an H200 several times over.
TARGET_LANES = 1 << 16
#: Iterations per piece at least (shorter pieces cost more in the second stage than they save).
MIN_PIECE = 32
#: Welford partials merged per invocation and level when there are more pieces than this.
WELFORD_GROUP = 16
_ORDER_FREE = (BinOp.Add, BinOp.Max, BinOp.Min)
_BUILTINS = (E.InvocationId, E.LocalId, E.WorkgroupId)
_REFUSED_EXPRS = (E.Atomic, E.Call, E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce, E.SubgroupLocalId,
                  E.SubgroupSize, E.BufLen)
Combine = Callable[[E.Expr, E.Expr], E.Expr]


@dataclasses.dataclass(frozen=True)
class Fold:
    """One accumulator's update: `add` (pieces start from zero, stage B from the init) or an
    idempotent Max/Min/select (every piece may start from the init); `combine(acc, partial)`."""
    add: bool
    combine: Combine


@dataclasses.dataclass(frozen=True)
class Chain:
    """A stage ``let i = gid; HEAD; if i < n { PRE; for k { BODY }; POST }`` (HEAD, PRE: lets)."""
    ivar: str
    n: int
    head: tuple
    pre: tuple
    loop: N.Loop
    post: tuple


def match_chain(p: Program) -> Optional[Chain]:
    """The stage as a :class:`Chain`, or None (any other shape)."""
    stmts = tuple(p.entry)
    while len(stmts) == 1 and isinstance(stmts[0], Region):
        stmts = tuple(stmts[0].body)
    if tuple(p.workgroup_size[1:]) != (1, 1) or any(b.is_workgroup for b in p.buffers) or len(stmts) < 2:
        return None
    *head, guard = stmts
    if not all(isinstance(s, N.Let) for s in head) or sum(s.value == E.InvocationId(0) for s in head) != 1:
        return None
    ivar = next(s.name for s in head if s.value == E.InvocationId(0))
    head = [s for s in head if s.name != ivar]
    c = guard.cond if isinstance(guard, N.If) and not guard.otherwise else None
    if not (isinstance(c, E.BinOpExpr) and c.op is BinOp.Lt and c.left == E.Var(ivar) and isinstance(c.right, E.LitU32)):
        return None
    body = (*head, *guard.then)
    if any(isinstance(n, (N.Barrier, N.Return, N.Trap) + N.UNSUPPORTED_NODES) for n in walk_nodes(body)):
        return None
    if any(isinstance(x, _BUILTINS + _REFUSED_EXPRS) for x in node_all_exprs(body)):
        return None  # stage A maps invocations to outputs its own way: only `i` may name one
    loops = [k for k, s in enumerate(guard.then) if isinstance(s, N.Loop)]
    if not loops or not all(isinstance(s, N.Let) for s in guard.then[:loops[0]]):
        return None
    loop = guard.then[loops[0]]
    if not (isinstance(loop.from_, E.LitU32) and isinstance(loop.to, E.LitU32)):
        return None
    return Chain(ivar, c.right.value, tuple(head), tuple(guard.then[:loops[0]]), loop, tuple(guard.then[loops[0] + 1:]))


def order_free(ch: Chain, facts: Facts) -> Optional[dict]:
    """{accumulator: its :class:`Fold`} when the loop's folds may be regrouped (module docstring)."""
    inits = {s.name: s.value for s in ch.pre}
    accs = assigned_vars(ch.loop.body)
    if not accs or not accs <= set(inits) or ch.loop.var in accs:
        return None
    ops: dict = {}
    for n in walk_nodes(ch.loop.body):
        if isinstance(n, N.Assign):
            if n.name in ops or _vars(n.value) & accs - {n.name}:
                return None
            combine = _combine(n.value, E.Var(n.name))
            if combine is None or facts.type_of(E.Var(n.name)) not in (DataType.F32, DataType.U32, DataType.I32):
                return None
            ops[n.name] = combine
        elif isinstance(n, (N.Let, N.If)):
            if _vars(n.value if isinstance(n, N.Let) else n.cond) & accs:
                return None
        elif not isinstance(n, N.Block):
            return None  # a store, a nested loop, ...
    return ops


def _combine(v: E.Expr, acc: E.Var) -> Optional[Fold]:
    """``acc (+) t`` (Add, Max, Min) or ``select(t > acc, t, acc)`` and its mirror images (softmax's
    max: NaN terms ignored, like Max) as a combine, or None."""
    if isinstance(v, E.BinOpExpr) and v.op in _ORDER_FREE and v.left == acc and acc.name not in _vars(v.right):
        return Fold(v.op is BinOp.Add, lambda a, b, op=v.op: E.BinOpExpr(op, a, b))
    if not (isinstance(v, E.Select) and isinstance(v.cond, E.BinOpExpr) and v.false_val == acc):
        return None
    c, t = v.cond, v.true_val
    if acc.name in _vars(t) or c.op not in (BinOp.Gt, BinOp.Lt) or {c.left, c.right} != {t, acc}:
        return None
    t_left = c.left == t  # select(t > acc, t, acc) keeps the larger; (acc > t) the smaller
    return Fold(False, lambda a, b, op=c.op: E.Select(E.BinOpExpr(op, b, a) if t_left else E.BinOpExpr(op, a, b), b, a))


def _vars(e: E.Expr) -> set[str]:
    return {x.name for x in walk_expr(e) if isinstance(x, E.Var)}


def pieces(trips: int, outputs: int) -> int:
    """P, a power of two: pieces of >= MIN_PIECE iterations, N*P near TARGET_LANES, and P <= max(16,
    sqrt(trips)) so stage B's fold of P partials stays short.

    >>> pieces(4096, 256), pieces(65536, 256), pieces(4096, 4096), pieces(8192, 2048), pieces(63, 256)
    (64, 256, 16, 32, 1)
    """
    cap = min(trips // MIN_PIECE, TARGET_LANES // max(outputs, 1), max(16, math.isqrt(trips)))
    return 1 << (cap.bit_length() - 1) if cap >= 1 else 1


def row_walk(ch: Chain) -> bool:
    """A load whose index steps by 1 with the loop variable and by more than 1 with ``i``."""
    env = {s.name: s.value for s in (*ch.head, *ch.pre) + tuple(n for n in walk_nodes(ch.loop.body) if isinstance(n, N.Let))}
    for x in node_all_exprs(ch.loop.body):
        if isinstance(x, E.Load):
            at = [_affine(x.index, env, {ch.ivar: i, ch.loop.var: k}) for i, k in ((1, 1), (1, 2), (2, 1))]
            if None not in at and at[1] - at[0] == 1 and at[2] - at[0] > 1:
                return True
    return False


def _affine(e: E.Expr, env: dict, vals: dict, depth: int = 0) -> Optional[int]:
    """`e` evaluated over integers with `vals` (None where it reads anything else)."""
    if depth > 32:
        return None
    if isinstance(e, E.LitU32):
        return e.value
    if isinstance(e, E.Var):
        if e.name in vals:
            return vals[e.name]
        return _affine(env[e.name], env, vals, depth + 1) if e.name in env else None
    if isinstance(e, E.BinOpExpr) and e.op in (BinOp.Add, BinOp.Sub, BinOp.Mul):
        a, b = _affine(e.left, env, vals, depth + 1), _affine(e.right, env, vals, depth + 1)
        if a is None or b is None:
            return None
        return a + b if e.op is BinOp.Add else a - b if e.op is BinOp.Sub else a * b
    return None


def split_chain(p: Program, ch: Chain) -> Optional[tuple[tuple[Program, Program], tuple, str]]:
    facts = Facts(p)
    ops = order_free(ch, facts)
    welford = match_welford(ch, facts) if ops is None else None
    if ops is None and welford is None:
        return None
    stored = stored_buffers(ch.post)
    if any(isinstance(x, E.Load) and x.buffer in stored for x in node_all_exprs((*ch.head, *ch.pre, ch.loop))):
        return None  # the loop would read what other outputs' invocations write
    if any(facts.may_trap(s.value) for s in (*ch.head, *ch.pre)):
        return None
    lo, hi = ch.loop.from_.value, ch.loop.to.value
    n_pieces = pieces(hi - lo, ch.n)
    if n_pieces < 2:
        return None
    accs = [s.name for s in ch.pre if s.name in (ops or (welford.n, welford.m1, welford.m2))]
    steps, lanes, rows = -(-(hi - lo) // n_pieces), ch.n * n_pieces, row_walk(ch)
    fresh = NameSource(all_names(p), "opt_part_")
    g, piece, c, q = fresh("g"), fresh("p"), fresh("c"), fresh("q")
    bufs = {a: fresh(a + "_") for a in accs}
    types = {a: facts.type_of(E.Var(a)) for a in accs}
    scratch = tuple(BufferDecl(bufs[a], 0, BufferAccess.ReadWrite, types[a], lanes) for a in accs)
    b, v, lit = E.BinOpExpr, E.Var, E.LitU32
    P, Nn = lit(n_pieces), lit(ch.n)
    # stage A: iteration k of piece `piece` of output i; pieces start from each fold's identity
    # (an Add's zero, a Max/Min's own init: idempotent) and stage B adds the init
    if rows:  # interleaved pieces, the piece fastest in g: a warp reads a row's consecutive elements
        i_of, p_of = b(BinOp.Div, v(g), P), b(BinOp.Mod, v(g), P)
        k = b(BinOp.Add, lit(lo), b(BinOp.Add, b(BinOp.Mul, v(c), P), v(piece)))
        at = lambda qq: b(BinOp.Add, b(BinOp.Mul, v(ch.ivar), P), qq)  # noqa: E731
    else:     # consecutive pieces, i fastest in g
        i_of, p_of = b(BinOp.Mod, v(g), Nn), b(BinOp.Div, v(g), Nn)
        k = b(BinOp.Add, lit(lo), b(BinOp.Add, b(BinOp.Mul, v(piece), lit(steps)), v(c)))
        at = lambda qq: b(BinOp.Add, b(BinOp.Mul, qq, Nn), v(ch.ivar))  # noqa: E731
    zeroed = {a for a in accs if welford or ops[a].add}
    pre_a = tuple(N.Let(s.name, zero_literal(types[s.name])) if s.name in zeroed else s for s in ch.pre)
    inner = (N.Let(ch.loop.var, k), *ch.loop.body)
    if n_pieces * steps != hi - lo:
        inner = (N.Let(ch.loop.var, k), N.If(b(BinOp.Lt, v(ch.loop.var), lit(hi)), tuple(ch.loop.body), ()))
    a_body = (N.Let(g, E.InvocationId(0)), N.If(b(BinOp.Lt, v(g), lit(lanes)), (
        N.Let(ch.ivar, i_of), N.Let(piece, p_of), *ch.head, *pre_a, N.Loop(c, lit(0), lit(steps), inner),
        *(N.Store(bufs[a], v(g), v(a)) for a in accs)), ()))
    used = {x.buffer for x in node_all_exprs(a_body) if isinstance(x, E.Load)}
    a_bufs = [read_only(x, j) for j, x in enumerate(x for x in p.buffers if x.name in used)]
    a_bufs += [dataclasses.replace(s, binding=len(a_bufs) + j, pipeline_live_out=True) for j, s in enumerate(scratch)]
    stage_a = _stage(p, a_body, 256, a_bufs)
    # stage B: the original invocations, each folding its P partials in piece order, then POST
    extra: tuple = ()
    if welford is None:
        fold = (N.Loop(q, lit(0), P, tuple(N.Assign(a, ops[a].combine(v(a), E.Load(bufs[a], at(v(q))))) for a in accs)),)
        pre_b = ch.pre
    else:
        src, at_b, count = bufs, at, n_pieces
        if n_pieces > WELFORD_GROUP:  # merge groups of WELFORD_GROUP partials first (stage B1)
            stage_b1, src, scratch2 = _welford_groups(p, ch, welford, accs, bufs, types, at, n_pieces, fresh, scratch)
            extra, scratch, count = (stage_b1,), scratch + scratch2, n_pieces // WELFORD_GROUP
            at_b = lambda qq: b(BinOp.Add, b(BinOp.Mul, qq, Nn), v(ch.ivar))  # noqa: E731
        fold = (N.Loop(q, lit(1), lit(count), welford.merge({a: E.Load(src[a], at_b(v(q))) for a in accs}, fresh)),)
        pre_b = tuple(N.Let(s.name, E.Load(src[s.name], at_b(lit(0)))) if s.name in src else s for s in ch.pre)
    b_body = (N.Let(ch.ivar, E.InvocationId(0)), *ch.head,
              N.If(b(BinOp.Lt, v(ch.ivar), Nn), (*pre_b, *fold, *ch.post), ()))
    top = next_binding(p)
    b_read = [s for s in scratch if s.name in {x.buffer for x in node_all_exprs(b_body) if isinstance(x, E.Load)}]
    b_bufs = list(p.buffers) + [dataclasses.replace(s, binding=top + j, access=BufferAccess.ReadOnly)
                                for j, s in enumerate(b_read)]
    stage_b = _stage(p, b_body, p.workgroup_size[0], b_bufs)
    how = ("Welford states merged pairwise (Chan et al.)" if welford else "partials folded in piece order")
    if welford and extra:
        how += f", first in groups of {WELFORD_GROUP} ({ch.n * n_pieces // WELFORD_GROUP} invocations)"
    why = (f"fast precision: {ch.n} folds of {hi - lo} steps cut into {n_pieces} {'interleaved ' if rows else ''}"
           f"pieces of {steps} ({lanes} invocations), then {how} per output")
    return (stage_a, *extra, stage_b), scratch, why


def _welford_groups(p: Program, ch: Chain, welford, accs, bufs, types, at, n_pieces: int, fresh, scratch):
    """Stage B1 of a Welford split with many pieces: invocation (i, grp) merges partials grp*G ..
    grp*G + G-1 of output i in piece order into one state, stored at grp*N + i. A serial merge of
    256 states (two divisions each) in 256 invocations was 0.136 ms on the H200; two levels of 16
    spread it over 4096 invocations. (stage B1, its scratch names by accumulator, its scratch)"""
    b, v, lit = E.BinOpExpr, E.Var, E.LitU32
    groups, G, Nn = n_pieces // WELFORD_GROUP, WELFORD_GROUP, lit(ch.n)
    h, grp, t = fresh("h"), fresh("grp"), fresh("t")
    names = {a: fresh(a + "_g") for a in accs}
    scratch2 = tuple(BufferDecl(names[a], 0, BufferAccess.ReadWrite, types[a], ch.n * groups) for a in accs)
    first = b(BinOp.Mul, v(grp), lit(G))
    body = (N.Let(h, E.InvocationId(0)), N.If(b(BinOp.Lt, v(h), lit(ch.n * groups)), (
        N.Let(ch.ivar, b(BinOp.Mod, v(h), Nn)), N.Let(grp, b(BinOp.Div, v(h), Nn)),
        *(N.Let(a, E.Load(bufs[a], at(first))) for a in accs),
        N.Loop(t, lit(1), lit(G), welford.merge({a: E.Load(bufs[a], at(b(BinOp.Add, first, v(t)))) for a in accs}, fresh)),
        *(N.Store(names[a], v(h), v(a)) for a in accs)), ()))
    ro = [dataclasses.replace(s, binding=j, access=BufferAccess.ReadOnly) for j, s in enumerate(scratch)]
    out = [dataclasses.replace(s, binding=len(ro) + j, pipeline_live_out=True) for j, s in enumerate(scratch2)]
    return _stage(p, body, 256, ro + out), names, scratch2


def fission_components(p: Program) -> Optional[list[Program]]:
    """Fission's stage A (``if g < K*L { if g < L { C0 } else if g < 2L { C1 } ... }``: fission.py) as
    K programs of the chain shape, component c as ``let i = gid; if i < L { C_c with g := i + c*L }``,
    or None. The seed op's two row sums share one kernel there, which no single chain matches."""
    if not (len(p.entry) == 1 and isinstance(p.entry[0], Region) and p.entry[0].generator == FISSION_GENERATOR):
        return None
    gid, lit = E.InvocationId(0), E.LitU32
    outer = p.entry[0].body
    if not (len(outer) == 1 and isinstance(outer[0], N.If) and not outer[0].otherwise):
        return None
    bodies, node = [], outer[0].then
    while len(node) == 1 and isinstance(node[0], N.If) and node[0].otherwise:
        bodies.append(node[0].then)
        node = node[0].otherwise
    bodies.append(node)
    length = outer[0].cond.right.value // len(bodies) if isinstance(outer[0].cond.right, E.LitU32) else 0
    if outer[0].cond != E.BinOpExpr(BinOp.Lt, gid, lit(length * len(bodies))) or len(bodies) < 2:
        return None
    names = NameSource(all_names(p), "opt_comp_")
    out = []
    for c, body in enumerate(bodies):
        i = names("i")
        at = E.BinOpExpr(BinOp.Add, E.Var(i), lit(c * length)) if c else E.Var(i)
        body = rewrite_nodes(body, expr=lambda e, at=at: map_expr(e, lambda x: at if x == gid else None))
        used = _used_bufs(body)
        bufs = [dataclasses.replace(b, binding=j) for j, b in enumerate(b for b in p.buffers if b.name in used)]
        out.append(Program(tuple(bufs), p.workgroup_size, (Region(FISSION_GENERATOR, None, (
            N.Let(i, gid), N.If(E.BinOpExpr(BinOp.Lt, E.Var(i), lit(length)), body, ()))),), p.entry_op_id))
    return out


def split_components(p: Program) -> Optional[tuple[tuple[Program, ...], tuple, str]]:
    """Fission's components each split (:func:`split_chain`): every stage A, the components that do
    not split, then every stage B (the A stages share no buffer, so they need no barrier between)."""
    comps = fission_components(p)
    if comps is None:
        return None
    firsts, lasts, scratch, whys = [], [], [], []
    for k, comp in enumerate(comps):
        ch = match_chain(comp)
        r = None if ch is None else split_chain(comp, ch)
        if r is None:
            lasts.insert(0, comp)
            continue
        firsts.append(r[0][0])
        lasts.append(r[0][1])
        scratch += r[1]
        whys.append(f"component {k}: {r[2]}")
    if not whys:
        return None
    return tuple(firsts + lasts), tuple(scratch), "; ".join(whys)


def _stage(p: Program, body, size: int, bufs) -> Program:
    return Program(tuple(bufs), (size, 1, 1), (Region(SPLIT_GENERATOR, None, tuple(body)),), p.entry_op_id)


class SplitChains(PassBase):
    """Two-stage grid reductions of long per-invocation folds (module docstring); fast precision only."""
    name = "split_chains"
    kind = "split"
    precision = "fast"  # results within docs/PRECISION.md's bound, not the reference's bits

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return ctx.precision == "fast" and (match_chain(program) is not None
                                            or fission_components(program) is not None)

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        if ctx.precision != "fast":  # the exact precision's bits: nothing to do
            return None
        ch = match_chain(program)
        r = split_components(program) if ch is None else split_chain(program, ch)
        return None if r is None else Rewrite(r[0], r[1], detail=r[2])

    def explain(self, rewrite: Rewrite) -> str:
        return rewrite.detail


SPLIT_CHAINS = SplitChains()
