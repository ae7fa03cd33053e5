"""Oracles of vyre_vk/ops/visual/blur: a separable Gaussian (one axis) with clamp-to-edge
sampling in 16.16 fixed point, written from the math with NumPy. Exact (integer arithmetic):
the weights are round(65536 * g_k / sum g) of the sampled Gaussian, each channel
``min(sum_k w_k * c(clamp(x + k - r)) >> 16, 255)``."""
from __future__ import annotations

import numpy as np

from .core import oracle, ru32
from .visual_pixels import edgy_pixels, pack, unpack

MAX_RADIUS = 64


def gaussian_weights_np(radius: int, sigma: float) -> np.ndarray:
    r = min(radius, MAX_RADIUS)
    x = np.arange(-r, r + 1, dtype=np.float64)
    s = float(np.float32(sigma))
    g = np.exp(-(x * x) / (2.0 * s * s))
    return np.floor(g / g.sum() * 65536.0 + 0.5).astype(np.int64)   # positive: half-up == half-away


def blur_axis_np(pixels: np.ndarray, width: int, height: int, radius: int, sigma: float,
                 horizontal: bool) -> np.ndarray:
    """One blur pass of a row-major ``width x height`` u32 image."""
    w = gaussian_weights_np(radius, sigma)
    r = (w.size - 1) // 2
    img = unpack(pixels).reshape(height, width, 4)
    axis, n = (1, width) if horizontal else (0, height)
    acc = np.zeros_like(img)
    for k, wk in enumerate(w):
        idx = np.clip(np.arange(n) + k - r, 0, n - 1)
        acc += wk * np.take(img, idx, axis=axis)
    assert acc.max(initial=0) < 2**32  # the u32 accumulator never wraps at these weights
    return pack(np.minimum(acc >> 16, 255)).reshape(-1)


def blur_2pass_np(pixels, width, height, radius, sigma):
    return blur_axis_np(blur_axis_np(pixels, width, height, radius, sigma, True), width, height, radius, sigma, False)


@oracle("vyre-libs::visual::blur", {"width": 16, "height": 16, "radius": 2, "sigma": 1.3}, 0,
        "integer 16.16 convolution: exact")
def _():
    return (lambda rng, p: {"input": edgy_pixels(rng, p["width"] * p["height"]),
                            "scratch": ru32(rng, p["width"] * p["height"])},
            lambda ins, p: {"scratch": blur_axis_np(ins["input"], p["width"], p["height"], p["radius"], p["sigma"],
                                                    True)})
