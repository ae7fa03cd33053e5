"""Correctly rounded f32 division and square root, from integer arithmetic.

The reference divides and takes square roots in IEEE float32 (one rounding to nearest
even). Vulkan allows 2.5 ULP for ``x / y`` and 3 ULP for ``sqrt``; lavapipe's are exact,
NVIDIA's are not (1/0.49999997 gives 2.0, not 2.0000002), and after a cancellation
(1 - sigmoid, softmax normalisation) a 1-ULP quotient became thousands of bit-ULPs on the
H200. A float-only fix (one Newton step from the driver's quotient) still needs a division
for the correction and fails exactly where it matters, on quotients next to a rounding
midpoint. So the lowering computes both in integers: 25 quotient (root) bits by restoring
long division (digit-by-digit square root) of the 24-bit significands, a sticky bit from
the remainder, and round to nearest even -- the textbook hardware algorithm, 25 steps.

Results below FLT_MIN are what the reference's canonicalisation makes of the IEEE result:
signed zero, or FLT_MIN when the subnormal result rounds up to it. Zero, infinite and NaN
operands are decided from their bits too: the driver's `/` is not exact even there (NVIDIA
computes inf / FLT_MAX as inf * rcp(FLT_MAX) = inf * 0 = NaN).

On a device whose ``fma()`` is fused (probed when the device opens: vyre_vk.runtime.probes),
:data:`FUSED` replaces ``vyre_fdiv`` by a fast path for operands whose quotient and residuals
stay normal (Markstein's correction, checked against the integer algorithm in
tests/lower/test_ieee_fused.py): y ~ 1/|b| from the driver (any error under 2^-20),
q0 = |a| y, r0 = fma(-q0, |b|, |a|), q1 = fma(r0, y, q0) (within one ULP of |a/b|), then the
exact residuals r1 = |a| - q1 |b| and r2 of q1's neighbour towards |a/b|; the one with the
smaller residual is nearer (a binary quotient is never a midpoint). Other operands take the
integer algorithm (``vyre_fdiv_int``). About 12 instructions instead of 25 long-division steps.
It also replaces Veltkamp's split in ``vyre_two_prod`` (exp, tanh: ffmath.py) by one fma, and
an IR ``Fma`` by the device's ``fma()`` wherever the result is normal (the general helper takes
the rest; tests/lower/test_ieee_fused.py checks both against the reference).
"""
from __future__ import annotations

#: GLSL helpers, merged into helpers.GLSL_HELPERS (each after what it calls).
GLSL: dict[str, str] = {
    # q: 25 significant bits (bit 24 set) of a value q * 2^-24 * 2^(e - 127); the result
    # rounded to 24 bits, nearest even, with `sticky` for the bits below q.
    "vyre_round_pack": """float vyre_round_pack(uint s, int e, uint q, bool sticky) {
    uint m = q >> 1;
    bool to_min = e == 0 && m == 0xFFFFFFu;  // >= FLT_MIN - 2^-150: the subnormal rounds up to FLT_MIN
    if ((q & 1u) != 0u && (sticky || (m & 1u) != 0u)) {
        m += 1u;
        if (m == 0x1000000u) { m = 0x800000u; e += 1; }
    }
    if (e >= 255) return uintBitsToFloat(s | 0x7F800000u);
    if (e <= 0) return uintBitsToFloat(s | (to_min ? 0x00800000u : 0u));
    return uintBitsToFloat(s | (uint(e) << 23) | (m & 0x7FFFFFu));
}""",
    # the lowering's f32 `/` (BinOp.Div), and through it Reciprocal and InverseSqrt
    "vyre_fdiv": """float vyre_fdiv(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    uint ea = (ua >> 23) & 0xFFu, eb = (ub >> 23) & 0xFFu;
    uint s = (ua ^ ub) & 0x80000000u;
    // specials by their bits (NVIDIA's inf / FLT_MAX is NaN: inf * rcp(FLT_MAX) = inf * 0);
    // exponent 0 is a zero: values are canonical, subnormals flushed
    if (vyre_isnan(a) || vyre_isnan(b) || (ea == 255u && eb == 255u) || (ea == 0u && eb == 0u)) return uintBitsToFloat(0x7FC00000u);
    if (ea == 255u || eb == 0u) return uintBitsToFloat(s | 0x7F800000u);
    if (ea == 0u || eb == 255u) return uintBitsToFloat(s);
    uint am = (ua & 0x7FFFFFu) | 0x800000u, bm = (ub & 0x7FFFFFu) | 0x800000u;
    int e = int(ea) - int(eb) + 127;
    if (am < bm) { am <<= 1; e -= 1; }  // am / bm in [1, 2)
    uint q = 0u;
    for (int i = 0; i < 25; i++) {  // am < 2 bm <= 2^25 throughout
        q <<= 1;
        if (am >= bm) { am -= bm; q |= 1u; }
        am <<= 1;
    }
    return vyre_round_pack(s, e, q, am != 0u);
}""",
    "vyre_sqrt_rn": """float vyre_sqrt_rn(float a) {
    uint ua = floatBitsToUint(a);
    uint ea = (ua >> 23) & 0xFFu;
    if (ea == 0u) return uintBitsToFloat(ua & 0x80000000u);  // sqrt(-0) = -0
    if (vyre_isnan(a) || (ua & 0x80000000u) != 0u) return uintBitsToFloat(0x7FC00000u);
    if (ea == 255u) return a;  // +inf
    uint am = (ua & 0x7FFFFFu) | 0x800000u;
    int e = int(ea) - 127;
    // x = significand * 2^25 (2^26 for an odd exponent, made even): 49-50 bits as xh:xl
    uint xh = am >> 7, xl = am << 25;
    if ((e & 1) != 0) { xh = am >> 6; xl = am << 26; e -= 1; }
    uint root = 0u, rem = 0u;
    for (int i = 24; i >= 0; i--) {  // two bits of x per step; rem <= 2 root < 2^26
        uint pair = i >= 16 ? (xh >> uint(2 * i - 32)) & 3u : (xl >> uint(2 * i)) & 3u;
        rem = (rem << 2) | pair;
        uint trial = (root << 2) | 1u;
        root <<= 1;
        if (rem >= trial) { rem -= trial; root |= 1u; }
    }
    return vyre_round_pack(0u, (e >> 1) + 127, root, rem != 0u);
}""",
}


