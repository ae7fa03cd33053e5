"""exp and tanh in float64, for devices whose shaderFloat64 is enabled and probed.

The reference rounds float64 libm results once to f32 (``optable._via64``). ffmath.py gets
within ~2^-44 of that in pairs of floats: ~60 dependent f32 operations and two lookups in a
64-entry table, which NVIDIA serves from constant memory one distinct address at a time.
In float64 the same result takes one Cody-Waite reduction and a degree-13 Horner polynomial
(relative error below 2^-50, so the f32 rounding differs from the reference's only when the
exact value lies within 2^-50 of a rounding boundary: rarer than ffmath's 2^-44), and no table.

exp(x) = p(r) * 2^n with n = roundEven(x / ln2), r = x - n*ln2 (ln2 in a 32-bit head, so
n*head is exact for |n| < 2^21, and a tail), |r| <= ln2/2, p the Taylor polynomial to r^13
(remainder < 2^-57). The f32 rounding of the double is done by the conversion, except at the
two ends where the reference's rounding is spelled out: from (2^128 - 2^103) up it is +inf, and
below FLT_MIN it is FLT_MIN from FLT_MIN - 2^-150 (the tie rounds to the even FLT_MIN) and 0
below (subnormals flush, as canon() does).

tanh(|x|) = m / (m + 2) with m = expm1(2|x|) = 2^n (e^r - 1) + (2^n - 1), r and n as for exp,
e^r - 1 = r*q(r) (q the same series over (k+1)!, no cancellation), 2^n - 1 exact, one fma: one
branch-free path (the last version branched at ln2/2, and a warp of mixed arguments ran both). The quotient is
m times a reciprocal from an f32 seed and two Newton steps in double (error ~2^-50): GPUs divide
doubles in a long subroutine, and Vulkan does not require the division to be correctly rounded.

An IR Fma (``vyre_fma_f64``) is rounded once in double: a*b is exact there, TwoSum gives the
error of the double sum, which decides the f32 rounding only where the sum sits on an f32
midpoint; results below FLT_MIN and near 2^128 are spelled out as for exp. Without a fused fma it
replaces the split helper (off by an ULP or a zero's sign for products below ~2^-100); with one, it
takes the results ieee.FUSED's fast path leaves (zeros, subnormals, specials).

Which devices take this path is decided by ``lower(..., float64=True)``'s caller:
vyre_vk.runtime.probes checks these very helpers against the reference at device open.
Constants are bit patterns (tests/lower/test_ffmath64.py recomputes them).
"""
from __future__ import annotations

import math
import struct
from fractions import Fraction

from .ffmath import EXP_HI, EXP_LO, tanh_glsl


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _head(x: float, bits: int) -> float:
    """x rounded to `bits` significant bits (toward zero)."""
    m, e = math.frexp(x)
    return math.ldexp(math.floor(m * (1 << bits)), e - bits)


_LN2 = Fraction(6931471805599453094172321214581765680755, 10 ** 40)  # ln 2 to 40 digits
LN2_HI = _head(float(_LN2), 32)
LN2_LO = float(_LN2 - Fraction(LN2_HI))
LOG2E = 1.0 / math.log(2.0)
#: 1/k! for k = 0..13, each rounded once from the exact rational.
INV_FACT = tuple(float(Fraction(1, math.factorial(k))) for k in range(14))
#: the f32 rounding boundaries of exp's result (see the module's notes).
TO_INF = math.ldexp(1.0, 128) - math.ldexp(1.0, 103)
FLT_MIN = math.ldexp(1.0, -126)
TO_FLT_MIN = FLT_MIN - math.ldexp(1.0, -150)
HALF_LN2 = 0.34657359027997264


def _d(x: float) -> str:
    b = _bits(x)
    return f"packDouble2x32(uvec2(0x{b & 0xFFFFFFFF:08X}u, 0x{b >> 32:08X}u))"


def _horner(var: str, coeffs: tuple[float, ...]) -> str:
    """fma-Horner over coeffs (highest degree first) as one GLSL expression."""
    text = _d(coeffs[0])
    for c in coeffs[1:]:
        text = f"fma({text}, {var}, {_d(c)})"
    return text


