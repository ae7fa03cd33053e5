"""Which values depend on the invocation id ``g`` only through a key ``Q = g // c``: the proof
behind the tabulate pass (tabulate.py).

An abstract interpretation over u32 index algebra: every value is ``C(f)`` -- equal to ``f(Q)``
for each remainder ``R = g mod c`` -- or ``A(a)`` -- exactly ``c * a(Q) + R``, the id itself with
a coarse part subtracted -- or unknown (None). The rules:

* ``g = c*Q + R`` is ``A(Q)`` (``C(Q)`` when c = 1); ``workgroup_x`` is ``C(Q // (T/c))`` when
  ``c | T``; literals, loop variables and values already tabulated are ``C``;
* ``A(a) // m`` with ``c | m`` is ``C(a // (m/c))``: ``(c*a + R) // m = a // (m/c)`` for ``R < c``;
* ``A(a) % m`` with ``c | m`` is ``A(a % (m/c))``;
* ``A(a) - C(b) * m`` with ``c | m`` is ``A(a - b*(m/c))`` only when ``b = a // (m/c)``: then the
  difference is the remainder and cannot wrap around;
* any operator over ``C`` operands is ``C`` (a division only by a non-zero literal: a pre-pass
  must not trap where the program never divided), and so is a load whose index is ``C`` from a
  buffer the stage never writes -- or writes only at indices ``Q'*s + o'`` that can never equal
  the load's ``Q*s + o`` (``o != o'``, both below ``s``: one workgroup's slots of a scratch).

Example::

    >>> from vyre_vk.ir import Expr
    >>> q = Expr.var("Q")
    >>> kd = Keyed(64, 64, {}, set(), set(), q)
    >>> f = kd.coarse(Expr.div(Expr.gid_x(), Expr.u32(128)))   # (64 Q + R) // 128 = Q // 2
    >>> f.left, f.right
    (Var(name='Q'), LitU32(value=2))
    >>> kd.coarse(Expr.local_x()) is None
    True
"""
from __future__ import annotations

from typing import Optional

from ..ir import expr as E
from ..ir.optable import BinOp
from ..ir.types import DataType
from ..ir.walk import expr_children, with_children
from .phases import resolve

_GID = E.InvocationId(0)


def _lit(e: E.Expr) -> Optional[int]:
    return e.value if isinstance(e, E.LitU32) else None


def _bin(op: BinOp, a: E.Expr, b: E.Expr) -> E.Expr:
    return E.BinOpExpr(op, a, b)


def linear(form: E.Expr, q: E.Var) -> Optional[tuple[int, int]]:
    """``(s, o)`` when the key form is ``Q*s + o`` with literals (None otherwise)."""
    if form == q:
        return 1, 0
    if isinstance(form, E.BinOpExpr) and form.op in (BinOp.Mul, BinOp.Add):
        for x, lit in ((form.left, _lit(form.right)), (form.right, _lit(form.left))):
            inner = linear(x, q) if lit is not None else None
            if inner is not None:
                s, o = inner
                return (s * lit, o * lit) if form.op is BinOp.Mul else (s, o + lit)
    return None


