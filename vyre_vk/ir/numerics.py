"""The NumPy implementations behind the operator table (optable.py), and vyre's canonical f32.

Conventions: operands are NumPy arrays of the operand type's value dtype (uint32, int32,
float32, numpy bool); `t` is the operand DataType; float32 results are canonicalised here
(:func:`canon`), as vyre's reference does.

Example::

    >>> int(div_u32(np.uint32(7), np.uint32(0), DataType.U32))
    4294967295
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

from .types import DataType

I32 = DataType.I32

FLT_MIN = np.float32(1.17549435e-38)
CANON_NAN_BITS = 0x7FC00000
CANON_NAN = np.array([CANON_NAN_BITS], dtype=np.uint32).view(np.float32)[0]
_U32_MAX = np.uint32(0xFFFFFFFF)


def canon(x: ArrayLike) -> np.ndarray:
    """vyre's ``canonical_f32``: NaN -> 0x7FC00000, subnormal -> signed zero, else unchanged.

    >>> canon(np.float32(1e-40)), canon(np.float32(-1e-40))
    (array(0., dtype=float32), array(-0., dtype=float32))
    """
    x = np.asarray(x, dtype=np.float32)
    nan = np.isnan(x)
    tiny = (np.abs(x) < FLT_MIN) & (x != 0)
    if nan.any() or tiny.any():  # rare: only pay for the rewrite when needed
        x = np.where(tiny, np.copysign(np.float32(0), x), x)
        x = np.where(nan, CANON_NAN, x)
    return x


def via64(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, DataType], np.ndarray]:
    """Transcendental in float64, rounded once to float32 (close to libm's f32 results)."""
    return lambda a, t: canon(fn(np.asarray(a, np.float64)).astype(np.float32))


# ----------------------------------------------------------------------------- integer helpers
def as_u32(x: ArrayLike) -> np.ndarray:
    """Reinterpret an int32/uint32 array as uint32 bits."""
    x = np.asarray(x)
    return x.view(np.uint32) if x.dtype == np.int32 else x


def _back(bits: np.ndarray, t: DataType) -> np.ndarray:
    return bits.view(np.int32) if t is I32 else bits


def div_u32(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    zero = b == 0
    return np.where(zero, _U32_MAX, a // np.where(zero, np.uint32(1), b)).astype(np.uint32)


def mod_u32(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    zero = b == 0
    return np.where(zero, np.uint32(0), a % np.where(zero, np.uint32(1), b)).astype(np.uint32)


def div_i32(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    # Truncating division, computed exactly in int64; the error cases are masked out here
    # and reported by i32_div_error.
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    b64 = np.where(b64 == 0, 1, b64)
    q = np.abs(a64) // np.abs(b64)
    q = np.where((a64 < 0) ^ (b64 < 0), -q, q)
    return np.asarray(q).astype(np.int32)  # MIN / -1 wraps here; it is an error lane anyway


def mod_i32(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    q = np.asarray(div_i32(a, b, t), np.int64)
    b64 = np.where(np.asarray(b, np.int64) == 0, 1, np.asarray(b, np.int64))
    r = np.asarray(a, np.int64) - q * b64  # sign of the dividend, like Rust's %
    return np.asarray(r.astype(np.int32))


def i32_div_error(a: np.ndarray, b: np.ndarray, t: DataType) -> Optional[np.ndarray]:
    if t is not I32:
        return None
    return (b == 0) | ((a == np.int32(-2**31)) & (b == -1))


def shl(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    return (a << (b & np.uint32(31))).astype(np.uint32)


def shr(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    return (a >> (b & np.uint32(31))).astype(np.uint32)


def rotl(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    s = b & np.uint32(31)
    return ((a << s) | (a >> ((np.uint32(32) - s) & np.uint32(31)))).astype(np.uint32)


def rotr(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    s = b & np.uint32(31)
    return ((a >> s) | (a << ((np.uint32(32) - s) & np.uint32(31)))).astype(np.uint32)


def sat_add(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    s = (a + b).astype(np.uint32)
    return np.where(s < a, _U32_MAX, s).astype(np.uint32)


def sat_sub(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    return np.where(a < b, np.uint32(0), a - b).astype(np.uint32)


def sat_mul(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    p = np.asarray(a, np.uint64) * np.asarray(b, np.uint64)
    return np.minimum(p, np.uint64(0xFFFFFFFF)).astype(np.uint32)


def mulhi(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    return ((np.asarray(a, np.uint64) * np.asarray(b, np.uint64)) >> np.uint64(32)).astype(np.uint32)


def absdiff(a: np.ndarray, b: np.ndarray, t: DataType) -> np.ndarray:
    return np.where(a > b, a - b, b - a).astype(np.uint32)


def truthy(x: ArrayLike) -> np.ndarray:
    """Truthiness of a u32/i32/bool/f32 value (float NaN is true, like vyre)."""
    return np.asarray(x) != 0


def popcount(a: np.ndarray, t: DataType) -> np.ndarray:
    return _back(np.bitwise_count(as_u32(a)).astype(np.uint32), t)


def clz(a: np.ndarray, t: DataType) -> np.ndarray:
    x = as_u32(a).astype(np.uint32)
    n = np.zeros(x.shape, np.uint32)
    for s, m in ((16, 0xFFFF0000), (8, 0xFF000000), (4, 0xF0000000), (2, 0xC0000000), (1, 0x80000000)):
        z = (x & np.uint32(m)) == 0
        n = n + np.where(z, np.uint32(s), np.uint32(0))
        x = np.where(z, x << np.uint32(s), x).astype(np.uint32)
    n = np.where(as_u32(a) == 0, np.uint32(32), n).astype(np.uint32)  # Clz(0) = 32
    return _back(n, t)


def ctz(a: np.ndarray, t: DataType) -> np.ndarray:
    x = as_u32(a)
    low = (x & (~x + np.uint32(1))) - np.uint32(1)  # ones below the lowest set bit; 0 -> all 32
    return _back(np.bitwise_count(low.astype(np.uint32)).astype(np.uint32), t)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint32)


def reverse_bits(a: np.ndarray, t: DataType) -> np.ndarray:
    x = as_u32(a)
    r = (_REV8[x & 0xFF] << 24) | (_REV8[(x >> 8) & 0xFF] << 16) | (_REV8[(x >> 16) & 0xFF] << 8) \
        | _REV8[(x >> 24) & 0xFF]
    return _back(np.asarray(r, np.uint32), t)


def round_away(a: np.ndarray, t: DataType) -> np.ndarray:
    # Rust f32::round: ties away from zero. x - trunc(x) is exact in f32.
    r = np.trunc(a)
    return canon(np.where(np.abs(a - r) >= np.float32(0.5), r + np.sign(a), r).astype(np.float32))


def sign(a: np.ndarray, t: DataType) -> np.ndarray:
    one = np.float32(1)
    return canon(np.where(a > 0, one, np.where(a < 0, -one, np.where(np.isnan(a), a, np.float32(0)))))


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Rust f32::min ignores a NaN operand; on a tie (+0 vs -0) return the first operand
    # (NumPy's fmin returns the second one).
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b < a, b, a)))


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(a < b, b, a)))


def as_f32(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, np.float32)
