"""exp and tanh in float-float arithmetic: the GLSL the lowering emits for UnOp.Exp/Tanh.

The reference computes transcendentals in float64 and rounds once (``optable._via64``),
i.e. correctly rounded f32 results in all but astronomically rare cases. Drivers' exp()
and tanh() are not (lavapipe's exp is ~17 ULP off on [-20, 20]), and ops that cancel
after them -- gelu's ``1 + tanh(u)`` for u << 0, ``1 - sigmoid(g)``, attention's
``sum p_j v_j`` over zero-mean v -- turn a 1-ULP difference into thousands of bit-ULPs.
So both functions are evaluated here with ~44 bits (pairs of floats), using only f32
add/sub/mul, which Vulkan requires to be correctly rounded, under ``precise`` so no
compiler fuses them; division is only a first guess that a residual step corrects, so
its 2.5-ULP Vulkan precision does not matter. The result is then rounded once: it is the
reference's value except when the exact result lies within ~2^-44 of a rounding boundary
(1 element in 8 million on the sweeps in tests/lower/test_ffmath.py, off by 1 ULP).

exp(x): n = round(x * 64/ln2), r = x - n*ln2/64 with ln2/64 in four parts (three of 10
bits so n*part is exact for |n| < 2^14, one of 24), exp(r) = 1 + r + r^2/2 + ... with
r^2 exact (Dekker) and the tail in f32, times 2^(j/64) from a table of (hi, lo) pairs,
times 2^k (n = 64k + j). tanh(|x|) = (e - 1) / (e + 1) with e = exp(2|x|) as a pair.

Constants are stored as bit patterns (a decimal literal could round twice in the GLSL
compiler); tests/lower/test_ffmath.py recomputes every one of them from ln 2.
"""
from __future__ import annotations

#: ln2/64 = C1 + C2 + C3 + C4 (C1..C3 have 10 significant bits, C4 24).
EXP_LN2_64 = (0x3C314000, 0x37484000, 0x31FEC000, 0x2CE8E7BC)
#: 64/ln2 rounded to f32.
EXP_INV_LN2_64 = 0x42B8AA3B
#: 2^(j/64) = hi + lo, j = 0..63 (hi the f32 nearest, lo the f32 nearest the rest).
EXP_TABLE_HI = (
    0x3F800000, 0x3F8164D2, 0x3F82CD87, 0x3F843A29, 0x3F85AAC3, 0x3F871F62, 0x3F88980F, 0x3F8A14D5,
    0x3F8B95C2, 0x3F8D1ADF, 0x3F8EA43A, 0x3F9031DC, 0x3F91C3D3, 0x3F935A2B, 0x3F94F4F0, 0x3F96942D,
    0x3F9837F0, 0x3F99E046, 0x3F9B8D3A, 0x3F9D3EDA, 0x3F9EF532, 0x3FA0B051, 0x3FA27043, 0x3FA43516,
    0x3FA5FED7, 0x3FA7CD94, 0x3FA9A15B, 0x3FAB7A3A, 0x3FAD583F, 0x3FAF3B79, 0x3FB123F6, 0x3FB311C4,
    0x3FB504F3, 0x3FB6FD92, 0x3FB8FBAF, 0x3FBAFF5B, 0x3FBD08A4, 0x3FBF179A, 0x3FC12C4D, 0x3FC346CD,
    0x3FC5672A, 0x3FC78D75, 0x3FC9B9BE, 0x3FCBEC15, 0x3FCE248C, 0x3FD06334, 0x3FD2A81E, 0x3FD4F35B,
    0x3FD744FD, 0x3FD99D16, 0x3FDBFBB8, 0x3FDE60F5, 0x3FE0CCDF, 0x3FE33F89, 0x3FE5B907, 0x3FE8396A,
    0x3FEAC0C7, 0x3FED4F30, 0x3FEFE4BA, 0x3FF28177, 0x3FF5257D, 0x3FF7D0DF, 0x3FFA83B3, 0x3FFD3E0C,
)
EXP_TABLE_LO = (
    0x00000000, 0xB1C43FD0, 0xB34EA7A9, 0xB2F14C87, 0x334F9891, 0xB352C2E6, 0xB37EDA4B, 0x336A92DE,
    0xB260ABA1, 0x3336FCB7, 0xB3697465, 0x330628CD, 0x33675624, 0x32BC4F9C, 0xB32E0212, 0x32DC8061,
    0x33231B71, 0xB359BE90, 0xB30C5563, 0xB331A601, 0x33412342, 0x31FB9715, 0x30C3125A, 0xB323EC33,
    0xB32C9D5E, 0xB3162D36, 0xB3162B08, 0xB314AD82, 0xB22DEAF6, 0xB3252DEB, 0xB37C5AA8, 0x32154889,
    0x32CFE77A, 0xB266B974, 0x330EC5F7, 0xB31BD983, 0xB3414FE8, 0xB3130B1A, 0xB2D6663E, 0xB2976DA2,
    0x320AA837, 0xB2DD5119, 0xB37323A2, 0xB006C6C2, 0x3228FC24, 0xB2944353, 0xB35C1DAA, 0xB3286024,
    0xB2D4A58A, 0xB2F61D41, 0xB3504A1C, 0xB37B43E3, 0xB21EAB59, 0x33657D15, 0xB2441BE6, 0x33207898,
    0xB24116DE, 0x3276CCA1, 0xB348464A, 0x32F167FF, 0x32292436, 0x336615A2, 0xB2923758, 0x31CF486C,
)
#: exp() is +inf from here up and 0 from EXP_LO down (beyond both the f32 result saturates;
#: in between, the scaling decides overflow and the subnormal flush exactly as rounding does).
EXP_HI, EXP_LO = 89.0, -104.0
#: tanh(x) rounds to x below 2^-12 (x^3/3 < half an ULP) and to +-1 from 9.5 (1 - tanh < 2^-25).
TANH_TINY, TANH_ONE = 2.0 ** -12, 9.5


