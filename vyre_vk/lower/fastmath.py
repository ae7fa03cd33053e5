"""The fast precision's helper sources (``Options(precision="fast")``): PyTorch-class rounding, opt-in.

Exact mode (the default) keeps the reference's bits: every f32 add, subtract and multiply is a
``precise`` operation (never contracted into an fma with a neighbour) followed by canonicalisation
(NaN -> 0x7FC00000, subnormal -> signed zero), and division, square root, exp and tanh are
correctly rounded or evaluated in double (ieee.py, ffmath.py, ffmath64.py). In fast mode:

* f32 add, subtract and multiply are plain GLSL operators: the driver may contract ``a*b + c``
  into one fma (one rounding instead of two), and nothing is canonicalised (NaN payloads and
  subnormals are the hardware's); an IR ``Fma`` is the builtin ``fma()``;
* division (and reciprocal), square root (and inverse square root), exp and tanh are the device's
  builtins where the native-math probe (vyre_vk.runtime.native_math) measured them within vyre's
  own windows on this device, :data:`NATIVE_WINDOW_ULP`; a function outside its window keeps the
  exact helper, so fast mode is never less accurate than that window allows.

Integer operations are spelled as in exact mode: integer results stay exact in every mode.

Example::

    >>> sorted(fast_table(("exp",)))[:4]
    ['vyre_canon', 'vyre_exp', 'vyre_fadd', 'vyre_fma']
"""
from __future__ import annotations

from typing import Iterable

from vyre_vk.errors import VyreError

#: Largest error, in ULPs of the float64 result rounded to f32, at which a device's builtin is used:
#: vyre's windows, 4 ULP for elementary operations and 128 for transcendentals.
NATIVE_WINDOW_ULP = {"div": 4, "sqrt": 4, "exp": 128, "tanh": 128}
NATIVE_FUNCS = tuple(sorted(NATIVE_WINDOW_ULP))

#: Always in fast mode: uncontracted, uncanonicalised f32 arithmetic.
FAST_HELPERS: dict[str, str] = {
    "vyre_canon": "float vyre_canon(float x) { return x; }",
    "vyre_fadd": "float vyre_fadd(float a, float b) { return a + b; }",
    "vyre_fsub": "float vyre_fsub(float a, float b) { return a - b; }",
    "vyre_fmul": "float vyre_fmul(float a, float b) { return a * b; }",
    "vyre_fma": "float vyre_fma(float a, float b, float c) { return fma(a, b, c); }",
}

#: Per native function: the helpers it replaces with the device's builtin.
NATIVE_HELPERS: dict[str, dict[str, str]] = {
    # Vulkan bounds OpFDiv at 2.5 ULP only for |b| in [2^-126, 2^126] (NVIDIA computes a * rcp(b):
    # 2^127 / 2^127 is 0 there); outside it, and for NaN or infinite b, the exact helper
    "div": {"vyre_fdiv": """float vyre_fdiv(float a, float b) {
    float d = abs(b);
    if (d >= 1.17549435e-38 && d <= 8.50705917e37) return a / b;
    return vyre_fdiv_exact(a, b);
}"""},
    "sqrt": {"vyre_sqrt_rn": "float vyre_sqrt_rn(float a) { return sqrt(a); }",
             "vyre_rsqrt": "float vyre_rsqrt(float a) { return inversesqrt(a); }"},
    "exp": {"vyre_exp": "float vyre_exp(float x) { return exp(x); }"},
    "tanh": {"vyre_tanh": "float vyre_tanh(float x) { return tanh(x); }"},
}


class NativeMathError(VyreError, ValueError):
    """A native-math list names a function fast mode does not have."""


def check_native(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` as a sorted tuple of known native functions; NativeMathError naming an unknown one."""
    out = tuple(sorted(set(names)))
    unknown = [n for n in out if n not in NATIVE_WINDOW_ULP]
    if unknown:
        raise NativeMathError(f"no native function named {unknown}. Fix: use some of {list(NATIVE_FUNCS)}.")
    return out


def fast_table(native: Iterable[str] = ()) -> dict[str, str]:
    """The helper sources fast mode puts over the exact ones, with the builtins of ``native``."""
    table = dict(FAST_HELPERS)
    for name in check_native(native):
        table.update(NATIVE_HELPERS[name])
    return table


__all__ = ["FAST_HELPERS", "NativeMathError", "NATIVE_FUNCS", "NATIVE_HELPERS", "NATIVE_WINDOW_ULP", "check_native", "fast_table"]
