"""Distances of f32 results from reference values, in ULPs: NumPy only, so the standalone aot
runner (vyre_vk/aot.py) measures a device's builtins exactly as the runtime's native-math probe
(vyre_vk/runtime/native_math.py) does.

>>> worst_by_block(np.float32([1, 2, 3, 4]), np.float32([1, 2, 3, np.nextafter(np.float32(4), 5)]), ["a", "b"], 2)
{'a': 0, 'b': 1}
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

#: Errors past this (wrong infinities, NaN for a number) are recorded as this many ULPs.
ULP_CAP = 2**31 - 1
FLT_MIN = float(np.finfo(np.float32).tiny)


def ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ULPs of want (of FLT_MIN below it), capped at ULP_CAP (NaN/inf mismatches)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    ulp = np.spacing(np.maximum(np.abs(want), FLT_MIN).astype(np.float32)).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(g - w) / ulp
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    return np.where(same, 0.0, np.minimum(np.nan_to_num(err, nan=ULP_CAP, posinf=ULP_CAP), ULP_CAP))


def flush_subnormals(x: np.ndarray) -> np.ndarray:
    """`x` (f32) with values below FLT_MIN as signed zeros: what the reference's canonicalisation
    makes of them, so a device that flushes them is not charged 2^23 ULPs of FLT_MIN for it.

    >>> flush_subnormals(np.float32([1e-40, -1e-40, 1.0])).tolist()
    [0.0, -0.0, 1.0]
    """
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < FLT_MIN, np.copysign(np.float32(0), x), x).astype(np.float32)


def worst_by_block(got: np.ndarray, want: np.ndarray, names: Sequence[str], per: int) -> dict[str, int]:
    """The largest error, in whole ULPs (rounded up), of each block of `per` results, by name;
    subnormal results on either side count as signed zeros (:func:`flush_subnormals`)."""
    err = ulp_errors(flush_subnormals(got), flush_subnormals(want)).reshape(len(names), per).max(axis=1)
    return {name: int(np.ceil(e)) for name, e in zip(names, err)}


__all__ = ["FLT_MIN", "ULP_CAP", "flush_subnormals", "ulp_errors", "worst_by_block"]
