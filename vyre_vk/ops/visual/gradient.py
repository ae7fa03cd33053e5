"""`vyre-libs::visual::gradient`: CSS-style linear gradient rasterised into packed RGBA pixels
(port of vyre-libs/src/visual/gradient/mod.rs, ``linear_gradient``).

Host side (Rust f32/i64 semantics): the CSS angle (0 = upward, 90 = rightward) gives the
direction ``(dx, dy) = (sin a, -cos a)``, ``dx_fp = round(dx * 65536) as i32`` (likewise dy_fp);
the four image corners' projections ``x*dx_fp + y*dy_fp`` give ``min``/``max``,
``offset = -min`` and ``range_px = ceil((max - min) / 65536)`` (at least 1). Stop positions
become ``round(clamp(pos, 0, 1) * 65536)``.

Per pixel (px, py), in u32::

    raw = (px*|dx_fp| [dx>=0] + py*|dy_fp| [dy>=0] + offset) - (the negative-direction terms)   (0 if < 0)
    t   = min(raw / range_px, 65536)
    colour = stop 0; then for each stop pair i with t0 <= t < t1 (span = max(t1 - t0, 1)), per channel:
        c = c0 +/- (|c1 - c0| * (t - t0) + span/2) / span
    and the last stop's colour where t >= its position.

Because ``range_px`` is rounded up to whole pixels, t reaches 65536 only where the projection
range is a multiple of 65536 (axis-aligned angles); at 45 degrees on a 4x4 image the far corner
gets t = 0.85 (vyre's arithmetic, pinned in tests/ops/visual/test_gradient.py).
Buffer: ``output`` rw (width*height). 2..=16 stops, else OpParamError (vyre builds a trapping
program instead; this IR has no Trap).

Example::

    >>> p = linear_gradient("output", 4, 1, 90.0, [ColorStop(0.0, 0xFF0000FF), ColorStop(1.0, 0xFFFF0000)])
    >>> gradient_constants(4, 1, 90.0)
    (65536, 0, 0, 3)
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ...ir import Expr, Node, Program, wrap_anonymous, wrap_child
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .pixels import (PACKED_RGBA_MAP_OP_ID, PIXEL_WORKGROUP_SIZE, U32_MAX, channels_host, check_f32, check_u32,
                     f32_round_to_i32, f32_to_fixed_16_16, pack_rgba, pixel_count, pixel_decls)

OP_ID = "vyre-libs::visual::gradient"
ULP = None  # u32 pixels: exact
#: Rust's f32 ``PI / 180.0`` (the constant f32::to_radians multiplies by).
RADS_PER_DEG = np.float32(np.float32(np.pi) / np.float32(180.0))


class ColorStop(NamedTuple):
    """A stop at `position` (0.0 = start, 1.0 = end) with a packed RGBA `color`. A tuple, so
    builder parameters stay plain data (JSON lists); ``(position, color)`` pairs are accepted too."""
    position: float
    color: int


def direction_fp(angle_deg: float) -> tuple[int, int]:
    """``(round(sin a * 65536) as i32, round(-cos a * 65536) as i32)`` with a = angle_deg in f32
    radians. sin/cos are taken in f64 of the f32 angle and rounded to f32, not through the
    platform's sinf/cosf (which Rust calls): glibc's differ from that in the last bit at 140 of
    the 5761 angles -720..720 step 0.25, but the rounded 16.16 direction is the same at all of them."""
    rad = np.float32(check_f32(OP_ID, "angle_deg", angle_deg) * RADS_PER_DEG)
    with np.errstate(invalid="ignore"):
        dx = np.float32(np.sin(np.float64(rad)))
        dy = -np.float32(np.cos(np.float64(rad)))
        return f32_round_to_i32(dx * np.float32(65536.0)), f32_round_to_i32(dy * np.float32(65536.0))


def gradient_constants(width: int, height: int, angle_deg: float) -> tuple[int, int, int, int]:
    """``(dx_fp, dy_fp, projection_offset, projection_range_pixels)`` as vyre computes them."""
    dx_fp, dy_fp = direction_fp(angle_deg)
    we, he = max(width - 1, 0), max(height - 1, 0)
    corners = [0, we * dx_fp, he * dy_fp, we * dx_fp + he * dy_fp]
    lo, hi = min(corners), max(corners)
    offset = min(max(-lo, 0), U32_MAX)
    span = max(hi - lo, 1)
    range_px = min(max((span + 65535) // 65536, 1), U32_MAX)  # positive: floor == Rust's truncation
    return dx_fp, dy_fp, offset, range_px


def _check_stops(stops: Sequence[ColorStop]) -> list[tuple[int, int]]:
    if not isinstance(stops, (tuple, list)):
        raise OpParamError(f"{OP_ID}: stops = {stops!r} is not a sequence. Fix: pass a list of ColorStop.")
    if not 2 <= len(stops) <= 16:
        raise OpParamError(f"linear_gradient needs 2..=16 stops, got {len(stops)}. Fix: provide at least two color "
                           "stops and at most sixteen.")
    out = []
    for stop in stops:
        if not isinstance(stop, (tuple, list)) or len(stop) != 2:
            raise OpParamError(f"{OP_ID}: stop {stop!r} is not a (position, color) pair. Fix: pass ColorStop(0.0, "
                               "0xFF0000FF) or (0.0, 0xFF0000FF) per stop.")
        s = ColorStop(*stop)
        pos = check_f32(OP_ID, "stop position", s.position)
        clamped = pos if np.isnan(pos) else np.float32(min(max(pos, np.float32(0)), np.float32(1)))
        out.append((f32_to_fixed_16_16(clamped), check_u32(OP_ID, "stop color", s.color)))
    return out


def linear_gradient(output: str, width: int, height: int, angle_deg: float, stops: Sequence[ColorStop]) -> Program:
    """The gradient program writing ``width x height`` pixels of `output`."""
    width, height = check_u32(OP_ID, "width", width), check_u32(OP_ID, "height", height)
    fixed = _check_stops(stops)
    count = pixel_count(width, height)
    dx_fp, dy_fp, offset, range_px = gradient_constants(width, height, angle_deg)
    v, u = Expr.var, Expr.u32
    dp_x, dp_y = Expr.mul(v("px"), u(abs(dx_fp))), Expr.mul(v("py"), u(abs(dy_fp)))
    pos = Expr.add(dp_x if dx_fp >= 0 else u(0), dp_y if dy_fp >= 0 else u(0))
    neg = Expr.add(dp_x if dx_fp < 0 else u(0), dp_y if dy_fp < 0 else u(0))
    shifted = Expr.add(v("pos_dp"), u(offset))
    scaled = Expr.div(v("raw_dp"), u(range_px))
    inner = [
        Node.let_bind("px", Expr.rem(v("idx"), u(max(width, 1)))),
        Node.let_bind("py", Expr.div(v("idx"), u(max(width, 1)))),
        Node.let_bind("pos_dp", pos),
        Node.let_bind("neg_dp", neg),
        Node.let_bind("raw_dp", Expr.select(Expr.ge(shifted, v("neg_dp")), Expr.sub(shifted, v("neg_dp")), u(0))),
        Node.let_bind("t", Expr.select(Expr.gt(scaled, u(65536)), u(65536), scaled)),
    ]
    cols = [channels_host(c) for _, c in fixed]
    inner += [Node.let_bind(f"out_{c}", u(cols[0][i])) for i, c in enumerate("rgba")]
    for i in range(len(fixed) - 1):
        t0, t1 = fixed[i][0], fixed[i + 1][0]
        span = t1 - t0 if t1 > t0 else 1  # a repeated position: no division by zero
        within = Expr.and_(Expr.ge(v("t"), u(t0)), Expr.lt(v("t"), u(t1)))
        for k, c in enumerate("rgba"):
            c0, c1 = cols[i][k], cols[i + 1][k]
            step = Expr.div(Expr.add(Expr.mul(u(abs(c1 - c0)), Expr.sub(v("t"), u(t0))), u(span // 2)), u(span))
            lerp = Expr.add(u(c0), step) if c1 >= c0 else Expr.sub(u(c0), step)
            inner.append(Node.assign(f"out_{c}", Expr.select(within, lerp, v(f"out_{c}"))))
    last_pos = fixed[-1][0]
    inner += [Node.assign(f"out_{c}", Expr.select(Expr.ge(v("t"), u(last_pos)), u(cols[-1][k]), v(f"out_{c}")))
              for k, c in enumerate("rgba")]
    inner += [
        Node.let_bind("packed", pack_rgba(*(v(f"out_{c}") for c in "rgba"))),
        Node.let_bind("oidx", Expr.add(Expr.mul(v("py"), u(width)), v("px"))),
        Node.store(output, v("oidx"), v("packed")),
    ]
    child = wrap_child(PACKED_RGBA_MAP_OP_ID, OP_ID, [
        Node.let_bind("idx", Expr.gid_x()),
        Node.if_then(Expr.lt(v("idx"), u(count)), inner),
    ])
    return Program.wrapped(pixel_decls((output, count, "rw")), PIXEL_WORKGROUP_SIZE, [wrap_anonymous(OP_ID, [child])])


#: vyre's registered stops: red at 0, blue at 1.
RED_TO_BLUE = (ColorStop(0.0, 0xFF0000FF), ColorStop(1.0, 0xFFFF0000))


def _build(width: int = 4, height: int = 1, angle_deg: float = 90.0,
           stops: tuple[ColorStop, ...] = RED_TO_BLUE) -> Program:
    return linear_gradient("output", width, height, angle_deg, stops)


# vyre's vector: a 4x1 left-to-right red -> blue ramp.
ENTRY = register_case(OP_ID, _build, [bytes(16)], [pack_u32_slice([0xFF0000FF, 0xFF5500AA, 0xFFAA0055, 0xFFFF0000])],
                      category="visual", ulp=ULP, bench=dict(width=1920, height=1080, angle_deg=135.0))