class Keyed:
    """The interpretation for one ``c`` (invocations per key) and workgroup size ``tile``.

    `env`: never-assigned lets in scope by name; `local`: names that stand for themselves (the
    loop variable, values already moved); `readonly`: buffers the stage never writes;
    `slots`: for a buffer the stage writes, the ``(s, o)`` of every store's index (None for a
    store that is not of that form). ``of(e)`` is ``("C", f)``, ``("A", a)`` or None, with ``Q`` as `q`.
    """

    def __init__(self, c: int, tile: int, env: dict, local: set, readonly: set, q: E.Var,
                 slots: Optional[dict] = None, type_of=None) -> None:
        self.c, self.tile, self.env, self.local, self.readonly, self.q = c, tile, env, local, readonly, q
        self.slots = slots or {}
        self.type_of = type_of  # f32 divisions never trap: given the program's types, they stay
        self._memo: dict = {}

    def with_local(self, names) -> None:
        """Make `names` stand for themselves (forgets cached answers: a name's answer changes)."""
        self.local = set(self.local) | set(names)
        self._memo.clear()

    def set_local(self, names: set) -> None:
        self.local = set(names)
        self._memo.clear()

    def coarse(self, e: E.Expr) -> Optional[E.Expr]:
        r = self.of(e)
        return r[1] if r is not None and r[0] == "C" else None

    def of(self, e: E.Expr):
        hit = self._memo.get(id(e))
        if hit is None or hit[0] is not e:
            hit = (e, self._of(e))
            self._memo[id(e)] = hit
        return hit[1]

    def _of(self, e: E.Expr):
        c, q = self.c, self.q
        if isinstance(e, (E.LitU32, E.LitI32, E.LitF32, E.LitBool)):
            return "C", e
        if isinstance(e, E.Var):
            if e.name in self.local:
                return "C", e
            return self.of(self.env[e.name]) if e.name in self.env else None
        if e == _GID:
            return ("C", q) if c == 1 else ("A", q)
        if e == E.WorkgroupId(0):
            if self.tile % c:
                return None
            t = self.tile // c
            return "C", (q if t == 1 else _bin(BinOp.Div, q, E.LitU32(t)))
        if e == E.LocalId(0) and c == 1:
            return "C", _bin(BinOp.Mod, q, E.LitU32(self.tile))
        if isinstance(e, E.BinOpExpr):
            return self._binop(e)
        if not isinstance(e, (E.Load, E.UnOpExpr, E.Select, E.Cast, E.Fma)):
            return None  # builtins of other axes, subgroups, atomics, calls, buffer lengths
        kids = [self.coarse(k) for k in expr_children(e)]
        if any(k is None for k in kids):
            return None
        if isinstance(e, E.Load) and e.buffer not in self.readonly and not self._unwritten(e.buffer, kids[0]):
            return None
        return "C", with_children(e, kids)

    def _unwritten(self, buffer: str, index: E.Expr) -> bool:
        """No store of the stage can write the slot ``index`` (a key form) of `buffer`."""
        stores = self.slots.get(buffer)
        mine = linear(index, self.q)
        if not stores or mine is None or any(st is None for st in stores):
            return False
        s, o = mine
        return all(st[0] == s and 0 <= o < s and 0 <= st[1] < s and st[1] != o for st in stores)

    def _binop(self, e: E.BinOpExpr):
        a, b = self.of(e.left), self.of(e.right)
        if a is None or b is None:
            return None
        m = _lit(e.right)
        if a[0] == "C" and b[0] == "C":
            if e.op in (BinOp.Div, BinOp.Mod) and not (m or (isinstance(e.right, E.LitI32)
                                                              and e.right.value not in (0, -1))):
                if self.type_of is None or self.type_of(e.left) is not DataType.F32:
                    return None  # a division that may trap is never duplicated into a pre-pass
            return "C", with_children(e, [a[1], b[1]])
        if a[0] == "A" and b[0] == "C" and m and m % self.c == 0:
            k = m // self.c
            if e.op is BinOp.Div:
                return "C", (a[1] if k == 1 else _bin(BinOp.Div, a[1], E.LitU32(k)))
            if e.op is BinOp.Mod:
                return "A", _bin(BinOp.Mod, a[1], E.LitU32(k))
        if a[0] == "A" and e.op is BinOp.Sub and isinstance(e.right, E.BinOpExpr) and e.right.op is BinOp.Mul:
            bb, mm = e.right.left, _lit(e.right.right)
            if mm and mm % self.c == 0:
                k = mm // self.c
                fb = self.coarse(bb)
                if fb is not None and fb == (a[1] if k == 1 else _bin(BinOp.Div, a[1], E.LitU32(k))):
                    return "A", _bin(BinOp.Sub, a[1], _bin(BinOp.Mul, fb, E.LitU32(k)))
        return None


def conjuncts(e: E.Expr, env: dict) -> list:
    while isinstance(e, E.Var) and e.name in env:
        e = env[e.name]
    if isinstance(e, E.BinOpExpr) and e.op is BinOp.And:
        return conjuncts(e.left, env) + conjuncts(e.right, env)
    return [e]


def literal_limits(conds: list, env: dict) -> list[tuple[E.Expr, int]]:
    """``(X, N)`` for every conjunct ``X < N`` of `conds` (N a u32 literal), X with the pure lets
    of `env` resolved: the guard bounds the passes read (keys, workgroups, ids)."""
    return [(resolve(x.left, env), x.right.value) for c in conds for x in conjuncts(c, env)
            if isinstance(x, E.BinOpExpr) and x.op is BinOp.Lt and isinstance(x.right, E.LitU32)]


def key_bound(conds: list, kd: Keyed) -> Optional[int]:
    """The fewest keys the conditions allow: ``X < N`` with ``X`` = ``Q`` (N keys) or the id
    itself (ceil(N / c) keys); None when no condition bounds the key."""
    best = None
    for left, n in literal_limits(conds, kd.env):
        if n:
            r = kd.of(left)
            keys = n if r == ("C", kd.q) else -(-n // kd.c) if r == ("A", kd.q) else None
            if keys is not None:
                best = keys if best is None else min(best, keys)
    return best


__all__ = ["Keyed", "key_bound", "conjuncts", "linear", "literal_limits"]
