"""GLSL source of every helper function the spelling table (spelling.py) names.

The lowering emits the helpers a shader uses and, transitively, the helpers those call,
each after what it calls, in this table's order (glsl.py, ``helper_order``).
"""
from __future__ import annotations

from . import ffmath, ieee

#: Helper name -> GLSL source. `vyre_trap(code)` is provided by the lowering itself (glsl.py):
#: it records a trap in a flag buffer so the runtime can raise, as the reference does.
#:
#: Float classification is done on the bit pattern, never with isnan()/abs() compares: a
#: driver may flush subnormals in compares or assume no NaNs, and the canonical form is a
#: bit-level contract (NaN -> 0x7FC00000, subnormal -> signed zero).
GLSL_HELPERS: dict[str, str] = {
    "vyre_isnan": "bool vyre_isnan(float x) { uint b = floatBitsToUint(x); "
                  "return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu) != 0u; }",
    "vyre_isinf": "bool vyre_isinf(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) == 0x7F800000u; }",
    "vyre_isfinite": "bool vyre_isfinite(float x) { return (floatBitsToUint(x) & 0x7F800000u) != 0x7F800000u; }",
    "vyre_canon": """float vyre_canon(float x) {
    uint b = floatBitsToUint(x);
    uint e = b & 0x7F800000u;
    if (e == 0u) return uintBitsToFloat(b & 0x80000000u);
    if (e == 0x7F800000u && (b & 0x007FFFFFu) != 0u) return uintBitsToFloat(0x7FC00000u);
    return x;
}""",
    # Zero operands are spelled out with bit tests: lavapipe folds `x + 0.0` to x, `0.0 - x`
    # to -x, `x * 0.0` to 0.0 and `0.0 / x` to 0.0 when the zero is a compile-time
    # constant, `precise` notwithstanding (wrong for x = -0, NaN, +-inf; found by tools/fuzz).
    # vyre_fzsum: the exact result of a + b when it is a zero (both zero, or x + -x).
    "vyre_fzsum": """bool vyre_fzsum(uint ua, uint ub) {
    return ((ua | ub) & 0x7FFFFFFFu) == 0u || ((ua ^ ub) == 0x80000000u && (ua & 0x7F800000u) != 0x7F800000u);
}""",
    "vyre_fadd": """float vyre_fadd(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    if (vyre_fzsum(ua, ub)) return uintBitsToFloat(ua & ub & 0x80000000u);
    precise float r = a + b; return vyre_canon(r);
}""",
    "vyre_fsub": """float vyre_fsub(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b) ^ 0x80000000u;
    if (vyre_fzsum(ua, ub)) return uintBitsToFloat(ua & ub & 0x80000000u);
    precise float r = a - b; return vyre_canon(r);
}""",
    "vyre_fmul": """float vyre_fmul(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    if ((ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u) {
        if (!vyre_isfinite(a) || !vyre_isfinite(b)) return uintBitsToFloat(0x7FC00000u);
        return uintBitsToFloat((ua ^ ub) & 0x80000000u);
    }
    precise float r = a * b; return vyre_canon(r);
}""",
    # vyre_fdiv and vyre_sqrt_rn live in ieee.py: correctly rounded in integers, special
    # operands by their bits (Vulkan lets drivers be 2.5/3 ULP off, NVIDIA is, and lavapipe
    # folds a division by a constant zero to 0.0, found by tools/fuzz). Results are canonical.
    "vyre_frcp": "float vyre_frcp(float a) { return vyre_fdiv(1.0, a); }",
    # two roundings, as the reference's 1 / sqrt(a)
    "vyre_rsqrt": "float vyre_rsqrt(float a) { return vyre_fdiv(1.0, vyre_sqrt_rn(a)); }",
    # Vulkan lets fma() round twice (its precision is "inherited from OpFMul then OpFAdd"),
    # and lavapipe does. So: exact product a*b = p + e (Veltkamp/Dekker), exact p + c = s + t
    # (TwoSum), result s + (t + e). Exact in the cancellation cases that tell fused from
    # unfused; otherwise at most 1 ULP from a single rounding. Falls back to fma() when
    # an intermediate overflows (|a| or |b| above ~1e34).
    # Zero, infinite and NaN operands are decided up front (exactly, with bit tests): the
    # split below loses NaN and the sign of zero, and lavapipe folds `0.0 * x` (see vyre_fmul).
    # Where a*b is below ~2^-100 the error term e underflows: an ULP off, or a zero's sign
    # (tools/bench/fma_edges.py). A device with float64 runs ffmath64's exact vyre_fma_f64 instead.
    "vyre_fma": """float vyre_fma(float a, float b, float c) {
    if (vyre_isnan(a) || vyre_isnan(b) || vyre_isnan(c)) return uintBitsToFloat(0x7FC00000u);
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b), uc = floatBitsToUint(c), ps = (ua ^ ub) & 0x80000000u;
    if ((ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u) {  // the product is an exact +-0 (or 0 * inf)
        if (vyre_isinf(a) || vyre_isinf(b)) return uintBitsToFloat(0x7FC00000u);
        return (uc & 0x7FFFFFFFu) == 0u ? uintBitsToFloat(ps & uc) : c;
    }
    if (vyre_isinf(a) || vyre_isinf(b)) {  // the product is +-inf
        if (vyre_isinf(c) && (uc & 0x80000000u) != ps) return uintBitsToFloat(0x7FC00000u);
        return uintBitsToFloat(ps | 0x7F800000u);
    }
    if (vyre_isinf(c)) return c;  // the exact product of finite a, b never overflows
    float p, e, s, t;
    vyre_two_prod(a, b, p, e);
    vyre_two_sum(p, c, s, t);
    precise float r = s + (t + e);
    precise float ta = 4097.0 * a, tb = 4097.0 * b;  // two_prod's split, overflowed?
    if (!vyre_isfinite(ta) || !vyre_isfinite(tb) || !vyre_isfinite(s) || !vyre_isfinite(r)) {
        precise float f = fma(a, b, c);
        r = f;
    }
    // an exact zero: +0 from cancellation (c != 0), the product's sign if it underflowed (c == +-0)
    if ((floatBitsToUint(r) & 0x7FFFFFFFu) == 0u) return uintBitsToFloat((uc & 0x7FFFFFFFu) == 0u ? ps : 0u);
    return vyre_canon(r);
}""",
    "vyre_select": "\n".join(f"{t} vyre_select(bool c, {t} a, {t} b) {{ return c ? a : b; }}"
                             for t in ("uint", "int", "float", "bool")),
    # |x| = (4k + quad) * pi/2 + r, |r| <= pi/4. Payne-Hanek: a 96-bit window of 2/pi's bits
    # (table: 2/pi to 320 bits after two zero words) times the 24-bit mantissa gives x*2/pi
    # mod 4 with 94 fraction bits; the fraction's top 64 bits, normalised, times pi/2 in two
    # parts. Exact enough for every f32 (its worst case sits ~2^-30 from a multiple of pi/2).
    "vyre_trig_reduce": """float vyre_trig_reduce(float ax, out uint quad) {
    quad = 0u;
    if ((floatBitsToUint(ax) & 0x7F800000u) == 0x7F800000u) return uintBitsToFloat(0x7FC00000u);  // inf, NaN
    if (ax < 0.78539816) return ax;
    const uint T[12] = uint[](0u, 0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,
                              0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u);
    uint bits = floatBitsToUint(ax);
    int start = int((bits >> 23) & 0xFFu) - 88;  // first window bit - 1: (exponent - 150) + 62
    uint m = (bits & 0x7FFFFFu) | 0x800000u;
    int q = start >> 5;
    int sh = start & 31;
    uint u0 = T[q], u1 = T[q + 1], u2 = T[q + 2];
    if (sh != 0) {
        u0 = (u0 << sh) | (u1 >> (32 - sh));
        u1 = (u1 << sh) | (u2 >> (32 - sh));
        u2 = (u2 << sh) | (T[q + 3] >> (32 - sh));
    }
    uint hi2, lo2, hi1, lo1, hi0, lo0, carry;
    umulExtended(m, u2, hi2, lo2);
    umulExtended(m, u1, hi1, lo1);
    umulExtended(m, u0, hi0, lo0);
    uint w1 = uaddCarry(hi2, lo1, carry);
    uint w2 = hi1 + lo0 + carry;
    quad = w2 >> 30;
    uint hi = (w2 << 2) | (w1 >> 30), lo = (w1 << 2) | (lo2 >> 30);
    bool neg = (hi >> 31) != 0u;  // fraction >= 1/2: round to the next quadrant, r < 0
    if (neg) {
        quad = (quad + 1u) & 3u;
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0u ? 1u : 0u);
    }
    int e = 0;
    if (hi == 0u) { hi = lo; lo = 0u; e = 32; }
    if (hi == 0u) return 0.0;
    int lz = 31 - findMSB(hi);
    if (lz > 0) { hi = (hi << lz) | (lo >> (32 - lz)); lo = lo << lz; }
    float scale = ldexp(1.0, -32 - (e + lz));
    precise float a = float(hi & 0xFFFFFF00u) * scale;
    precise float b = (float(hi & 0xFFu) + float(lo) * 2.3283064365386963e-10) * scale;
    precise float r = fma(a, 1.5707963705062866, fma(a, -4.371139000186241e-08, b * 1.5707963705062866));
    return neg ? -r : r;
}""",
    # Cephes sinf/cosf minimax polynomials on [-pi/4, pi/4] (about 1 ULP).
    "vyre_sin_poly": """float vyre_sin_poly(float r) {
    precise float z = r * r;
    precise float p = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
    return p;
}""",
    "vyre_cos_poly": """float vyre_cos_poly(float r) {
    precise float z = r * r;
    precise float p = (1.0 - 0.5 * z) + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3
                                                                           + z * 2.443315711809948e-5));
    return p;
}""",
    "vyre_sin": """float vyre_sin(float x) {
    uint ix = floatBitsToUint(x), quad;
    float r = vyre_trig_reduce(uintBitsToFloat(ix & 0x7FFFFFFFu), quad);
    float s = (quad & 1u) == 0u ? vyre_sin_poly(r) : vyre_cos_poly(r);
    if (quad >= 2u) s = -s;
    return (ix >> 31) != 0u ? -s : s;
}""",
    "vyre_cos": """float vyre_cos(float x) {
    uint ix = floatBitsToUint(x), quad;
    float r = vyre_trig_reduce(uintBitsToFloat(ix & 0x7FFFFFFFu), quad);
    float c = (quad & 1u) == 0u ? vyre_cos_poly(r) : vyre_sin_poly(r);
    return (quad == 1u || quad == 2u) ? -c : c;
}""",
    "vyre_tan": """float vyre_tan(float x) {
    uint ix = floatBitsToUint(x), quad;
    float r = vyre_trig_reduce(uintBitsToFloat(ix & 0x7FFFFFFFu), quad);
    float s = vyre_sin_poly(r), c = vyre_cos_poly(r);
    float t = (quad & 1u) == 0u ? s / c : -c / s;
    return (ix >> 31) != 0u ? -t : t;
}""",
    # musl acosf (rational approximation R(z), split pi/2); asin via acos for |x| >= 0.5.
    "vyre_asin_r": """float vyre_asin_r(float z) {
    precise float p = z * (1.6666586697e-01 + z * (-4.2743422091e-02 + z * -8.6563630030e-03));
    precise float q = 1.0 + z * -7.0662963390e-01;
    return p / q;
}""",
    "vyre_acos": """float vyre_acos(float x) {
    const float pio2_hi = 1.5707962513e+00, pio2_lo = 7.5497894159e-08;
    uint hx = floatBitsToUint(x), ix = hx & 0x7FFFFFFFu;
    if (ix >= 0x3F800000u) {
        if (ix == 0x3F800000u) return (hx >> 31) != 0u ? 2.0 * pio2_hi : 0.0;
        return uintBitsToFloat(0x7FC00000u);
    }
    if (ix < 0x3F000000u) {
        if (ix <= 0x32800000u) return pio2_hi;
        precise float r = pio2_hi - (x - (pio2_lo - x * vyre_asin_r(x * x)));
        return r;
    }
    if ((hx >> 31) != 0u) {
        precise float z = (1.0 + x) * 0.5;
        precise float s = sqrt(z);
        precise float w = vyre_asin_r(z) * s - pio2_lo;
        precise float r = 2.0 * (pio2_hi - (s + w));
        return r;
    }
    precise float z = (1.0 - x) * 0.5;
    precise float s = sqrt(z);
    precise float df = uintBitsToFloat(floatBitsToUint(s) & 0xFFFFF000u);
    precise float c = (z - df * df) / (s + df);
    precise float w = vyre_asin_r(z) * s + c;
    precise float r = 2.0 * (df + w);
    return r;
}""",
    "vyre_asin": """float vyre_asin(float x) {
    const float pio2_hi = 1.5707962513e+00, pio2_lo = 7.5497894159e-08;
    uint ix = floatBitsToUint(x) & 0x7FFFFFFFu;
    if (ix >= 0x3F000000u) {
        precise float r = pio2_hi - (vyre_acos(abs(x)) - pio2_lo);
        return ix > 0x3F800000u ? r : (x < 0.0 ? -r : r);
    }
    if (ix < 0x39800000u) return x;
    precise float r = x + x * vyre_asin_r(x * x);
    return r;
}""",
    # Near 0 the builtins lose relative accuracy; Taylor terms are exact to < 1e-11 there.
    "vyre_atan": """float vyre_atan(float x) {
    if (abs(x) >= 0.125) return atan(x);
    precise float z = x * x;
    precise float r = x - x * z * (1.0 / 3.0 - z * (0.2 - z * (1.0 / 7.0 - z * (1.0 / 9.0))));
    return r;
}""",
    "vyre_sinh": """float vyre_sinh(float x) {
    if (abs(x) >= 0.125) return sinh(x);
    precise float z = x * x;
    precise float r = x + x * z * (1.0 / 6.0 + z * (1.0 / 120.0 + z * (1.0 / 5040.0)));
    return r;
}""",
    "vyre_div_u32": "uint vyre_div_u32(uint a, uint b) { return b == 0u ? 0xFFFFFFFFu : a / b; }",
    "vyre_mod_u32": "uint vyre_mod_u32(uint a, uint b) { return b == 0u ? 0u : a % b; }",
    "vyre_div_i32": """int vyre_div_i32(int a, int b) {
    if (b == 0 || (a == int(0x80000000u) && b == -1)) { vyre_trap(1u); return 0; }
    return a / b;
}""",
    "vyre_mod_i32": """int vyre_mod_i32(int a, int b) {
    if (b == 0 || (a == int(0x80000000u) && b == -1)) { vyre_trap(1u); return 0; }
    return a - (a / b) * b;
}""",
    "vyre_rotl": "uint vyre_rotl(uint a, uint b) { uint s = b & 31u; return (a << s) | (a >> ((32u - s) & 31u)); }",
    "vyre_rotr": "uint vyre_rotr(uint a, uint b) { uint s = b & 31u; return (a >> s) | (a << ((32u - s) & 31u)); }",
    "vyre_truthy": "bool vyre_truthy(bool x) { return x; }\nbool vyre_truthy(uint x) { return x != 0u; }",
    "vyre_and": "bool vyre_and(bool a, bool b) { return a && b; }",
    "vyre_or": "bool vyre_or(bool a, bool b) { return a || b; }",
    # min/max(+-0, -+0) is the first operand, as the reference's: decided by bits, because
    # NVIDIA's compiler turns `b < a ? b : a` into its min instruction, which orders -0 < +0.
    "vyre_fzeros": "bool vyre_fzeros(float a, float b) { return ((floatBitsToUint(a) | floatBitsToUint(b)) & 0x7FFFFFFFu) == 0u; }",
    "vyre_fmin": """float vyre_fmin(float a, float b) {
    return vyre_isnan(a) ? b : (vyre_isnan(b) || vyre_fzeros(a, b) ? a : (b < a ? b : a));
}""",
    "vyre_fmax": """float vyre_fmax(float a, float b) {
    return vyre_isnan(a) ? b : (vyre_isnan(b) || vyre_fzeros(a, b) ? a : (a < b ? b : a));
}""",
    "vyre_absdiff": "uint vyre_absdiff(uint a, uint b) { return a > b ? a - b : b - a; }",
    "vyre_sat_add": "uint vyre_sat_add(uint a, uint b) { uint s = a + b; return s < a ? 0xFFFFFFFFu : s; }",
    "vyre_sat_sub": "uint vyre_sat_sub(uint a, uint b) { return a < b ? 0u : a - b; }",
    "vyre_sat_mul": """uint vyre_sat_mul(uint a, uint b) {
    uint hi, lo; umulExtended(a, b, hi, lo); return hi != 0u ? 0xFFFFFFFFu : lo;
}""",
    "vyre_mulhi": "uint vyre_mulhi(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }",
    "vyre_clz": "uint vyre_clz(uint x) { return x == 0u ? 32u : uint(31 - findMSB(x)); }",
    "vyre_ctz": "uint vyre_ctz(uint x) { return x == 0u ? 32u : uint(findLSB(x)); }",
    "vyre_round": """float vyre_round(float x) {
    precise float r = trunc(x);
    precise float d = abs(x - r);
    if (d >= 0.5) r += sign(x);
    return vyre_canon(r);
}""",
    # On the bits: a compiler may turn the compare chain into its own fsign, which gives -0.
    "vyre_sign": """float vyre_sign(float x) {
    uint b = floatBitsToUint(x);
    if (vyre_isnan(x)) return x;
    if ((b & 0x7FFFFFFFu) == 0u) return 0.0;
    return (b & 0x80000000u) != 0u ? -1.0 : 1.0;
}""",
    "vyre_f32_truthy": "bool vyre_f32_truthy(float x) { return vyre_isnan(x) || x != 0.0; }",
    "vyre_f32_to_u32": """uint vyre_f32_to_u32(float x) {
    if (vyre_isnan(x) || x <= 0.0) return 0u;
    if (x >= 4294967296.0) return 0xFFFFFFFFu;
    return uint(x);
}""",
    "vyre_f32_to_i32": """int vyre_f32_to_i32(float x) {
    if (vyre_isnan(x)) return 0;
    if (x >= 2147483648.0) return 0x7FFFFFFF;
    if (x <= -2147483648.0) return int(0x80000000u);
    return int(x);
}""",
    **ffmath.GLSL,  # exp, tanh: float-float, correctly rounded but for ~1 in 10^7 (see ffmath)
    **ieee.GLSL,  # division, sqrt: correctly rounded in integer arithmetic (see ieee)
}
#: ieee.FUSED's vyre_fma hands the results it does not take to this one.
GLSL_HELPERS["vyre_fma_split"] = GLSL_HELPERS["vyre_fma"].replace("float vyre_fma(", "float vyre_fma_split(", 1)

