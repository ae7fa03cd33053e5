"""Oracle of vyre_vk/ops/visual/glass: the registered glass program is the blur's horizontal pass
over ``scene -> scratch`` (tint, brightness and saturation act in later dispatches), so its oracle
is the NumPy Gaussian pass of visual_blur. Exact."""
from __future__ import annotations

from .core import oracle, ru32
from .visual_blur import blur_axis_np
from .visual_pixels import edgy_pixels

PARAMS = {"width": 16, "height": 12, "blur_radius": 3, "blur_sigma": 1.7, "tint_rgba": 0x0DFFFFFF,
          "brightness": 1.2, "saturation": 0.6}


@oracle("vyre-libs::visual::glass", PARAMS, 0, "integer 16.16 convolution: exact")
def _():
    return (lambda rng, p: {"scene": edgy_pixels(rng, p["width"] * p["height"]),
                            "scratch": ru32(rng, p["width"] * p["height"])},
            lambda ins, p: {"scratch": blur_axis_np(ins["scene"], p["width"], p["height"], p["blur_radius"],
                                                    p["blur_sigma"], True)})
