"""Speculative chains -> GLSL: a marked loop (vyre_vk.opt.speculate) runs its f32 chain in IEEE
arithmetic first, and again with the exact helpers only if that run saw a zero or subnormal.

Why that is the reference's bits: vyre_vk.ir.chains. The chain's add, sub and mul are one
``precise`` operation each plus an exponent check that no later operation waits for (a
running minimum of the results' exponent fields in the private ``vyre_sp_state``); its
division (where the device's fma is fused) is Markstein's correction with RN(1/b) from
ieee.py, signed (RN is symmetric, so the quotient's sign needs no extra step), its window
folded into the same check. The loop's first iteration runs exactly (then no carried value is
a constant a driver could fold, and Welford's first step, whose deltas are exact zeros, is not
speculated). After the loop, a minimum of 0 restores the carried values saved
before it and runs the loop with the exact helpers; otherwise the carried f32 values are
canonicalised (NaN payloads) and the exact loop is skipped.

    >>> "vyre_sp_state" in SPECULATIVE["vyre_sp_add"]
    True
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.chains import CHAIN_OPS, NO_PEEL, carried, chain_shape, chain_vars, loop_types, summands
from ..ir.optable import BinOp
from ..ir.types import DataType
from . import bounds
from .shared_rcp import SHARED_DIVISION, finish_sharing, start_sharing
from .spelling import VALUE_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from .stmts import StmtLowerer


def _checked(name: str, op: str) -> str:
    return (f"float {name}(float a, float b) {{ precise float r = a {op} b; "
            "vyre_sp_state = min(vyre_sp_state, floatBitsToUint(r) & 0x7F800000u); return r; }")


#: Helper name -> GLSL source (merged into the lowerer's table; the division only where fma is fused).
SPECULATIVE: dict[str, str] = {
    "vyre_sp_state": "uint vyre_sp_state;  // the smallest exponent field a speculative chain produced",
    "vyre_sp_add": _checked("vyre_sp_add", "+"),
    "vyre_sp_sub": _checked("vyre_sp_sub", "-"),
    "vyre_sp_mul": _checked("vyre_sp_mul", "*"),
    # A product of two values that are not the chain's (linear_relu's x[k] * w[k*N + i]) inside a
    # speculative loop: with canonical operands IEEE's a * b is vyre_fmul's bits unless the product
    # is subnormal (vyre flushes it) or NaN (vyre's one payload); zeros, their signs, infinities and
    # underflow to zero agree. Only those two fail the check, so data full of zeros re-runs nothing.
    # A product of two values that are not the chain's whose only use is as an operand of the chain's
    # add or sub (absorbing()): plain IEEE, unchecked; its loop re-runs below an exponent field of
    # ABSORB_FIELD instead of 0, and then the product cannot have changed the sum (see absorbing()).
    "vyre_sp_mulp": "float vyre_sp_mulp(float a, float b) { precise float r = a * b; return r; }",
    "vyre_sp_mulv": """float vyre_sp_mulv(float a, float b) {
    precise float r = a * b;
    uint u = floatBitsToUint(r), e = u & 0x7F800000u;
    vyre_sp_state = min(vyre_sp_state, ((u & 0x007FFFFFu) != 0u && (e == 0u || e == 0x7F800000u)) ? 0u : 0x7F800000u);
    return r;
}""",
}
SPECULATIVE_FUSED: dict[str, str] = {
    "vyre_sp_div": """float vyre_sp_div(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    float y = uintBitsToFloat(floatBitsToUint(vyre_rcp_rn(uintBitsToFloat(ub & 0x7FFFFFFFu))) | (ub & 0x80000000u));
    precise float q0 = a * y;
    precise float q1 = fma(fma(-q0, b, a), y, q0);
    vyre_sp_state = vyre_fdiv_window(ua, ub) ? vyre_sp_state : 0u;
    return q1;
}""",
    # b = float(x) for a u32 x: b is +0 or in [1, 2^32], so eb is 0 or in [127, 159], and then
    # 50 <= ea <= 252 implies vyre_fdiv_window (de = ea - eb in [-109, 125]); y needs no sign
    "vyre_sp_div_u": """float vyre_sp_div_u(float a, float b) {
    uint ua = floatBitsToUint(a);
    float y = vyre_rcp_rn(b);
    precise float q0 = a * y;
    precise float q1 = fma(fma(-q0, b, a), y, q0);
    vyre_sp_state = (((ua >> 23) & 0xFFu) - 50u <= 202u && b != 0.0) ? vyre_sp_state : 0u;
    return q1;
}""",
    **SHARED_DIVISION,  # the same with (RN(1/b), b) read from the workgroup's shared pairs
}


def value_products() -> bool:
    """Whether a speculative loop's products of values that are not its chain's use vyre_sp_mulv
    (by default; ``$VYRE_VK_SPEC_MULV=0`` turns it off). H100, pass_ab.py: linear_relu 0.477 -> 0.353 ms,
    mlp_backward 0.835 -> 0.602; H200 with absorbed products and the stream pass: mlp_backward 0.81 ->
    0.67, flash_attention unchanged (products a chain's add absorbs take vyre_sp_mulp, not this).

    >>> value_products() == (os.environ.get("VYRE_VK_SPEC_MULV") != "0")
    True
    """
    return os.environ.get("VYRE_VK_SPEC_MULV") != "0"


#: The smallest exponent field a loop with absorbed products accepts: |r| >= 2^-99 (absorbing()).
ABSORB_FIELD = 28


def absorbing() -> bool:
    """Whether a product of two values that are not the chain's, used directly as an operand of the
    chain's add or sub (linear_relu's ``acc + x[k] * w[k*N + i]``), is plain ``a * b``, unchecked
    (by default; ``$VYRE_VK_SPEC_ABSORB=0`` turns it off). H200, one pass_ab.py process each:
    flash_attention 0.469 -> 0.395 ms, mlp_backward 1.72 -> 1.09 (its inputs there; 0.827 -> 0.399 in
    ops.py with the stream pass and the first iterations peeled only where needed).

    Why the sum keeps the reference's bits: with canonical operands IEEE's product differs from
    vyre_fmul's only where it is subnormal (vyre flushes it to a signed zero) or NaN (a payload,
    which nothing observes: vyre_vk.ir.chains). Let s = RN(c + p) be the checked sum, c its chain
    operand. If |s| >= 2^-99 then |c| > 2^-100, so half the gap between c and its neighbours is at
    least 2^-125, more than any subnormal |p| < 2^-126: RN(c + p) = c = RN(c + 0), the exact sum. So
    the loop's check fails below an exponent field of ABSORB_FIELD instead of at zero, and the loop
    runs again exactly where a sum came that close to zero.

    >>> absorbing() == (os.environ.get("VYRE_VK_SPEC_ABSORB") != "0")
    True
    """
    return os.environ.get("VYRE_VK_SPEC_ABSORB") != "0"


def raw_loads() -> bool:
    """Whether a speculative loop's f32 storage loads whose values are only operands of the chain's adds
    and subs (ir.chains.summands: Welford's ``x - m1``) skip vyre_canon (by default;
    ``$VYRE_VK_SPEC_RAW=0`` turns it off). A NaN payload is unobserved (the carried values are
    canonicalised after the loop); a subnormal x, which the reference flushes to zero, changes no sum
    s = RN(c +- x) with |s| >= 2^-99 (absorbing()'s argument), so such a loop re-runs below
    ABSORB_FIELD too.

    >>> raw_loads() == (os.environ.get("VYRE_VK_SPEC_RAW") != "0")
    True
    """
    return os.environ.get("VYRE_VK_SPEC_RAW") != "0"


def state_count() -> int:
    """How many running minima a speculative loop's checks rotate through (``$VYRE_VK_SPEC_STATES``,
    1 to 8, default 1): one variable makes every checked operation wait for the previous check;
    K of them make K independent chains of minima, combined once after the loop.

    >>> 1 <= state_count() <= 8
    True
    """
    raw = os.environ.get("VYRE_VK_SPEC_STATES", "1")
    try:
        k = int(raw)
    except ValueError:
        k = 0
    if not 1 <= k <= 8:
        from ..errors import VyreError
        raise VyreError(f"VYRE_VK_SPEC_STATES={raw!r} is not a count from 1 to 8. "
                        "Fix: unset it (one state) or set it to 1..8.")
    return k


def unsigned_divisor_window() -> bool:
    """Whether a speculative division by a cast u32 uses the narrower window (vyre_sp_div_u): by
    default; ``$VYRE_VK_SPEC_DIV_U32=0`` turns it off. H100 (tools/bench/pass_ab.py --env, one
    process, bits compared first): reduce_variance 2^24 5.18 -> 4.48 ms; welford_chain.py's
    hand-written chain 4.07 -> 3.84 ms.

    >>> unsigned_divisor_window() == (os.environ.get("VYRE_VK_SPEC_DIV_U32") != "0")
    True
    """
    return os.environ.get("VYRE_VK_SPEC_DIV_U32") != "0"


_HELPER = {BinOp.Add: "vyre_sp_add", BinOp.Sub: "vyre_sp_sub", BinOp.Mul: "vyre_sp_mul", BinOp.Div: "vyre_sp_div"}
assert set(_HELPER) == set(CHAIN_OPS)
U32, F32 = DataType.U32, DataType.F32


class Speculation:
    """The chain being emitted speculatively (the expression layer asks it about each f32 operation)."""

    def __init__(self, chain: Optional[frozenset]):
        self.chain = chain  # None: every f32 operation (a stored value's), else the loop's chain variables
        self.div_u32 = unsigned_divisor_window()
        self.mulv = chain is not None and value_products()
        self.states = state_count() if chain is not None else 1
        self.site = 0  # checked operations emitted so far (site j uses state j mod states)
        self.absorb = chain is not None and absorbing()
        self.pending: Optional[E.Expr] = None  # the product operand being lowered plainly (absorbed_side)
        self.absorbed = False  # a product was emitted plainly: the loop's check uses ABSORB_FIELD
        self.shared = None  # shared_rcp.SharedDivisors of the loop being emitted, where sharing is on
        self.arg = ""  # a helper's extra argument (the shared pair), taken by the call's emitter
        self.raw: Optional[frozenset] = None  # names holding only chain add/sub operands (raw_loads(); None: off)
        self.raw_load: Optional[E.Load] = None  # the load being lowered without vyre_canon

    def raw_operand(self, e: E.Expr, x: E.Expr) -> bool:
        """Whether operand `x` of `e` is an f32 load that may skip vyre_canon: `e` is a chain add or sub."""
        return (self.raw is not None and isinstance(x, E.Load) and isinstance(e, E.BinOpExpr)
                and e.op in (BinOp.Add, BinOp.Sub) and chain_shape(e, self.chain))

    def absorbed_side(self, e: E.Expr) -> Optional[int]:
        """0 / 1 when `e` is a chain add / sub whose left / right operand is a product of values that
        are not the chain's (absorbing()), else None."""
        if not (self.absorb and isinstance(e, E.BinOpExpr) and e.op in (BinOp.Add, BinOp.Sub)
                and chain_shape(e, self.chain)):
            return None
        for side, x in enumerate((e.left, e.right)):
            if (isinstance(x, E.BinOpExpr) and x.op is BinOp.Mul and chain_shape(x, None)
                    and not chain_shape(x, self.chain)):
                return side
        return None

    def helper(self, e: E.BinOpExpr, table: dict, divisor_from: Callable[[], Optional[DataType]]) -> Optional[str]:
        """The speculative helper for `e` (its operands are f32), or None: the exact spelling.
        `divisor_from()`: the type a division's divisor was cast from (None: not a cast), asked only
        for a division whose divisor is a cast to f32."""
        name = _HELPER.get(e.op)
        if name not in table:
            return None
        if e is self.pending:  # absorbed by the chain's add (absorbed_side)
            self.pending, self.absorbed = None, True
            return "vyre_sp_mulp"
        if not chain_shape(e, self.chain):
            # a product of other values (a literal zero excluded, as chain_shape does: foldable)
            if self.mulv and e.op is BinOp.Mul and chain_shape(e, None):
                return self.rotated("vyre_sp_mulv", table)
            return None
        if (name == "vyre_sp_div" and self.div_u32 and "vyre_sp_div_u" in table and isinstance(e.right, E.Cast)
                and e.right.target is F32 and divisor_from() is U32):
            name = "vyre_sp_div_u"  # a divisor cast from u32: the narrower window
            j = self.shared.site(e.right.value) if self.shared is not None else None
            if j is not None:  # RN(1/b) computed by the workgroup's lanes (shared_rcp.py)
                name, self.arg = "vyre_sp_div_uy", f", {self.shared.array}[{j}]"
        return self.rotated(name, table)

    def take_arg(self) -> str:
        """The extra argument of the helper helper() just chose ("" if none), once."""
        arg, self.arg = self.arg, ""
        return arg

    def rotated(self, name: str, table: dict) -> str:
        """`name`, or with several states its copy that updates the next state (added to `table`)."""
        if self.states == 1:
            return name
        j = self.site % self.states
        self.site += 1
        copy = f"{name}_s{j}"
        if copy not in table:  # the state itself is declared by speculative_region
            table[copy] = table[name].replace(f"{name}(", f"{copy}(", 1).replace("vyre_sp_state", f"vyre_sp_state{j}")
        return copy


