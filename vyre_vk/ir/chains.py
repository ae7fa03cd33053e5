"""A loop's f32 chains: the values each iteration derives from the previous one's (fold
accumulators, Welford's running mean), and whether the loop may be run speculatively.

Speculation (vyre_vk.opt.speculate marks the loop, vyre_vk.lower.speculate emits it) computes
the chain's f32 add, sub, mul and div in plain IEEE arithmetic, records the smallest exponent
field any of them produced, and runs the loop again with the exact helpers when that was 0
(a zero or a subnormal). While every chain value is normal, infinite or NaN, IEEE arithmetic
*is* the reference's (canonicalisation changes only NaN payloads, which no consumer can see:
stores canonicalise, NaN tests read the exponent and any mantissa bit). So the re-run is rare
and the result is the reference's bits either way.

A store's value is speculated the same way (every f32 add, sub, mul and div in it; elementwise
maps): the value computed in IEEE arithmetic and checked, and again exactly if the check failed,
then stored once.

A loop qualifies when re-running it is harmless and its chain cannot run away: no stores,
atomics, barriers, collectives, traps or returns inside, and no inner loop bound that depends on
a chain value. Whether an expression may trap is the caller's question (the pass asks Facts).

Example::

    >>> from vyre_vk.ir import expr as E, node as N
    >>> from vyre_vk.ir.types import DataType
    >>> body = (N.Assign("acc", E.BinOpExpr(E.BinOp.Add, E.Var("acc"), E.Load("x", E.Var("i")))),)
    >>> loop = N.Loop("i", E.LitU32(0), E.LitU32(8), body)
    >>> types = loop_types(loop, {"acc": DataType.F32}, {})
    >>> sorted(chain_vars(loop, types))
    ['acc']
    >>> blocker(loop, chain_vars(loop, types), types, {}) is None
    True
"""
from __future__ import annotations

from typing import Mapping, Optional

from . import expr as E
from . import node as N
from .optable import BinOp
from .types import DataType
from .walk import expr_type, node_exprs, walk_expr, walk_nodes

F32 = DataType.F32
#: The generator of the Region that marks a loop for speculation.
SPECULATE = "vyre_vk.opt.speculate"
#: Such a Region's ``source_region`` when its loop runs no exact first iteration (opt.speculate.unpeeled).
NO_PEEL = "no-peel"
#: The f32 operators a speculative chain computes in IEEE arithmetic.
CHAIN_OPS = (BinOp.Add, BinOp.Sub, BinOp.Mul, BinOp.Div)
_EFFECTS = (N.Store, N.Barrier, N.Trap, N.Return) + N.UNSUPPORTED_NODES
_OPAQUE = (E.Atomic, E.Call) + E.SUBGROUP_COLLECTIVES


def _vars(e: E.Expr) -> set[str]:
    return {x.name for x in walk_expr(e) if isinstance(x, E.Var)}


def loop_types(loop: N.Loop, env: Mapping[str, Optional[DataType]], bufs: Mapping) -> dict:
    """`env` (the names bound outside) extended by every name the loop binds, in order."""
    out = dict(env)
    out[loop.var] = DataType.U32
    for n in walk_nodes(loop.body):
        if isinstance(n, N.Let):
            out[n.name] = expr_type(n.value, out, bufs)
        elif isinstance(n, N.Loop):
            out[n.var] = DataType.U32
    return out


def carried(loop: N.Loop) -> list[str]:
    """Variables the loop assigns but does not bind: their values pass between iterations."""
    local = {n.name for n in walk_nodes(loop.body) if isinstance(n, N.Let)}
    local |= {n.var for n in walk_nodes(loop.body) if isinstance(n, N.Loop)} | {loop.var}
    out: list[str] = []
    for n in walk_nodes(loop.body):
        if isinstance(n, N.Assign) and n.name not in local and n.name not in out:
            out.append(n.name)
    return out


def chain_vars(loop: N.Loop, types: Mapping[str, Optional[DataType]]) -> frozenset[str]:
    """The f32 names whose values depend on a carried f32 value's previous iteration: the carried
    recurrences (``acc = acc + x``, also through lets) and everything computed from them.
    `types`: :func:`loop_types`."""
    deps: dict[str, set[str]] = {}
    for n in walk_nodes(loop.body):
        if isinstance(n, (N.Let, N.Assign)):
            deps.setdefault(n.name, set()).update(_vars(n.value))

    def reach(name: str) -> set[str]:
        seen: set[str] = set()
        stack = list(deps.get(name, ()))
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(deps.get(v, ()))
        return seen

    reaches = {name: reach(name) for name in deps}
    seeds = {v for v in carried(loop) if types.get(v) is F32 and v in reaches.get(v, ())}
    return frozenset(seeds | {v for v, r in reaches.items() if types.get(v) is F32 and r & seeds})


