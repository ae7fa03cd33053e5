"""Oracle of vyre_vk/ops/visual/composite: Porter-Duff "over" on 8-bit channels,
``min(fg + round_half_up(bg * (255 - fg_a) / 255), 255)`` per channel, alpha included. Exact."""
from __future__ import annotations

import numpy as np

from .core import oracle, ru32
from .visual_pixels import edgy_pixels, pack, unpack


def over_np(fg: np.ndarray, bg: np.ndarray) -> np.ndarray:
    f, b = unpack(fg), unpack(bg)
    x = b * (255 - f[..., 3:4])
    return pack(np.minimum(f + (2 * x + 255) // 510, 255))   # floor(x / 255 + 1/2)


@oracle("vyre-libs::visual::composite", {"count": 1000}, 0, "integer Porter-Duff over: exact")
def _():
    return (lambda rng, p: {"fg": edgy_pixels(rng, p["count"]), "bg": edgy_pixels(rng, p["count"]),
                            "out": ru32(rng, p["count"])},
            lambda ins, p: {"out": over_np(ins["fg"], ins["bg"])})
