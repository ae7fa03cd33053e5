"""Oracle of vyre_vk/ops/math/weighted_sum (weighted_sum_fma_f32)."""
from __future__ import annotations

import numpy as np

from .core import F32, d, oracle


def fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """IEEE fused multiply-add of f32 values, rounded once to f32 (to nearest, ties to even).

    a*b is exact in float64 (24 + 24 bits); s = a*b + c rounded to float64 plus TwoSum's error e
    is the exact sum. Rounding s to f32 is right unless s is exactly halfway between two f32
    values while e != 0: then the exact sum lies on e's side of the midpoint."""
    p = d(a) * d(b)
    c = d(c)
    s = p + c
    bp = s - c
    e = (p - bp) + (c - (s - bp))
    r = s.astype(F32)
    lo = np.where(d(r) <= s, r, np.nextafter(r, F32(-np.inf)))
    hi = np.nextafter(lo, F32(np.inf))
    midpoint = (d(lo) + d(hi)) / 2 == s
    fix = midpoint & (e != 0) & np.isfinite(s)
    r = np.where(fix & (e > 0), hi, np.where(fix & (e < 0), lo, r))
    return r.astype(F32)


def weighted_sum_f32_np(w: np.ndarray, v: np.ndarray) -> np.float32:
    """acc = fma(w[i], v[i], acc) for i in order, from +0."""
    acc = np.zeros(1, F32)
    for wi, vi in zip(np.asarray(w, F32), np.asarray(v, F32)):
        acc = fma_f32(np.asarray([wi]), np.asarray([vi]), acc)
    return acc[0]


@oracle("vyre-libs::math::weighted_sum_fma_f32", {"n": 1000}, lambda p: p["n"] / 2,
        "n fused roundings, each <= 0.5 ULP of sum|w*v| (the bound; measured far below)")
def _():
    def np_fn(ins, p):
        prod = d(ins["weights"]) * d(ins["values"])
        return {"output": (np.asarray([prod.sum()]), np.asarray([np.abs(prod).sum()]))}
    return (lambda rng, p: {"weights": rng.standard_normal(p["n"]).astype(F32),
                            "values": rng.standard_normal(p["n"]).astype(F32)}, np_fn)
