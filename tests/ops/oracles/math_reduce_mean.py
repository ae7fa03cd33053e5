"""Oracle of vyre_vk/ops/math/reduce_mean."""
from __future__ import annotations

import numpy as np

from .core import F32, d, oracle

TILE = 256


def reduce_mean_f32_np(x: np.ndarray) -> np.float32:
    """The op's order in f32: lane l sums x[l], x[l+256], ... (each add rounded), then the tree
    ``s[l] += s[l+stride]`` for stride 128..1, then one division by f32(n)."""
    x = np.asarray(x, F32)
    n = x.size
    lanes = np.zeros(TILE, F32)
    for chunk in range(-(-n // TILE)):
        part = x[chunk * TILE:(chunk + 1) * TILE]
        lanes[:part.size] = lanes[:part.size] + part
    stride = TILE // 2
    while stride:
        lanes[:stride] = lanes[:stride] + lanes[stride:2 * stride]
        stride //= 2
    return F32(lanes[0] / F32(n))


def window(p: dict) -> float:
    """Each lane adds ceil(n/256) terms, the tree 8 levels, then a division: each rounding is at
    most half an ULP of sum|x|, i.e. about one ULP of mean|x| after the division."""
    return float(-(-p["n"] // TILE) + 8 + 1)


@oracle("vyre-libs::math::reduce_mean", {"n": 3000}, window,
        "f32 lane sums (12 adds) + 8-level tree + division, in ULPs of mean|x| (bound 21)")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        return {"output": (np.asarray([x.mean()]), np.asarray([np.abs(x).mean()]))}
    return (lambda rng, p: {"input": (rng.standard_normal(p["n"]) * 3.0 + 1.0).astype(F32)}, np_fn)
