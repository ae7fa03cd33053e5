"""The native-math probe: how far the device's builtin division, square root, exp and tanh are
from the correctly rounded result, which decides the builtins the fast precision may use.

GLSL leaves their precision to the driver (Vulkan allows 2.5 ULP for division, exp within
3 + 2|x| ULP, tanh inherited from its exp formula: lavapipe's is 144 ULP near 0). Fast mode
(vyre_vk/lower/fastmath.py) uses a builtin only where this probe measured it within vyre's window
(:data:`~vyre_vk.lower.fastmath.NATIVE_WINDOW_ULP`). The probe's program is lowered in the fast
precision with every builtin, so it measures exactly what fast-mode kernels run. Its arguments
cover each function's range: quotients and roots over the whole normal exponent range (and
|b| > 2^126, where Vulkan leaves division unbounded), exp over
[-87, 88] (results normal), tanh over N(0, 3) and tiny arguments. The error of a result is its
distance from float64's result rounded to f32, in ULPs of that value, results below FLT_MIN on
either side taken as signed zeros, as the reference's canonicalisation makes them (vyre_vk.ulps).

>>> a, b = native_cases()
>>> a.size == b.size == NATIVE_PROBE_CASES
True
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vyre_vk import spirv
from vyre_vk.lower.fastmath import NATIVE_FUNCS, NATIVE_WINDOW_ULP
from vyre_vk.ulps import worst_by_block

if TYPE_CHECKING:
    import kp

#: Arguments per function (four functions, one dispatch).
PER_FUNC = 1024
NATIVE_PROBE_CASES = PER_FUNC * len(NATIVE_FUNCS)


@dataclass(frozen=True)
class NativeMathProbe:
    """The largest error, in ULPs, of each builtin over the probe's arguments (fields in
    NATIVE_FUNCS order: div, exp, sqrt, tanh)."""
    div: int
    exp: int
    sqrt: int
    tanh: int

    @property
    def allowed(self) -> tuple[str, ...]:
        """The builtins within their windows: what ``DeviceLimits.native_math`` gets."""
        return tuple(f for f in NATIVE_FUNCS if getattr(self, f) <= NATIVE_WINDOW_ULP[f])

    def __str__(self) -> str:
        parts = ", ".join(f"{f} {getattr(self, f)} ULP ({'native' if f in self.allowed else 'exact helper'})"
                          for f in NATIVE_FUNCS)
        return f"native-math probe: {parts}"


def native_program():
    """``q[i] = f_k(a[i], b[i])`` for the k-th block of PER_FUNC arguments, k over NATIVE_FUNCS."""
    from vyre_vk.ir import BinOp, BufferAccess, BufferDecl, DataType, Expr, Node, Program, UnOp

    f32, i = DataType.F32, Expr.var("i")
    a, b = Expr.load("a", i), Expr.load("b", i)
    values = {"div": Expr.binop(BinOp.Div, a, b), "exp": Expr.unop(UnOp.Exp, a),
              "sqrt": Expr.unop(UnOp.Sqrt, a), "tanh": Expr.unop(UnOp.Tanh, a)}
    value = values[NATIVE_FUNCS[-1]]
    for k in range(len(NATIVE_FUNCS) - 2, -1, -1):
        value = Expr.select(Expr.lt(i, Expr.u32((k + 1) * PER_FUNC)), values[NATIVE_FUNCS[k]], value)
    return Program.wrapped(
        [BufferDecl.storage("a", 0, BufferAccess.ReadOnly, f32).with_count(NATIVE_PROBE_CASES),
         BufferDecl.storage("b", 1, BufferAccess.ReadOnly, f32).with_count(NATIVE_PROBE_CASES),
         BufferDecl.output("q", 2, f32).with_count(NATIVE_PROBE_CASES)],
        (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.lt(i, Expr.u32(NATIVE_PROBE_CASES)), [Node.store("q", i, value)])])


def native_cases() -> tuple[np.ndarray, np.ndarray]:
    """The probe's arguments ``(a, b)``, PER_FUNC per function in NATIVE_FUNCS order."""
    rng = np.random.default_rng(20261205)
    n = PER_FUNC

    def spread(k: int) -> np.ndarray:  # significands 1..2, exponents over the normal range (-120..120)
        return (rng.uniform(1.0, 2.0, k) * 2.0 ** rng.integers(-120, 121, k)).astype(np.float32)

    sign = lambda k: np.where(rng.integers(0, 2, k) == 1, 1.0, -1.0).astype(np.float32)  # noqa: E731
    div_a, div_b = spread(n) * sign(n), spread(n) * sign(n)
    # the last sixteenth: |b| above 2^126, where Vulkan does not bound division (fast mode's guard)
    big = n // 16
    div_b[-big:] = (rng.uniform(1.0, 2.0, big) * 2.0 ** 127).astype(np.float32) * sign(big)
    div_a[-big:] = (rng.uniform(1.0, 2.0, big) * 2.0 ** rng.integers(100, 128, big)).astype(np.float32)
    exp_a = rng.uniform(-87.0, 88.0, n).astype(np.float32)
    sqrt_a = spread(n)
    tiny = (rng.uniform(1.0, 2.0, n // 4) * 2.0 ** rng.integers(-30, -3, n // 4)).astype(np.float32) * sign(n // 4)
    tanh_a = np.concatenate([tiny, (rng.standard_normal(n - n // 4) * 3.0).astype(np.float32)])
    ones = np.ones(n, np.float32)
    return (np.concatenate([div_a, exp_a, sqrt_a, tanh_a]), np.concatenate([div_b, ones, ones, ones]))


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64's results rounded once to f32: the values the builtins are measured against."""
    x, y = a.astype(np.float64), b.astype(np.float64)
    fns = {"div": lambda: x / y, "exp": lambda: np.exp(x), "sqrt": lambda: np.sqrt(x), "tanh": lambda: np.tanh(x)}
    with np.errstate(all="ignore"):  # each function runs over every block; only its own is kept
        full = {f: fns[f]() for f in NATIVE_FUNCS}
        block = np.arange(a.size) // PER_FUNC
        return np.choose(block, [full[f] for f in NATIVE_FUNCS]).astype(np.float32)


@functools.lru_cache(maxsize=1)
def native_spirv() -> bytes:
    """SPIR-V of the probe's program in the fast precision with every builtin (fastmath.py)."""
    from vyre_vk.lower import lower

    low = lower(native_program(), fast=True, native_math=NATIVE_FUNCS)
    return spirv.compile_glsl(low.glsl, name="vyre-vk-native-math-probe.comp", target_env=low.target_env)


def measure(got: np.ndarray) -> NativeMathProbe:
    """The probe's verdict on the dispatch's results ``got``."""
    worst = worst_by_block(got, expected(*native_cases()), NATIVE_FUNCS, PER_FUNC)
    return NativeMathProbe(*(worst[f] for f in NATIVE_FUNCS))


def native_math_probe(mgr: "kp.Manager") -> NativeMathProbe:
    """Dispatch the probe on ``mgr``'s device and measure its builtins."""
    from vyre_vk.runtime.probes import _dispatch

    a, b = native_cases()
    return measure(_dispatch(mgr, native_spirv(), [a, b]))


__all__ = ["NATIVE_PROBE_CASES", "NativeMathProbe", "PER_FUNC", "expected", "measure", "native_cases",
           "native_math_probe", "native_program", "native_spirv"]