def _f(bits: int) -> str:
    return f"uintBitsToFloat(0x{bits:08X}u)"


def _table(name: str, words: tuple[int, ...]) -> str:
    rows = ",\n".join("    " + ", ".join(f"0x{w:08X}u" for w in words[i:i + 8]) for i in range(0, len(words), 8))
    return f"const uint {name}[{len(words)}] = uint[](\n{rows});"


C1, C2, C3, C4 = (_f(b) for b in EXP_LN2_64)


def tanh_glsl(core: str) -> str:
    """``vyre_tanh``: NaN, the tiny range (x), saturation (+-1) and the sign around ``core``,
    GLSL that sets ``float t`` = tanh(ax) for 2^-12 <= ax < TANH_ONE (this module's and ffmath64's)."""
    body = "\n".join("        " + line for line in core.strip("\n").splitlines())
    return f"""float vyre_tanh(float x) {{
    uint b = floatBitsToUint(x);
    if (vyre_isnan(x)) return x;
    float ax = uintBitsToFloat(b & 0x7FFFFFFFu);
    if (ax < {TANH_TINY!r}) return x;
    float t = 1.0;
    if (ax < {TANH_ONE!r}) {{
{body}
    }}
    return uintBitsToFloat(floatBitsToUint(t) | (b & 0x80000000u));
}}"""