def scope_types(lw: "StmtLowerer") -> dict:
    """Every name in scope with its type (innermost binding wins)."""
    out: dict = {}
    for s in lw.scopes:
        out.update(s)
    return out


def _bound_var(lw: "StmtLowerer", name: str, code: str, interval, path: str) -> E.Var:
    """A u32 evaluated once into a GLSL temporary, usable as an IR variable (with its range)."""
    v = lw.declare(name, U32)
    if interval is not None:
        lw.iv[-1][bounds.var_key(v.name)] = interval
    lw.emit(f"uint {name} = {code};", path)
    return v


def speculative_store(lw: "StmtLowerer", n: N.Region, path: str) -> None:
    """A marked store: its value in IEEE f32, checked, again exactly if the check failed, stored once."""
    store = n.body[0]
    vp = path + ".region.body[0].value"
    lw.tmp += 1
    name = f"vk_spv{lw.tmp}"
    lw.emit(f"{{  // region {n.generator}: the stored value in IEEE f32, checked", path)
    lw.depth += 1
    lw.scopes.append({})
    lw.helpers.add("vyre_sp_state")
    lw.emit("vyre_sp_state = 0x7F800000u;", path)
    lw.spec = Speculation(None)
    fast, _ = lw.expr(store.value, vp)
    lw.spec = None
    lw.emit(f"float {name} = {fast};", path)
    exact, _ = lw.expr(store.value, vp)
    lw.emit(f"if (vyre_sp_state == 0u) {{ {name} = {exact}; }}  // a zero or subnormal: exactly", path)
    lw.stmt(N.Store(store.buffer, store.index, lw.declare(name, F32)), path + ".region.body[0]")
    lw.scopes.pop()
    lw.depth -= 1
    lw.emit("}", path)