def chain_shape(e: E.Expr, chain: Optional[frozenset]) -> bool:
    """An add / sub / mul / div with a chain operand (`chain` None: any, a stored value's) and no
    literal zero operand (a driver may fold ``x + 0.0``; the exact helpers spell zeros out). The
    operands' type is the caller's to check (the lowering knows it; :func:`is_chain_op` infers it)."""
    if not (isinstance(e, E.BinOpExpr) and e.op in CHAIN_OPS and (chain is None or chain)):
        return False
    if any(isinstance(x, E.LitF32) and x.bits & 0x7FFFFFFF == 0 for x in (e.left, e.right)):
        return False
    return chain is None or bool((_vars(e.left) | _vars(e.right)) & chain)


def summands(body: tuple, chain: frozenset) -> frozenset[str]:
    """Names a let in `body` binds whose every use is an operand of one of the chain's adds or subs,
    directly or through lets that copy them (Welford's ``x = input[k]; d = x - m1; ... x - m1``).
    A subnormal held in one cannot change a sum the loop's check keeps (vyre_vk.lower.speculate.absorbing),
    so its load may skip the flush (vyre_vk.lower.speculate.raw_loads).

        >>> x, m = E.Var("x"), E.Var("m")
        >>> body = (N.Let("x", E.Load("in", E.LitU32(0))), N.Assign("m", E.BinOpExpr(BinOp.Sub, x, m)))
        >>> sorted(summands(body, frozenset({"m"})))
        ['x']
        >>> sorted(summands(body + (N.Assign("m", E.BinOpExpr(BinOp.Mul, x, m)),), frozenset({"m"})))
        []
    """
    bound: set[str] = set()
    assigned: set[str] = set()
    uses: dict[str, int] = {}
    good: dict[str, int] = {}
    copies: dict[str, set[str]] = {}  # name -> the names bound to a copy of it
    for n in walk_nodes(body):
        if isinstance(n, N.Let):
            bound.add(n.name)
            if isinstance(n.value, E.Var):
                good[n.value.name] = good.get(n.value.name, 0) + 1
                copies.setdefault(n.value.name, set()).add(n.name)
        elif isinstance(n, N.Assign):
            assigned.add(n.name)
        for e in node_exprs(n):
            for x in walk_expr(e):
                if isinstance(x, E.Var):
                    uses[x.name] = uses.get(x.name, 0) + 1
                elif isinstance(x, E.BinOpExpr) and x.op in (BinOp.Add, BinOp.Sub) and chain_shape(x, chain):
                    for side in (x.left, x.right):
                        if isinstance(side, E.Var):
                            good[side.name] = good.get(side.name, 0) + 1
    out = {v for v in bound - assigned - chain if uses.get(v, 0) == good.get(v, 0)}
    while True:  # a copy that is used otherwise disqualifies what it copies
        bad = {v for v in out if copies.get(v, set()) - out}
        if not bad:
            return frozenset(out)
        out -= bad


def is_chain_op(e: E.Expr, chain: Optional[frozenset], types: Mapping, bufs: Mapping) -> bool:
    """:func:`chain_shape` on f32 operands."""
    return chain_shape(e, chain) and expr_type(e.left, types, bufs) is F32


def store_ops(n: N.Store, types: Mapping, bufs: Mapping) -> int:
    """How many f32 operations a store's value would compute speculatively (0 where its value
    holds an atomic, call or collective: evaluating it twice must have no effect)."""
    xs = list(walk_expr(n.value))
    if any(isinstance(x, _OPAQUE) for x in xs):
        return 0
    return sum(is_chain_op(x, None, types, bufs) for x in xs)


def blocker(loop: N.Loop, chain: frozenset, types: Mapping, bufs: Mapping) -> Optional[str]:
    """Why the loop may not be speculated (None: it may). `types`: :func:`loop_types`."""
    if not chain:
        return "no f32 value carried from one iteration to the next"
    ops = 0
    for n in walk_nodes(loop.body):
        if isinstance(n, _EFFECTS):
            return f"a {type(n).__name__} inside (a re-run must have no effect)"
        if isinstance(n, N.Loop) and (_vars(n.from_) | _vars(n.to)) & chain:
            return "an inner loop bound depends on the chain"
        for x in (y for e in node_exprs(n) for y in walk_expr(e)):
            if isinstance(x, _OPAQUE):
                return f"a {type(x).__name__} inside"
            if ((isinstance(x, E.BinOpExpr) and x.op in (BinOp.Max, BinOp.Min) and (_vars(x.left) | _vars(x.right)) & chain)
                    or (isinstance(x, E.Select) and _vars(x.cond) & chain)):
                # online softmax's m - max(m, s) is an exact zero whenever the maximum stays: the
                # check would send nearly every run to the exact loop (flash_attention, H100: 1.22 -> 1.97 ms)
                return "a running max or min on the chain (or a select by a chain value): its differences are mostly exact zeros"
            ops += is_chain_op(x, chain, types, bufs)
    return None if ops else "the chain has no f32 add, sub, mul or div"
