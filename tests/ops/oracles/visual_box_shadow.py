"""Oracle of vyre_vk/ops/visual/box_shadow: the shadow colour with alpha scaled by a linear
falloff of the Chebyshev distance d outside the box ``|x - cx| <= rect_w/2, |y - cy| <= rect_h/2``
(cx = rect_x + rect_w/2): ``a = min(floor(A * f / 256), 255)``, ``f = 256`` inside, else
``max(0, 256 - floor(256 d / blur))`` with blur = max(round(blur_radius), 1). Exact."""
from __future__ import annotations

import numpy as np

from .core import oracle, ru32
from .visual_pixels import pack, unpack

PARAMS = {"img_w": 40, "img_h": 24, "rect_x": 5, "rect_y": 3, "rect_w": 20, "rect_h": 11, "blur_radius": 3.4,
          "color_rgba": 0xC0336699}


def box_shadow_np(img_w, img_h, rect_x, rect_y, rect_w, rect_h, blur_radius, color_rgba) -> np.ndarray:
    y, x = np.mgrid[0:img_h, 0:img_w].astype(np.int64)
    dx, dy = np.abs(x - (rect_x + rect_w // 2)), np.abs(y - (rect_y + rect_h // 2))
    ox, oy = np.maximum(dx - rect_w // 2, 0), np.maximum(dy - rect_h // 2, 0)
    d = np.maximum(ox, oy)
    v = float(np.float32(blur_radius))
    blur = max(int(min(max(np.floor(abs(v) + 0.5) * np.sign(v), 0), 2**32 - 1)) if v == v else 0, 1)
    falloff = np.where((ox == 0) & (oy == 0), 256, np.maximum(0, 256 - (256 * d) // blur))
    colour = unpack(np.asarray([color_rgba], np.uint32))[0]
    ch = np.broadcast_to(colour, (img_h, img_w, 4)).copy()
    ch[..., 3] = np.minimum(colour[3] * falloff // 256, 255)
    return pack(ch).reshape(-1)


@oracle("vyre-libs::visual::box_shadow", PARAMS, 0, "integer distance falloff: exact")
def _():
    return (lambda rng, p: {"out": ru32(rng, p["img_w"] * p["img_h"])},
            lambda ins, p: {"out": box_shadow_np(**p)})
