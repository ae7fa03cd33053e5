"""Key chains: the part of a loop that all invocations of a key compute identically -- carried
values included -- runs once per key in a pre-pass, which leaves the values the rest of the loop
reads in per-(key, iteration) tables.

flash_attention, after split_invocations, runs one invocation per (query, output column t):
``for j { m' = max(m, s_j); rescale = exp(m - m'); p = exp(s_j - m'); l = rescale*l + p;
o_t = rescale*o_t + p*v[j, t]; m = m'; l = l' }``. Only ``o_t`` depends on t; the running max, the
two exponentials and the running sum depend on the query alone, yet each of the 64 invocations
of a query computes them (H100: 0.94 ms of flash_attention's 1.23). tabulate.py cannot take them:
they are carried from one iteration to the next. Here a pre-pass with one invocation per key runs
the loop's key statements, in the program's order, and stores ``rescale`` and ``p`` of every
iteration and the final ``l``; the main loop loads them. Same operations on the same values in the
same order for every value: the same bits.

A loop qualifies (in a stage whose body is key lets, one ``if`` on the key, the loop in its then
branch) when, with ``key = g // c`` (``c >= 2``, ``g`` the invocation id):
* its top-level ``let``\\s and ``assign``\\s of key-only values, and the carried variables they
  assign (declared before the loop with a key-only value, assigned only there), are the key part;
  key-only: literals, the key's lets, the loop variable, key values, loads of buffers the stage
  never writes, nothing that may trap;
* the rest reads no carried key variable (only key ``let`` values, which get tables), assigns
  none, and the key part holds an exponential-class op, a square root or a division (worth a
  kernel); the ``if`` bounds the key by a literal, and a table has at most MAX_TABLE elements.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt import optimize
    >>> graph, reports = optimize(get("vyre-libs::nn::flash_attention").build_with(seq_len=40, head_dim=12))
    >>> sorted(b.name for b in graph.scratch if b.name.startswith("opt_kc_"))  # m at each step, the final l
    ['opt_kc_flash_l_4', 'opt_kc_flash_m_at_3', 'opt_kc_flash_prob_0', 'opt_kc_flash_rescale_1', 'opt_kc_score_2']
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.grid import has_workgroup_or_atomic
from ..ir.optable import TRANSCENDENTAL_UNOPS, BinOp, UnOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import walk_nodes
from .analysis import (INVOCATION_EXPRS, Facts, NameSource, all_names, assigned_vars, holds_costly, next_binding,
                       read_vars)
from .distribute import KEYCHAIN_GENERATOR, Chain, distribute
from .protocol import PassBase, PassContext, Rewrite

MAX_TABLE = 1 << 24
PRE_LOCAL_SIZE = 64
_TYPES = (DataType.F32, DataType.U32, DataType.I32)
_HEAVY = TRANSCENDENTAL_UNOPS | {UnOp.Sqrt, UnOp.InverseSqrt}


@dataclasses.dataclass(frozen=True)
class KeyChain:
    """One split: the pre-pass kernels (distribute.py), the main stage, the tables they share, and
    what ``explain`` says (the loop, c, the number of keys, the carried variables, the tables read)."""
    prepasses: tuple
    main: Program
    scratch: tuple
    loop_var: str
    c: int
    keys: int
    carried: tuple
    tables: tuple
    kernels: int


class _Keys:
    """The stage's key and which names are key-only."""

    def __init__(self, p: Program, root: Region) -> None:
        self.facts = Facts(p)
        self.assigned = assigned_vars(root.body)
        gids = set()
        self.key = self.c = None
        self.names: set = set()
        self.copies: set = set()  # the key and plain copies of it (``let row = key``)
        for n in root.body:
            if not isinstance(n, N.Let) or n.name in self.assigned:
                continue
            v = n.value
            if v == E.InvocationId(0):
                gids.add(n.name)
            elif (self.key is None and isinstance(v, E.BinOpExpr) and v.op is BinOp.Div and isinstance(v.right, E.LitU32)
                  and v.right.value >= 2 and (v.left == E.InvocationId(0) or v.left in [E.Var(g) for g in gids])):
                self.key, self.c = n.name, v.right.value
                self.names.add(n.name)
            elif self.key is not None and self.only(v, self.names):
                self.names.add(n.name)
                if v == E.Var(self.key):
                    self.copies.add(n.name)
        if self.key is not None:
            self.copies.add(self.key)

    def only(self, e: E.Expr, names: set) -> bool:
        """`e` is key-only: pure, reading only `names` (no id; no buffer length, which the pre-pass's
        bindings would change)."""
        return self.facts.computed_from(e, names, INVOCATION_EXPRS + (E.BufLen,))

    def bound(self, cond: E.Expr) -> Optional[int]:
        """N when `cond` is ``x < N`` (an ``and`` of such) with x a plain copy of the key."""
        if isinstance(cond, E.BinOpExpr) and cond.op is BinOp.And:
            a, b = self.bound(cond.left), self.bound(cond.right)
            return min(x for x in (a, b) if x is not None) if (a or b) else None
        if (isinstance(cond, E.BinOpExpr) and cond.op is BinOp.Lt and isinstance(cond.right, E.LitU32)
                and isinstance(cond.left, E.Var) and cond.left.name in self.copies):
            return cond.right.value
        return None


def _key_lets(keys: _Keys, before: list) -> list:
    """The lets before the loop whose values are key-only (in order: one may read another)."""
    names, out = set(keys.names), []
    for n in before:
        if keys.only(n.value, names):
            out.append(n)
            names.add(n.name)
    return out


