"""Oracle of vyre_vk/ops/visual/upsample: each pixel repeated into a 2x2 block (np.repeat). Exact."""
from __future__ import annotations

import numpy as np

from .core import oracle, ru32


def upsample_np(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    img = np.asarray(pixels).reshape(height // 2, width // 2)
    return np.repeat(np.repeat(img, 2, axis=0), 2, axis=1).reshape(-1)


@oracle("vyre-libs::visual::upsample", {"width": 16, "height": 18}, 0, "nearest-neighbour copy: exact")
def _():
    return (lambda rng, p: {"input": ru32(rng, (p["width"] // 2) * (p["height"] // 2)),
                            "output": ru32(rng, p["width"] * p["height"])},
            lambda ins, p: {"output": upsample_np(ins["input"], p["width"], p["height"])})
