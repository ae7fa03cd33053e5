"""Value ranges of u32 index expressions, so loads that provably stay inside their buffer
skip the bounds clamp.

The lowering normally reads through ``vk_ld_<buf>(i)``: clamp i into the bound array, load,
then select 0 when i was out of range (vyre's OOB rule). On the H200 that costs the seed op's
fission stage 3.6x (1.03 ms vs 0.29 ms, tools/bench/seed_schedules.py): the compiler no
longer sees affine addresses. When the index's largest value is below the buffer's declared
count the load is in bounds on every device and in the reference, because the runtime
refuses any bound array shorter than its declaration (runtime/inputs.py), so the plain load
is the same value.

Ranges are closed intervals [lo, hi] of u32 values, only ever narrowed by facts that hold
for every execution: literals, never-assigned ``let``s, loop variables (bounds known),
``gid < c`` style guards of an enclosing ``if`` (then: hi, else: lo; a variable known to be a
multiple of m, :func:`stride`, narrowed to multiples), and u32 +, -, *, /, %, &, >>, min, max
that provably do not wrap. Anything else is unknown (None).
"""
from __future__ import annotations

import math
from typing import Optional

from ..ir import expr as E

U32_MAX = 0xFFFFFFFF
Interval = tuple[int, int]


def gid_key(axis: int) -> str:
    """The key under which a refined range of gl_GlobalInvocationID.<axis> is kept."""
    return f"<gid.{axis}>"


def lid_key(axis: int) -> str:
    """The key of gl_LocalInvocationID.<axis>'s range (0 .. workgroup size - 1)."""
    return f"<lid.{axis}>"


def var_key(name: str) -> str:
    """The key of variable `name`'s range. Any string is a valid name, so one starting with "<" gets
    one more "<": variable keys then never equal a gid key ("<g..."), and stay distinct."""
    return "<" + name if name.startswith("<") else name


def stride_key(name: str) -> str:
    """The key under which variable `name`'s stride is kept, as the interval (m, m): every value of
    it is a multiple of m. "<%" is no var_key's prefix (those start "<<" when they start "<")."""
    return "<%" + name


def stride(e: E.Expr, env) -> int:
    """A power of two m that every value of u32 expression `e` is a multiple of. Powers of two only:
    they divide 2^32, so a product or sum that wraps keeps the property. A workgroup's first id,
    ``gl_WorkGroupID.x * 32``, is a multiple of 32, so ``g < 16384`` bounds it by 16352 and
    ``g + 31`` stays below 16384.

    >>> stride(E.BinOpExpr(E.BinOp.Mul, E.WorkgroupId(0), E.LitU32(32)), {}.get)
    32
    >>> stride(E.BinOpExpr(E.BinOp.Mul, E.WorkgroupId(0), E.LitU32(24)), {}.get)  # 8, not 24
    8
    """
    t = type(e)
    if t is E.LitU32:
        return e.value & -e.value or 1 << 32
    if t is E.Var:
        m = env(stride_key(e.name))
        return m[0] if m else 1
    if t is E.BinOpExpr and e.op is E.BinOp.Mul:
        return min(stride(e.left, env) * stride(e.right, env), 1 << 32)
    if t is E.BinOpExpr and e.op in (E.BinOp.Add, E.BinOp.Sub):
        return math.gcd(stride(e.left, env), stride(e.right, env))
    return 1


def key_of(e: E.Expr, assigned: set) -> Optional[str]:
    if isinstance(e, E.InvocationId):
        return gid_key(e.axis)
    if isinstance(e, E.Var) and e.name not in assigned:
        return var_key(e.name)
    return None