def speculative_region(lw: "StmtLowerer", n: N.Region, path: str) -> None:
    """Emit a SPECULATE region: the first iteration exactly (its values are then run-time values,
    not constants a driver could fold, and Welford's first step, whose deltas are exact zeros, is
    not speculated), the rest checked, then the whole loop exactly again if the check failed."""
    loop = n.body[0]
    bp = path + ".region.body"
    env = scope_types(lw)
    spec = Speculation(chain_vars(loop, loop_types(loop, env, lw.decls)))
    if raw_loads():
        spec.raw = summands(loop.body, spec.chain)
    keep = [v for v in carried(loop) if v in env]
    f32 = [v for v in keep if v in spec.chain]  # canonicalised after a kept checked run
    chain = ", ".join(lw.var[v] for v in f32)  # GLSL names: safe in a comment
    lw.emit(f"{{  // region {n.generator}: chain {chain} in IEEE f32, checked", path)
    lw.depth += 1
    lw.scopes.append({})
    lw.iv.append({})
    lw.tmp += 1
    k = lw.tmp
    lo_r, hi_r = lw.interval(loop.from_), lw.interval(loop.to)
    lo = _bound_var(lw, f"vk_splo{k}", lw.expr(loop.from_, path + ".from")[0], lo_r, path)
    hi = _bound_var(lw, f"vk_sphi{k}", lw.expr(loop.to, path + ".to")[0], hi_r, path)
    peel = n.source_region != NO_PEEL  # opt.speculate.unpeeled: the loop starts no chain from a literal
    pe = lo
    if peel:
        pe = _bound_var(lw, f"vk_sppe{k}", f"vk_sphi{k} > vk_splo{k} ? vk_splo{k} + 1u : vk_splo{k}",
                        (lo_r[0], hi_r[1]) if lo_r and hi_r else None, path)
    saved = {v: f"vk_sv{k}_{i}" for i, v in enumerate(keep)}
    for v, s in saved.items():
        lw.emit(f"{VALUE_TYPE[env[v]]} {s} = {lw.var[v]};", path)
    if peel:
        lw.stmt(N.Loop(loop.var, lo, pe, loop.body), bp + "[0]")
    states = ["vyre_sp_state"] if spec.states == 1 else [f"vyre_sp_state{j}" for j in range(spec.states)]
    if spec.states > 1:  # declared here; Speculation.rotated's copies of the helpers update them
        for j, st in enumerate(states):
            lw.table[st] = f"uint {st};  // running minimum {j} of a speculative loop's checks"
    for st in states:
        lw.helpers.add(st)
        lw.emit(f"{st} = 0x7F800000u;", path)
    spec.shared = start_sharing(lw, loop, k, set(env) | {loop.var})
    depth = lw.depth
    lw.spec = spec
    lw.stmt(N.Loop(loop.var, pe, hi, loop.body), bp + "[0]")
    lw.spec = None
    if spec.shared is not None:
        finish_sharing(lw, spec.shared, depth, path)
    low = states[0]
    for st in states[1:]:
        low = f"min({low}, {st})"
    cond, why = ((f"{low} < {ABSORB_FIELD << 23:#010x}u",
                  "a chain value below 2^-99 (an absorbed product or unflushed load may have mattered), zero or subnormal")
                 if spec.absorbed else (f"{low} == 0u", "a chain value was zero or subnormal"))
    lw.emit(f"if ({cond}) {{  // {why}: the loop again, exactly", path)
    lw.depth += 1
    for v, s in saved.items():
        lw.emit(f"{lw.var[v]} = {s};", path)
    lw.stmt(N.Loop(loop.var, lo, hi, loop.body), bp + "[0]")
    lw.depth -= 1
    if f32:
        lw.helpers.add("vyre_canon")
        lw.emit("} else {", path)
        for v in f32:
            lw.emit(f"    {lw.var[v]} = vyre_canon({lw.var[v]});", path)
    lw.emit("}", path)
    lw.iv.pop()
    lw.scopes.pop()
    lw.depth -= 1
    lw.emit("}", path)
