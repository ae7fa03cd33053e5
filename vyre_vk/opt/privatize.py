"""Privatisation: a small storage buffer that every invocation rewrites identically lives in
registers while the program runs, and is written back once at the end.

vyre's top_k keeps its k best (value, index) pairs in two storage buffers and inserts each of
32,768 candidates into them: 8 loads and a shifted tail of stores per candidate, each a round
trip to L2 -- 18 ms for what is 32,768 short register compare chains. The program names no
invocation (no id, lane or workgroup), so every invocation does the same thing to the same
slots, and it writes every slot (top_k's `-inf` initialisation) before it reads any: no
invocation's view of the buffer depends on another's or on the buffer's initial contents. So
each slot becomes a variable (initialised by those first stores), a literal-index access
reads or assigns it, any other index picks the slot by comparisons (reading 0 and dropping
the store out of bounds, as memory does), and the final values are stored at the end -- the
same values every invocation stored before. Small literal loops (``for j in 0..k``, k <= 16)
that touch the buffer are unrolled first, so their indices are literals.

Refused: any invocation builtin, subgroup op, atomic, call, buffer length, trap or return; a
buffer over :data:`MAX_SLOTS` slots, or read before the leading stores wrote every slot.

Example::

    >>> from vyre_vk.ops import get
    >>> p = privatize(get("vyre-libs::nn::top_k").build_with(n=64, k=4))
    >>> body = p.entry[0].body
    >>> [n.buffer for n in body if type(n).__name__ == "Store"][-8:]  # the write-back, after the loop
    ['best_vals', 'best_vals', 'best_vals', 'best_vals', 'best_idxs', 'best_idxs', 'best_idxs', 'best_idxs']
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import Program, Region
from ..ir.walk import node_all_exprs, replace_expr, transform_expr, walk_expr, walk_nodes
from .analysis import ZERO_TYPES, NameSource, all_names, assigned_vars, zero_literal
from .protocol import PassBase, PassContext, Rewrite

#: Slots one buffer may have in registers (each a variable; a dynamic index costs a compare per slot).
MAX_SLOTS = 16
_UNROLL_MAX = 16
_BUILTINS = (E.InvocationId, E.LocalId, E.WorkgroupId, E.SubgroupLocalId, E.SubgroupSize, E.SubgroupBallot,
             E.SubgroupShuffle, E.SubgroupReduce, E.Atomic, E.Call, E.BufLen)
_FOLD = {BinOp.Add: lambda a, b: (a + b) & 0xFFFFFFFF, BinOp.Sub: lambda a, b: (a - b) & 0xFFFFFFFF,
         BinOp.Mul: lambda a, b: (a * b) & 0xFFFFFFFF}


def _fold(e: E.Expr, env: dict) -> E.Expr:
    """u32 literal arithmetic and lets bound to literals, folded (to find literal indices)."""
    def post(x: E.Expr) -> Optional[E.Expr]:
        if isinstance(x, E.Var) and x.name in env:
            return env[x.name]
        if (isinstance(x, E.BinOpExpr) and x.op in _FOLD and isinstance(x.left, E.LitU32)
                and isinstance(x.right, E.LitU32)):
            return E.LitU32(_FOLD[x.op](x.left.value, x.right.value))
        return None
    return transform_expr(e, post=lambda new, _old: post(new))


def _leading_slots(body, buf: str) -> set:
    """The slots of `buf` the program's leading literal-index stores write (stores whose values
    read no buffer), before any other statement."""
    seen: set = set()
    for n in body:
        if not (isinstance(n, N.Store) and isinstance(n.index, E.LitU32)
                and not any(isinstance(x, E.Load) for x in walk_expr(n.value))):
            break
        if n.buffer == buf:
            seen.add(n.index.value)
    return seen


def candidates(p: Program) -> tuple[list, str]:
    """The buffers to privatise (name, count, leading values), or ([], why not)."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region):
        return [], "not one Region"
    body = p.entry[0].body
    if any(isinstance(n, (N.Trap, N.Return, N.Barrier) + N.UNSUPPORTED_NODES) for n in walk_nodes(body)):
        return [], "a trap, return or barrier"
    if any(isinstance(x, _BUILTINS) for x in node_all_exprs(body)):
        return [], "the program names its invocation (or uses atomics, subgroups, calls, lengths)"
    out = []
    for b in p.buffers:
        if b.is_workgroup or b.is_input and not b.is_result or b.count > MAX_SLOTS or b.count == 0:
            continue
        if b.element not in ZERO_TYPES:
            continue
        if _leading_slots(body, b.name) == set(range(b.count)):
            out.append((b.name, b.count))
    return out, "" if out else "no small buffer written in full before it is read"


