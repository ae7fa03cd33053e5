"""The Rust `libm` crate's expf (FreeBSD e_expf.c, as vyre's reference and fixtures use it), step by
step in numpy float32 arithmetic: it is not correctly rounded (e.g. expf(-0.46875) = 0x3F203362,
0.5015 ULP from exp; the nearest f32 is 0x3F203361), which explains upstream vectors that differ
from the correctly rounded math."""
import numpy as np
f = np.float32
LN2_HI, LN2_LO, INV_LN2 = f(6.9314575195e-01), f(1.4286067653e-06), f(1.4426950216e+00)
P1, P2 = f(1.6666625440e-1), f(-2.7667332906e-3)
def expf(x):
    x = f(x); hx = int(x.view(np.uint32)); sign = hx >> 31; hx &= 0x7fffffff
    if hx > 0x3eb17218:
        if hx > 0x3f851592:
            k = int(f(INV_LN2 * x + f([0.5, -0.5][sign])))
        else:
            k = 1 - sign - sign
        kf = f(k); hi = f(x - f(kf * LN2_HI)); lo = f(kf * LN2_LO); x = f(hi - lo)
    elif hx > 0x39000000:
        k = 0; hi = x; lo = f(0)
    else:
        return f(f(1) + x)
    xx = f(x * x)
    c = f(x - f(xx * f(P1 + f(xx * P2))))
    y = f(f(1) + f(f(f(f(x * c) / f(f(2) - c)) - lo) + hi))
    return y if k == 0 else f(np.ldexp(y, k))
if __name__ == "__main__":  # pragma: no cover
    import math
    for x in [-0.46875, -1.0, -6.0, -2.0, 1.0, -0.7, 0.3]:
        print(x, hex(expf(x).view(np.uint32)), hex(f(math.exp(x)).view(np.uint32)))
