"""Oracle of vyre_vk/ops/visual/downsample: the mean of each 2x2 block per channel, rounded half
up. Exact."""
from __future__ import annotations

import numpy as np

from .core import oracle, ru32
from .visual_pixels import edgy_pixels, pack, unpack


def downsample_np(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    ow, oh = width // 2, height // 2
    img = unpack(pixels).reshape(height, width, 4)[: 2 * oh, : 2 * ow]   # an odd last row/column is dropped
    blocks = img.reshape(oh, 2, ow, 2, 4).astype(np.float64)
    return pack(np.floor(blocks.mean(axis=(1, 3)) + 0.5).astype(np.int64)).reshape(-1)


@oracle("vyre-libs::visual::downsample", {"width": 18, "height": 14}, 0, "2x2 box mean: exact")
def _():
    return (lambda rng, p: {"input": edgy_pixels(rng, p["width"] * p["height"]),
                            "output": ru32(rng, (p["width"] // 2) * (p["height"] // 2))},
            lambda ins, p: {"output": downsample_np(ins["input"], p["width"], p["height"])})