#: GLSL helpers replacing ffmath's vyre_exp / vyre_tanh (merged by the lowering like ieee.FUSED).
GLSL: dict[str, str] = {
    # exp(r) for |r| <= ln2/2 + tiny, and (exp(r) - 1) / r: the two Taylor polynomials.
    "vyre_exp64": f"""double vyre_exp64(double x) {{
    double n = roundEven(x * {_d(LOG2E)});
    double r = (x - n * {_d(LN2_HI)}) - n * {_d(LN2_LO)};
    return ldexp({_horner("r", INV_FACT[::-1])}, int(n));
}}""",
    # one path for every x >= 0 (no branch for a warp to diverge on): e^x - 1 = 2^n (e^r - 1) + (2^n - 1),
    # e^r - 1 = r q(r) without cancellation, 2^n - 1 exact; n = 0 is the small-x series itself
    "vyre_expm1_64": f"""double vyre_expm1_64(double x) {{
    double n = roundEven(x * {_d(LOG2E)});
    double r = (x - n * {_d(LN2_HI)}) - n * {_d(LN2_LO)};
    double s = ldexp(1.0LF, int(n));
    return fma(s, r * {_horner("r", INV_FACT[1:][::-1])}, s - 1.0LF);
}}""",
    "vyre_exp": f"""float vyre_exp(float x) {{
    if (vyre_isnan(x)) return x;
    if (x >= {EXP_HI:.1f}) return uintBitsToFloat(0x7F800000u);
    if (x <= {EXP_LO:.1f}) return 0.0;
    double y = vyre_exp64(double(x));
    if (y >= {_d(TO_INF)}) return uintBitsToFloat(0x7F800000u);
    if (y < {_d(FLT_MIN)}) return y >= {_d(TO_FLT_MIN)} ? uintBitsToFloat(0x00800000u) : 0.0;
    return float(y);
}}""",
    # An IR Fma rounded once, exactly: a*b is exact in double; s = p + c rounds at 53 bits and
    # TwoSum gives its error, which decides only where s sits on an f32 midpoint (elsewhere s and
    # the exact sum round alike). Results below FLT_MIN and from 2^128 - 2^103 up are spelled out
    # as for exp. Zero, infinite and NaN operands are decided first, as in the split helper.
    "vyre_fma_f64": f"""float vyre_fma_f64(float a, float b, float c) {{
    if (vyre_isnan(a) || vyre_isnan(b) || vyre_isnan(c)) return uintBitsToFloat(0x7FC00000u);
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b), uc = floatBitsToUint(c), ps = (ua ^ ub) & 0x80000000u;
    if ((ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u) {{
        if (vyre_isinf(a) || vyre_isinf(b)) return uintBitsToFloat(0x7FC00000u);
        return (uc & 0x7FFFFFFFu) == 0u ? uintBitsToFloat(ps & uc) : c;
    }}
    if (vyre_isinf(a) || vyre_isinf(b)) {{
        if (vyre_isinf(c) && (uc & 0x80000000u) != ps) return uintBitsToFloat(0x7FC00000u);
        return uintBitsToFloat(ps | 0x7F800000u);
    }}
    if (vyre_isinf(c)) return c;
    precise double p = double(a) * double(b);
    precise double cc = double(c);
    precise double s = p + cc;
    precise double bp = s - p;
    precise double err = (p - (s - bp)) + (cc - bp);
    if (s == 0.0LF) return 0.0;  // an exact cancellation (p is not zero): +0
    uint sign = s < 0.0LF ? 0x80000000u : 0u;
    bool away = err != 0.0LF && (err > 0.0LF) == (s > 0.0LF);  // the exact sum is beyond |s|
    double m = abs(s);
    if (m > {_d(TO_INF)} || (m == {_d(TO_INF)} && (away || err == 0.0LF))) return uintBitsToFloat(sign | 0x7F800000u);
    if (m < {_d(FLT_MIN)})
        return uintBitsToFloat(sign | ((m > {_d(TO_FLT_MIN)} || (m == {_d(TO_FLT_MIN)} && (away || err == 0.0LF))) ? 0x00800000u : 0u));
    uvec2 w = unpackDouble2x32(s);
    if (err == 0.0LF || (w.x & 0x1FFFFFFFu) != 0x10000000u) return float(s);
    uint mag = ((((w.y >> 20) & 0x7FFu) - 896u) << 23) | ((w.y & 0xFFFFFu) << 3) | (w.x >> 29);  // |s| truncated
    return uintBitsToFloat(sign | (away ? mag + 1u : mag));
}}""",
    # an IR Fma; where fma() is fused, ieee.FUSED's vyre_fma replaces it and hands what its fast path
    # leaves (results below FLT_MIN, specials) to vyre_fma_split
    "vyre_fma": "float vyre_fma(float a, float b, float c) { return vyre_fma_f64(a, b, c); }",
    "vyre_fma_split": "float vyre_fma_split(float a, float b, float c) { return vyre_fma_f64(a, b, c); }",
    "vyre_tanh": tanh_glsl("""
double m = vyre_expm1_64(2.0LF * double(ax));
double d = m + 2.0LF;
double y = double(1.0 / float(d));  // ~2^-21; two Newton steps: ~2^-42, then double's own rounding
y = fma(y, fma(-d, y, 1.0LF), y);
y = fma(y, fma(-d, y, 1.0LF), y);
t = float(m * y);
"""),
}
