"""NumPy float32 model of vyre_vk/lower/ffmath.py's GLSL, operation for operation.

NumPy's float32 add/sub/mul/div are IEEE single roundings, as Vulkan's are for add/sub/mul
under `precise`, so on lavapipe the shader must return exactly these bits. The model is
checked against the float64 reference separately (test_ffmath.py); together the two checks
say the GLSL is right without trusting either alone.
"""
import numpy as np

from vyre_vk.lower import ffmath
from vyre_vk.ir.optable import canon  # the lowering's template wraps both helpers in vyre_canon

F = np.float32


def _f(bits):
    return np.array(bits, np.uint32).view(F)


C1, C2, C3, C4 = _f(list(ffmath.EXP_LN2_64))
INV = _f(ffmath.EXP_INV_LN2_64)
TH, TL = _f(list(ffmath.EXP_TABLE_HI)), _f(list(ffmath.EXP_TABLE_LO))
P3, P4, P5, P6 = _f([0x3E2AAAAB, 0x3D2AAAAB, 0x3C088889, 0x3AB60B61])


def two_sum(a, b):
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def two_prod(a, b):
    p = a * b
    ta, tb = F(4097) * a, F(4097) * b
    ah, bh = ta - (ta - a), tb - (tb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def exp_ff(x):
    """exp(x) = (h + l) * 2^k for float32 |x| <= 104."""
    n = np.rint(x * INV).astype(F)
    a = x - n * C1
    s, e = two_sum(a, -(n * C2))
    s2, e2 = two_sum(s, -(n * C3))
    el = (e + e2) - n * C4
    rh = s2 + el
    rl = el - (rh - s2)
    qh, ql = two_prod(rh, rh)
    tail = rh * rh * rh * (P3 + rh * (P4 + rh * (P5 + rh * P6)))
    lo = rl + (F(0.5) * ql + (rh * rl + tail))
    sh, sl = two_sum(rh, F(0.5) * qh)
    sl2 = sl + lo
    eh = F(1) + sh
    el2 = (sh - (eh - F(1))) + sl2
    ni = n.astype(np.int32)
    j = ni & 63
    k = (ni - j) >> 6
    ph, pl = two_prod(TH[j], eh)
    pl2 = pl + (TH[j] * el2 + TL[j] * eh)
    h = ph + pl2
    return h, pl2 - (h - ph), k


def exp(x):
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        h, l, k = exp_ff(np.clip(np.nan_to_num(x), F(ffmath.EXP_LO), F(ffmath.EXP_HI)))
        f = h + l
        r = np.ldexp(f, np.clip(k, -126, 127)).astype(F)
        r = np.where(k > 127, np.ldexp(f, 127).astype(F) * F(2), r)
        r = np.where((k < -126) | ((k == -126) & (f < 1)), F(0), r)
        r = np.where(x >= F(ffmath.EXP_HI), F(np.inf), np.where(x <= F(ffmath.EXP_LO), F(0), r))
        return canon(np.where(np.isnan(x), x, r))


def tanh(x):
    x = np.asarray(x, F)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        h, l, k = exp_ff(np.minimum(F(2) * ax, F(2 * ffmath.TANH_ONE)))
        eh, el = np.ldexp(h, k).astype(F), np.ldexp(l, k).astype(F)
        nh, nl = two_sum(eh, F(-1))
        dh, dl = two_sum(eh, F(1))
        nl2, dl2 = nl + el, dl + el
        q1 = nh / dh
        p, pe = two_prod(q1, dh)
        q = q1 + ((((nh - p) - pe) + nl2) - q1 * dl2) / dh
        t = np.where(ax >= F(ffmath.TANH_ONE), F(1), q)
        t = (t.view(np.uint32) | (x.view(np.uint32) & np.uint32(0x80000000))).view(F)
        t = np.where(ax < F(ffmath.TANH_TINY), x, t)
        return canon(np.where(np.isnan(x), x, t))

