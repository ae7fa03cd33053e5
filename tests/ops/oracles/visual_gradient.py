"""Oracle of vyre_vk/ops/visual/gradient: a CSS linear gradient in 16.16 fixed point, written
from the math with NumPy. Direction ``d = round(65536 * (sin a, -cos a))``; the projection
``p = x*dx + y*dy`` of each pixel, shifted by the smallest corner projection, is divided by the
corner range in whole pixels (``ceil(range / 65536)``) to give t (at most 65536); within the
stop pair t0 <= t < t1 each channel is ``c0 + sign(c1 - c0) * round_half_up(|c1 - c0| (t - t0) / (t1 - t0))``,
before the first stop the first colour, from the last stop on the last colour. Exact; the
float CSS ramp is compared within 1 level in tests/ops/visual/test_gradient.py."""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.visual.gradient import ColorStop

from .core import oracle, ru32
from .visual_pixels import fixed_16_16, pack, unpack

STOPS = (ColorStop(0.0, 0x80FF2010), ColorStop(0.4, 0xFF00C0FF), ColorStop(1.0, 0x2040A000))
PARAMS = {"width": 24, "height": 10, "angle_deg": 30.0, "stops": STOPS}


def direction_np(angle_deg: float) -> tuple[int, int]:
    rad = np.float32(angle_deg) * np.float32(np.float32(np.pi) / np.float32(180))
    dx, dy = np.sin(rad, dtype=np.float32), -np.cos(rad, dtype=np.float32)
    return tuple(int(np.floor(abs(float(v)) * 65536 + 0.5) * np.sign(float(v))) for v in (dx, dy))


def gradient_t_np(width: int, height: int, angle_deg: float) -> np.ndarray:
    dx, dy = direction_np(angle_deg)
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    p = x * dx + y * dy
    corners = [0, (width - 1) * dx, (height - 1) * dy, (width - 1) * dx + (height - 1) * dy]
    lo, hi = min(corners), max(corners)
    range_px = max(-(-max(hi - lo, 1) // 65536), 1)
    return np.minimum((p - lo) // range_px, 65536).reshape(-1)


def gradient_np(width: int, height: int, angle_deg: float, stops) -> np.ndarray:
    t = gradient_t_np(width, height, angle_deg)
    pos = [fixed_16_16(min(max(float(np.float32(s.position)), 0.0), 1.0)) for s in stops]
    col = unpack(np.asarray([s.color for s in stops], np.uint32))
    out = np.broadcast_to(col[0], (t.size, 4)).copy()
    for i in range(len(stops) - 1):
        t0, span = pos[i], max(pos[i + 1] - pos[i], 1)
        inside = (t >= t0) & (t < pos[i + 1])
        delta = col[i + 1] - col[i]
        step = (np.abs(delta)[None, :] * (t - t0)[:, None] + span // 2) // span
        out[inside] = (col[i] + np.sign(delta) * step)[inside]
    out[t >= pos[-1]] = col[-1]
    return pack(out)


@oracle("vyre-libs::visual::gradient", PARAMS, 0, "integer 16.16 ramp: exact")
def _():
    return (lambda rng, p: {"output": ru32(rng, p["width"] * p["height"])},
            lambda ins, p: {"output": gradient_np(p["width"], p["height"], p["angle_deg"], p["stops"])})