def _split(keys: _Keys, before: list, loop: N.Loop) -> Optional[tuple]:
    """(carried, key statements, lane statements) of `loop`, or None."""
    inits = {n.name for n in _key_lets(keys, before)}
    nested = assigned_vars([s for s in loop.body if not isinstance(s, N.Assign)])
    carried = {s.name for s in loop.body if isinstance(s, N.Assign)} & inits - nested
    while True:
        names = keys.names | inits | {loop.var}
        key_stmts, lane, ok = [], [], True
        for s in loop.body:
            if isinstance(s, N.Let) and keys.only(s.value, names):
                key_stmts.append(s)
                names = names | {s.name}
            elif isinstance(s, N.Assign) and s.name in carried:
                if not keys.only(s.value, names):
                    carried.discard(s.name)
                    ok = False
                    break
                key_stmts.append(s)
            else:
                lane.append(s)
        if ok:
            break
    touched = read_vars(lane) | assigned_vars(lane)
    if not carried or touched & carried or not holds_costly(key_stmts, _HEAVY):
        return None
    return carried, key_stmts, lane


def keychain(p: Program, local_size: int = PRE_LOCAL_SIZE) -> Optional[KeyChain]:
    """The pre-pass and the main stage for the first qualifying loop, or None."""
    if has_workgroup_or_atomic(p) or len(p.entry) != 1 or not isinstance(p.entry[0], Region):
        return None
    root = p.entry[0]
    keys = _Keys(p, root)
    ifs = [n for n in root.body if isinstance(n, N.If)]
    if keys.key is None or len(ifs) != 1 or ifs[0].otherwise or not keys.only(ifs[0].cond, keys.names):
        return None
    guard = ifs[0]
    nkeys = keys.bound(guard.cond)
    loops = [k for k, n in enumerate(guard.then) if isinstance(n, N.Loop)]
    if not nkeys or len(loops) != 1:  # no bound, or no key passes it (`row < 0`)
        return None
    at = loops[0]
    loop, before, after = guard.then[at], list(guard.then[:at]), list(guard.then[at + 1:])
    if not (isinstance(loop.from_, E.LitU32) and isinstance(loop.to, E.LitU32)) or loop.to.value <= loop.from_.value:
        return None
    if not all(isinstance(n, N.Let) for n in before):
        return None
    split = _split(keys, before, loop)
    if split is None:
        return None
    carried, key_stmts, lane = split
    facts = keys.facts
    key_lets = {s.name for s in key_stmts if isinstance(s, N.Let)}
    exported = [s.name for s in key_stmts if isinstance(s, N.Let) and s.name in read_vars(lane)]
    finals = [x for x in sorted(carried) if x in read_vars(after)]
    trips = loop.to.value - loop.from_.value
    if (nkeys * trips > MAX_TABLE or any(facts.env.get(v) not in _TYPES for v in exported + finals)
            or key_lets & assigned_vars(lane)):
        return None
    kinds = [isinstance(x, N.Assign) for x in key_stmts]
    if kinds != sorted(kinds):  # the key part assigns its carried values after all its lets
        return None
    fresh = NameSource(all_names(p), "opt_kc_")
    top = [n for n in root.body if isinstance(n, N.Let) and n.name in keys.names and n.name != keys.key]
    ch = Chain(p, keys.key, top, guard.cond, _key_lets(keys, before), loop.var, loop.from_.value, trips, nkeys,
               [x for x in key_stmts if isinstance(x, N.Let)], {x.name: x.value for x in key_stmts
                                                                if isinstance(x, N.Assign)},
               exported, finals, facts.env, fresh, local_size)
    got = distribute(ch)
    if got is None:
        return None
    stages, table, decl = got
    kvar, slot = E.Var(keys.key), ch.slot()
    # ---- the main stage: the lane statements, the key values loaded
    nxt = next_binding(p)
    scratch = tuple(BufferDecl(t, nxt + k, BufferAccess.ReadOnly, *decl[t]) for k, t in enumerate(sorted(decl)))
    used = {table[v] for v in exported + finals}
    loads = tuple(N.Let(v, E.Load(table[v], slot)) for v in exported)
    new_loop = N.Loop(loop.var, loop.from_, loop.to, loads + tuple(lane))
    fins = tuple(N.Assign(x, E.Load(table[x], kvar)) for x in finals)
    then = tuple(before) + (new_loop,) + fins + tuple(after)
    new_root = dataclasses.replace(root, body=tuple(dataclasses.replace(guard, then=then) if n is guard else n
                                                    for n in root.body))
    # marked as a key chain's too, so unroll inlines its index lets and issues its table loads ahead
    main = dataclasses.replace(p, buffers=tuple(p.buffers) + tuple(b for b in scratch if b.name in used),
                               entry=(Region(KEYCHAIN_GENERATOR, None, (new_root,)),))
    return KeyChain(tuple(stages), main, scratch, loop.var, keys.c, nkeys, tuple(sorted(carried)), tuple(exported + finals),
                    len(stages))


class KeyChainPass(PassBase):
    """Key chains into a pre-pass (module docstring); dce then drops what the main stage no longer reads."""
    name, kind, max_stages = "keychain", "split", 12
    tidy = ("dce",)

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        k = keychain(program)
        return None if k is None else Rewrite(k.prepasses + (k.main,), k.scratch, detail=k)

    def explain(self, rewrite: Rewrite) -> str:
        k: KeyChain = rewrite.detail
        return (f"loop {k.loop_var}: carried {', '.join(k.carried)} and the values computed with them depend on "
                f"the invocation only through id // {k.c}: run once per key ({k.keys} keys) by {k.kernels} pre-pass "
                f"kernels (a serial loop per group of carried values, the values between them per (key, iteration) "
                f"in parallel); the loop loads {', '.join(k.tables)}")


KEYCHAIN = KeyChainPass()

__all__ = ["keychain", "KeyChain", "KEYCHAIN_GENERATOR", "KEYCHAIN"]
