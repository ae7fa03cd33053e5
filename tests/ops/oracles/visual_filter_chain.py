"""Oracle of vyre_vk/ops/visual/filter_chain: the CSS-style filters in 16.16 fixed point, written
from the math with NumPy (each factor k = round(65536 * f32 factor), ``fx(a, k) = floor(a*k / 2^16)``):

    brightness  c = min(fx(c, B), 255)
    contrast    c = clip(128 + sign(c - 128) * fx(|c - 128|, C), 0, 255)
    saturate    L = fx(r, 13933) + fx(g, 46871) + fx(b, 4732);  c = clip(L + sign(c - L) * fx(|c - L|, S), 0, 255)
    invert      (I > 0) c = min(fx(c, 65536 - I) + fx(255 - c, I), 255)

alpha unchanged. Exact (integer arithmetic; no step can wrap a u32 for 8-bit channels)."""
from __future__ import annotations

import numpy as np

from .core import oracle
from .visual_pixels import edgy_pixels, fixed_16_16, pack, unpack

PARAMS = {"count": 600, "brightness": 1.15, "contrast": 0.85, "saturate": 1.4, "invert": 0.3}


def fx(a: np.ndarray, k) -> np.ndarray:
    return (np.asarray(a, np.int64) * np.int64(k)) >> 16


def toward(c: np.ndarray, pivot, k: int) -> np.ndarray:
    d = c - pivot
    return np.clip(pivot + np.sign(d) * fx(np.abs(d), k), 0, 255)


def filter_chain_np(pixels: np.ndarray, brightness: float, contrast: float, saturate: float,
                    invert: float) -> np.ndarray:
    bk, ck, sk = (fixed_16_16(x) for x in (brightness, contrast, saturate))
    ik = 0 if np.isnan(np.float32(invert)) else fixed_16_16(min(max(float(np.float32(invert)), 0.0), 1.0))
    ch = unpack(pixels)
    rgb = np.minimum(fx(ch[:, :3], bk), 255)
    rgb = toward(rgb, 128, ck)
    luma = fx(rgb[:, 0], 13933) + fx(rgb[:, 1], 46871) + fx(rgb[:, 2], 4732)
    rgb = toward(rgb, luma[:, None], sk)
    if ik > 0:
        rgb = np.minimum(fx(rgb, 65536 - ik) + fx(255 - rgb, ik), 255)
    ch[:, :3] = rgb
    return pack(ch)


@oracle("vyre-libs::visual::filter_chain", PARAMS, 0, "integer 16.16 filters: exact")
def _():
    return (lambda rng, p: {"pixels": edgy_pixels(rng, p["count"])},
            lambda ins, p: {"pixels": filter_chain_np(ins["pixels"], p["brightness"], p["contrast"], p["saturate"],
                                                      p["invert"])})