#: Latency-bound stages (few invocations, long serial loops: the optimiser's fold chains, GEMV
#: rows) take these instead: the same results, with selects where the table above returns early.
#: On the H200 a chain step through the branchy helpers paid their branch latency (rms_norm's
#: fold 0.45 -> 0.31 ms, reduce_variance 21.9 -> 15.4), while throughput-bound kernels run the
#: branchy ones faster (newton_schulz 0.39 vs 0.55 ms branch-free): vyre_vk.compile picks per stage.
BRANCHLESS: dict[str, str] = {
    "vyre_canon": """float vyre_canon(float x) {
    uint b = floatBitsToUint(x);
    uint e = b & 0x7F800000u;
    uint nan = (e == 0x7F800000u && (b & 0x007FFFFFu) != 0u) ? 0x7FC00000u : b;
    return uintBitsToFloat(e == 0u ? (b & 0x80000000u) : nan);
}""",
    "vyre_fadd": """float vyre_fadd(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    precise float r = a + b;
    float c = vyre_canon(r);
    return vyre_fzsum(ua, ub) ? uintBitsToFloat(ua & ub & 0x80000000u) : c;
}""",
    "vyre_fsub": """float vyre_fsub(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b) ^ 0x80000000u;
    precise float r = a - b;
    float c = vyre_canon(r);
    return vyre_fzsum(ua, ub) ? uintBitsToFloat(ua & ub & 0x80000000u) : c;
}""",
    "vyre_fmul": """float vyre_fmul(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    precise float r = a * b;
    float c = vyre_canon(r);
    bool zero = (ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u;
    uint z = (!vyre_isfinite(a) || !vyre_isfinite(b)) ? 0x7FC00000u : ((ua ^ ub) & 0x80000000u);
    return zero ? uintBitsToFloat(z) : c;
}""",
}