#: GLSL helpers, merged into helpers.GLSL_HELPERS (each after what it calls).
GLSL: dict[str, str] = {
    # Knuth's TwoSum: s + e == a + b exactly.
    "vyre_two_sum": """void vyre_two_sum(float a, float b, out float s, out float e) {
    precise float ps = a + b;
    precise float bv = ps - a;
    precise float pe = (a - (ps - bv)) + (b - bv);
    s = ps; e = pe;
}""",
    # Dekker's TwoProduct with Veltkamp's split (fma() may round twice on Vulkan).
    "vyre_two_prod": """void vyre_two_prod(float a, float b, out float p, out float e) {
    precise float pp = a * b;
    precise float ta = 4097.0 * a;
    precise float ah = ta - (ta - a);
    precise float al = a - ah;
    precise float tb = 4097.0 * b;
    precise float bh = tb - (tb - b);
    precise float bl = b - bh;
    precise float pe = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
    p = pp; e = pe;
}""",
    # exp(x) = (h + l) * 2^k for |x| <= 104, |l| <= ulp(h) / 2.
    "vyre_exp_ff": _table("vyre_exp_th", EXP_TABLE_HI) + "\n" + _table("vyre_exp_tl", EXP_TABLE_LO) + f"""
void vyre_exp_ff(float x, out float h, out float l, out int k) {{
    precise float n = roundEven(x * {_f(EXP_INV_LN2_64)});
    precise float a = x - n * {C1};
    float s, e, s2, e2;
    vyre_two_sum(a, -(n * {C2}), s, e);
    vyre_two_sum(s, -(n * {C3}), s2, e2);
    precise float el = (e + e2) - n * {C4};
    precise float rh = s2 + el;
    precise float rl = el - (rh - s2);
    float qh, ql;
    vyre_two_prod(rh, rh, qh, ql);
    precise float tail = rh * rh * rh * ({_f(0x3E2AAAAB)} + rh * ({_f(0x3D2AAAAB)}
                         + rh * ({_f(0x3C088889)} + rh * {_f(0x3AB60B61)})));
    precise float lo = rl + (0.5 * ql + (rh * rl + tail));
    float sh, sl;
    vyre_two_sum(rh, 0.5 * qh, sh, sl);
    precise float sl2 = sl + lo;
    precise float eh = 1.0 + sh;
    precise float el2 = (sh - (eh - 1.0)) + sl2;
    int ni = int(n);
    int j = ni & 63;
    k = (ni - j) >> 6;
    float th = uintBitsToFloat(vyre_exp_th[j]), tl = uintBitsToFloat(vyre_exp_tl[j]);
    float ph, pl;
    vyre_two_prod(th, eh, ph, pl);
    precise float pl2 = pl + (th * el2 + tl * eh);
    precise float hh = ph + pl2;
    precise float ll = pl2 - (hh - ph);
    h = hh; l = ll;
}}""",
    "vyre_exp": f"""float vyre_exp(float x) {{
    if (vyre_isnan(x)) return x;
    if (x >= {EXP_HI:.1f}) return uintBitsToFloat(0x7F800000u);
    if (x <= {EXP_LO:.1f}) return 0.0;
    float h, l;
    int k;
    vyre_exp_ff(x, h, l, k);
    precise float f = h + l;
    if (k > 127) {{ precise float big = ldexp(f, 127) * 2.0; return big; }}  // inf when it rounds past FLT_MAX
    if (k < -126 || (k == -126 && f < 1.0)) return 0.0;  // subnormal: flushed, as canon() does
    return ldexp(f, k);
}}""",
    "vyre_tanh": tanh_glsl("""
float h, l;
int k;
vyre_exp_ff(2.0 * ax, h, l, k);
float eh = ldexp(h, k), el = ldexp(l, k), nh, nl, dh, dl;
vyre_two_sum(eh, -1.0, nh, nl);
vyre_two_sum(eh, 1.0, dh, dl);
precise float nl2 = nl + el;
precise float dl2 = dl + el;
// (nh + nl2) / (dh + dl2): a first quotient, then the exact residual's correction
precise float q1 = nh / dh;
float p, pe;
vyre_two_prod(q1, dh, p, pe);
precise float q2 = ((((nh - p) - pe) + nl2) - q1 * dl2) / dh;
precise float q = q1 + q2;
t = q;
"""),
}
