"""f32 arithmetic the reference needs beyond the operator table: a single-rounding fused
multiply-add, and the conversion of lane values into a buffer's storage type.

Example::

    >>> x = 1 + 2.0**-12
    >>> float(fma_f32(x, x, -(1 + 2.0**-11)))   # 2**-24: a rounded product x*x would give 0.0
    5.960464477539063e-08
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..ir.optable import canon
from ..ir.types import DataType

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool


def to_storage(elem: DataType, v: np.ndarray) -> np.ndarray:
    """Lane values `v` as elements of a buffer of `elem` (f32 canonicalised, i32/u32 reinterpreted)."""
    if elem is F32:
        return canon(v)
    if v.dtype == np.bool_:
        return v.astype(np.uint32).astype(elem.numpy)
    if elem is I32 and v.dtype == np.uint32:
        return v.view(np.int32)
    if elem in (U32, BOOL) and v.dtype == np.int32:
        return v.view(np.uint32)
    return v.astype(elem.numpy)


def fma_f32(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """Fused a*b+c rounded once to float32 (inputs hold f32 values, given as float64).

    a*b is exact in float64; the sum is rounded to odd in float64 (TwoSum error term), and
    round-to-odd at 53 bits followed by one rounding to 24 bits equals a single rounding.
    """
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b
        s = p + c
        bp = s - c
        err = (p - bp) + (c - (s - bp))
        fin = np.isfinite(s) & np.isfinite(err)
        even = (np.asarray(s).view(np.int64) & 1) == 0
        adjust = fin & (err != 0) & even
        if np.any(adjust):
            s = np.where(adjust, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return canon(np.asarray(s).astype(np.float32))


__all__ = ["fma_f32", "to_storage"]