#: Fast-path window (biased exponents): |a| >= 2^-77 keeps every residual's last bit normal,
#: 2 <= eb <= 252 keeps 1/|b| normal, the exponent difference keeps q1 and its neighbours normal.
FAST_DIV_MIN_EA, FAST_DIV_EB = 50, (2, 252)
FAST_DIV_DIFF = (-124, 125)

#: Helpers for a device whose fma() is fused (vyre_vk.runtime.probes.fma_probe).
GLSL["vyre_fdiv_int"] = GLSL["vyre_fdiv"].replace("float vyre_fdiv(", "float vyre_fdiv_int(", 1)
FUSED: dict[str, str] = {
    # An IR Fma: the device's single rounding is the reference's (fma_f32) whenever the result is
    # a finite normal. (A hardware FLT_MIN is right whether it flushes before or after rounding:
    # either way the exact value is at least FLT_MIN - 2^-151, which the reference rounds up.)
    # Zeros, subnormals, infinities and NaN take vyre_fma_split: ffmath64's exact double fma where
    # the device has float64, else the general split helper (helpers.py's vyre_fma). 4 operations
    # instead of ~40 on the common path, and exact where the split's error term underflows
    # (products below ~2^-100).
    "vyre_fma": """float vyre_fma(float a, float b, float c) {
    precise float r = fma(a, b, c);
    uint e = floatBitsToUint(r) & 0x7F800000u;
    if (e != 0u && e != 0x7F800000u) return r;
    return vyre_fma_split(a, b, c);
}""",
    # TwoProduct with one fma instead of Veltkamp's split (ffmath.py): the same exact error term
    # (a*b = p + e, no overflow or underflow), 2 operations instead of 17.
    "vyre_two_prod": """void vyre_two_prod(float a, float b, out float p, out float e) {
    precise float pp = a * b;
    precise float pe = fma(a, b, -pp);
    p = pp; e = pe;
}""",
    # y = RN(1/d) for a positive normal d whose reciprocal is normal: the driver's 1/d (within a
    # few ULP), one Newton step (within one ULP), then the nearer of it and its neighbour by exact
    # residuals (fma is fused: the residuals of a value within one ULP of 1/d are representable)
    "vyre_rcp_rn": """float vyre_rcp_rn(float d) {
    precise float y0 = 1.0 / d;
    precise float y1 = fma(fma(-d, y0, 1.0), y0, y0);
    precise float e1 = fma(-d, y1, 1.0);
    uint uy = floatBitsToUint(y1);
    uint un = e1 > 0.0 ? uy + 1u : uy - 1u;  // the neighbour on 1/d's side
    precise float e2 = fma(-uintBitsToFloat(un), d, 1.0);
    return uintBitsToFloat((e1 != 0.0 && abs(e2) < abs(e1)) ? un : uy);
}""",
    # the fast path's window (FAST_DIV_*), on the operands' bits
    "vyre_fdiv_window": f"""bool vyre_fdiv_window(uint ua, uint ub) {{
    uint ea = (ua >> 23) & 0xFFu, eb = (ub >> 23) & 0xFFu;
    int de = int(ea) - int(eb);
    return ea >= {FAST_DIV_MIN_EA}u && ea <= 254u && eb >= {FAST_DIV_EB[0]}u && eb <= {FAST_DIV_EB[1]}u
        && de >= {FAST_DIV_DIFF[0]} && de <= {FAST_DIV_DIFF[1]};
}}""",
    "vyre_fdiv": """float vyre_fdiv(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    bool fast = vyre_fdiv_window(ua, ub);
    // straight-line (no branch around it). y = RN(1/|b|) (vyre_rcp_rn) depends on b alone, so in a
    // chain that divides a running value (Welford's delta / n) it is computed off the chain. With y
    // correctly rounded, Markstein's correction step makes q1 the correctly rounded quotient: three
    // dependent operations on the dividend's side.
    float x = uintBitsToFloat(ua & 0x7FFFFFFFu), d = uintBitsToFloat(ub & 0x7FFFFFFFu);
    float y = vyre_rcp_rn(d);
    precise float q0 = x * y;
    precise float q1 = fma(fma(-q0, d, x), y, q0);
    float q = uintBitsToFloat(floatBitsToUint(q1) | ((ua ^ ub) & 0x80000000u));
    if (!fast) q = vyre_fdiv_int(a, b);
    return q;
}""",
}