class _Rewriter:
    def __init__(self, p: Program, bufs: list) -> None:
        self.fresh = NameSource(all_names(p), "pv_")
        self.slots = {name: [self.fresh(f"{name}{s}") for s in range(count)] for name, count in bufs}
        self.types = {b.name: b.element for b in p.buffers}
        self.mutated = assigned_vars(p.entry)  # a let that is later assigned is not a literal index

    def expr(self, e: E.Expr, env: dict) -> E.Expr:
        def pre(x: E.Expr) -> Optional[E.Expr]:
            if isinstance(x, E.Load) and x.buffer in self.slots:
                idx = _fold(self.expr(x.index, env), env)
                names = self.slots[x.buffer]
                if isinstance(idx, E.LitU32):
                    return E.Var(names[idx.value]) if idx.value < len(names) else zero_literal(self.types[x.buffer])
                out: E.Expr = zero_literal(self.types[x.buffer])
                for s in reversed(range(len(names))):
                    out = E.Select(E.BinOpExpr(BinOp.Eq, idx, E.LitU32(s)), E.Var(names[s]), out)
                return out
            return None
        return replace_expr(e, pre)

    def nodes(self, nodes, env: dict) -> tuple:
        out: list = []
        env = dict(env)
        for n in nodes:
            if isinstance(n, N.Store) and n.buffer in self.slots:
                names = self.slots[n.buffer]
                idx = _fold(self.expr(n.index, env), env)
                val = self.expr(n.value, env)
                if isinstance(idx, E.LitU32):
                    if idx.value < len(names):
                        out.append(N.Assign(names[idx.value], val))
                    continue
                tmp = self.fresh("v")
                out.append(N.Let(tmp, val))
                out += [N.If(E.BinOpExpr(BinOp.Eq, idx, E.LitU32(s)), (N.Assign(names[s], E.Var(tmp)),), ())
                        for s in range(len(names))]
            elif isinstance(n, N.Loop) and self._unrollable(n):
                for j in range(n.from_.value, n.to.value):
                    inner = dict(env, **{n.var: E.LitU32(j)})
                    out.append(N.Block((N.Let(n.var, E.LitU32(j)),) + self.nodes(n.body, inner)))
            elif isinstance(n, N.Let):
                v = self.expr(n.value, env)
                folded = _fold(v, env)
                if isinstance(folded, E.LitU32) and n.name not in self.mutated:
                    env[n.name] = folded
                out.append(N.Let(n.name, v))
            elif isinstance(n, N.Assign):
                out.append(N.Assign(n.name, self.expr(n.value, env)))
            elif isinstance(n, N.Store):
                out.append(N.Store(n.buffer, self.expr(n.index, env), self.expr(n.value, env)))
            elif isinstance(n, N.If):
                out.append(N.If(self.expr(n.cond, env), self.nodes(n.then, env), self.nodes(n.otherwise, env)))
            elif isinstance(n, N.Loop):
                out.append(N.Loop(n.var, self.expr(n.from_, env), self.expr(n.to, env),
                                  self.nodes(n.body, {k: v for k, v in env.items() if k != n.var})))
            elif isinstance(n, (N.Block, Region)):
                out.append(dataclasses.replace(n, body=self.nodes(n.body, env)))
            else:
                out.append(n)
        return tuple(out)

    def _unrollable(self, n: N.Loop) -> bool:
        if not (isinstance(n.from_, E.LitU32) and isinstance(n.to, E.LitU32)
                and 0 < n.to.value - n.from_.value <= _UNROLL_MAX) or n.var in self.mutated:
            return False
        touches = any(isinstance(x, E.Load) and x.buffer in self.slots for x in node_all_exprs(n.body))
        return touches or any(isinstance(m, N.Store) and m.buffer in self.slots for m in walk_nodes(n.body))


def privatize(p: Program) -> Optional[Program]:
    """The program with its small rewritten-in-full buffers in registers, or None."""
    bufs, _ = candidates(p)
    if not bufs:
        return None
    rw = _Rewriter(p, bufs)
    root = p.entry[0]
    # every slot is assigned by the leading stores before any read: the zero is never seen
    head = [N.Let(rw.slots[name][s], zero_literal(rw.types[name])) for name, count in bufs for s in range(count)]
    body = rw.nodes(root.body, {})
    tail = [N.Store(name, E.LitU32(s), E.Var(rw.slots[name][s])) for name, count in bufs for s in range(count)]
    return dataclasses.replace(p, entry=(dataclasses.replace(root, body=tuple(head) + body + tuple(tail)),))


class Privatize(PassBase):
    """Privatisation (module docstring)."""
    name = "privatize"

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        out = privatize(program)
        return None if out is None else Rewrite((out,), (), detail=[b[0] for b in candidates(program)[0]])


    def explain(self, rewrite: Rewrite) -> str:
        return (f"{', '.join(rewrite.detail)}: small buffer(s) every invocation writes in full before reading, "
                "identically (no invocation id): kept in registers, written back once at the end")


PRIVATIZE = Privatize()