def interval(e: E.Expr, env) -> Optional[Interval]:
    """[lo, hi] of u32 expression `e`; `env(name)` gives a variable's known interval or None."""
    t = type(e)
    if t is E.LitU32:
        return (e.value, e.value)
    if t is E.Var:
        return env(var_key(e.name))
    if t is E.InvocationId:
        return env(gid_key(e.axis)) or (0, U32_MAX)
    if t is E.LocalId:
        return env(lid_key(e.axis))
    if t is not E.BinOpExpr:
        return None
    op = e.op
    a = interval(e.left, env)
    if a is None:
        return None
    if op in (E.BinOp.Div, E.BinOp.Mod, E.BinOp.BitAnd, E.BinOp.Shr) and isinstance(e.right, E.LitU32):
        c = e.right.value
        if op is E.BinOp.Div:
            return (a[0] // c, a[1] // c) if c else None
        if op is E.BinOp.Mod:
            return (0, min(a[1], c - 1)) if c else None
        if op is E.BinOp.BitAnd:
            return (0, min(a[1], c))
        return (a[0] >> c, a[1] >> c) if c < 32 else None
    b = interval(e.right, env)
    if b is None:
        return None
    if op in (E.BinOp.Add, E.BinOp.WrappingAdd):
        r = (a[0] + b[0], a[1] + b[1])
    elif op in (E.BinOp.Sub, E.BinOp.WrappingSub):
        r = (a[0] - b[1], a[1] - b[0])
    elif op is E.BinOp.Mul:
        r = (a[0] * b[0], a[1] * b[1])
    elif op is E.BinOp.Min:
        r = (min(a[0], b[0]), min(a[1], b[1]))
    elif op is E.BinOp.Max:
        r = (max(a[0], b[0]), max(a[1], b[1]))
    elif op in (E.BinOp.BitXor, E.BinOp.BitOr):  # no bit above the wider operand's highest
        r = (0, (1 << max(a[1], b[1]).bit_length()) - 1)
    else:
        return None
    return r if 0 <= r[0] <= r[1] <= U32_MAX else None  # a wrap anywhere: unknown


_FLIPPED = {E.BinOp.Gt: E.BinOp.Lt, E.BinOp.Ge: E.BinOp.Le}


def _as_less(cond: E.BinOpExpr) -> Optional[tuple]:
    """(Lt or Le, left, right) of a comparison written with <, <=, > or >=; else None."""
    op, left, right = cond.op, cond.left, cond.right
    if op in _FLIPPED:  # a > b  ==  b < a
        op, left, right = _FLIPPED[op], right, left
    return (op, left, right) if op in (E.BinOp.Lt, E.BinOp.Le) else None


def decided(cond: E.Expr, env) -> Optional[bool]:
    """True or False when the u32 comparison `cond` (or an ``and`` of them) has that value in every
    execution, by the ranges `env` knows; else None. A guard the ranges already prove (an unrolled
    block's ``idx < n`` inside a loop whose bounds imply it) then costs no branch.

    >>> env = {"i": (0, 99)}.get
    >>> decided(E.BinOpExpr(E.BinOp.Lt, E.Var("i"), E.LitU32(100)), env), decided(E.BinOpExpr(E.BinOp.Ge, E.Var("i"), E.LitU32(100)), env)
    (True, False)
    >>> decided(E.BinOpExpr(E.BinOp.Lt, E.Var("i"), E.LitU32(50)), env) is None
    True
    """
    if not isinstance(cond, E.BinOpExpr):
        return None
    op = cond.op
    if op is E.BinOp.And:
        a, b = decided(cond.left, env), decided(cond.right, env)
        return False if False in (a, b) else (True if a is True and b is True else None)
    less = _as_less(cond)
    if less is None:
        return None
    op, left, right = less
    la, ra = interval(left, env), interval(right, env)
    if la is None or ra is None:
        return None
    if la[1] < ra[0] or (op is E.BinOp.Le and la[1] <= ra[0]):
        return True
    if la[0] > ra[1] or (op is E.BinOp.Lt and la[0] >= ra[1]):
        return False
    return None


def refinements(cond: E.Expr, env, assigned: set, taken: bool) -> dict[str, Interval]:
    """Narrowed intervals that hold inside the then-branch (`taken`) or else-branch of `if cond`."""
    out: dict[str, Interval] = {}
    if not isinstance(cond, E.BinOpExpr):
        return out
    op = cond.op
    if op is E.BinOp.And and taken:  # both sides hold in the then-branch
        out.update(refinements(cond.left, env, assigned, True))
        for k, v in refinements(cond.right, env, assigned, True).items():
            out[k] = (max(out[k][0], v[0]), min(out[k][1], v[1])) if k in out else v
        return out
    less = _as_less(cond)
    if less is None:
        return out
    op, left, right = less
    # left < right (or <=): in the then-branch left.hi <= right.hi - 1, right.lo >= left.lo + 1;
    # in the else-branch left >= right: left.lo >= right.lo, right.hi <= left.hi.
    strict = 1 if op is E.BinOp.Lt else 0
    la, ra = interval(left, env), interval(right, env)
    lk, rk = key_of(left, assigned), key_of(right, assigned)
    if lk and ra:
        cur = interval(left, env) or (0, U32_MAX)
        new = (cur[0], min(cur[1], ra[1] - strict)) if taken else (max(cur[0], ra[0] + (1 - strict)), cur[1])
        m = stride(left, env) if isinstance(left, E.Var) else 1
        if 1 < m < 1 << 32:  # a multiple of m: the ends move in to multiples
            new = (-(-new[0] // m) * m, new[1] // m * m)
        if new[0] <= new[1]:
            out[lk] = new
    if rk and la:
        cur = interval(right, env) or (0, U32_MAX)
        new = (max(cur[0], la[0] + strict), cur[1]) if taken else (cur[0], min(cur[1], la[1] - (1 - strict)))
        if new[0] <= new[1]:
            out[rk] = new
    # x + c < right (the stream pass's `t + 1 < tiles`): x < right - c, where x + c cannot wrap (la known)
    if (taken and la and ra and isinstance(left, E.BinOpExpr) and left.op is E.BinOp.Add
            and isinstance(left.right, E.LitU32)):
        xk = key_of(left.left, assigned)
        cur = interval(left.left, env)
        if xk and cur and xk not in out:
            new = (cur[0], min(cur[1], ra[1] - strict - left.right.value))
            if new[0] <= new[1]:
                out[xk] = new
    return out
