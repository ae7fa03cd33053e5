"""`vyre-libs::visual::blur`: one pass of a separable Gaussian blur over packed RGBA pixels
(port of vyre-libs/src/visual/blur/mod.rs, weights from vyre-primitives/src/math/conv1d.rs).

``gaussian_blur_2pass(input, output, scratch, width, height, radius, sigma)`` returns two
programs: horizontal ``input -> scratch`` then vertical ``scratch -> output``. The registered op
is the horizontal one over buffers ``input`` (ro) and ``scratch`` (rw), 4x4, radius 1, sigma 0.8.

Per pixel (px, py) and channel c, with the 2r+1 fixed-point 16.16 weights w_k (r = min(radius,
64)) baked into the IR as constants (zero weights are skipped, as vyre does)::

    acc_c = sum_k w_k * c(pixel at clamp(p + k - r, 0, dim - 1) along the axis)   (wrapping u32)
    out_c = min(acc_c >> 16, 255)

``gaussian_weights(r, sigma)``: ``w_k = round_half_away(exp(-(k-r)^2 / (2 sigma^2)) / sum * 65536)``
in f64 (sigma widened from f32); the weights may sum to a little more or less than 65536.

Example::

    >>> gaussian_weights(1, 0.8)
    [15663, 34211, 15663]
    >>> p = gaussian_blur_2pass("input", "output", "scratch", 4, 4, 1, 0.8).horizontal
    >>> [b.name for b in p.buffers], p.entry[0].body[0].generator
    (['input', 'scratch'], 'vyre-primitives::math::conv1d')
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ...ir import Expr, Node, Program, wrap_anonymous, wrap_child
from ..math.elementwise import check_unique_names
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .pixels import (PIXEL_WORKGROUP_SIZE, channel, check_f32, check_u32, clamp255, pack_rgba, pixel_count,
                     pixel_decls, round_half_away, saturating_cast)

OP_ID = "vyre-libs::visual::blur"
CONV1D_OP_ID = "vyre-primitives::math::conv1d"
#: vyre-primitives conv1d MAX_RADIUS: larger radii are clamped to it.
MAX_RADIUS = 64
ULP = None  # u32 pixels: exact


def gaussian_weights(radius: int, sigma: float) -> list[int]:
    """The 2*min(radius, 64)+1 normalised Gaussian weights in 16.16 fixed point (f64 math, as
    vyre's conv1d::gaussian_weights; sigma == 0 gives NaN weights, which Rust casts to 0)."""
    r = min(check_u32("gaussian_weights", "radius", radius), MAX_RADIUS)
    s = float(check_f32("gaussian_weights", "sigma", sigma))
    s2 = 2.0 * s * s
    raw = []
    for i in range(2 * r + 1):
        x = float(i - r)
        num = -x * x
        # IEEE division (Python raises on /0): -x^2/0 is NaN at x = 0 and -inf elsewhere.
        e = num / s2 if s2 != 0.0 else (math.nan if num == 0.0 else -math.inf)
        raw.append(math.exp(e))  # libm exp, the same one Rust's f64::exp calls
    total = 0.0
    for w in raw:  # sequential f64 sum, in Rust's order
        total += w
    out = []
    for w in raw:
        q = w / total if total != 0.0 else math.nan
        out.append(saturating_cast(round_half_away(q * 65536.0), 0, 0xFFFFFFFF))
    return out


class GaussianKernelError(OpParamError):
    """A caller-supplied weight list whose length is not 2 * min(radius, 64) + 1."""


@dataclass(frozen=True)
class GaussianKernel:
    """Reusable fixed-point kernel: the clamped radius and its 2r+1 weights."""
    radius: int
    weights: tuple[int, ...]

    @staticmethod
    def new(radius: int, sigma: float) -> "GaussianKernel":
        r = min(check_u32(OP_ID, "radius", radius), MAX_RADIUS)
        return GaussianKernel(r, tuple(gaussian_weights(r, sigma)))

    @staticmethod
    def from_weights(radius: int, weights: Sequence[int]) -> "GaussianKernel":
        r = min(check_u32(OP_ID, "radius", radius), MAX_RADIUS)
        ws = tuple(check_u32(OP_ID, "weight", w) for w in weights)
        if len(ws) != 2 * r + 1:
            raise GaussianKernelError(f"invalid Gaussian kernel for radius {r}: expected {2 * r + 1} weights, got "
                                      f"{len(ws)}. Fix: supply 2 * radius + 1 fixed-point weights.")
        return GaussianKernel(r, ws)


@dataclass(frozen=True)
class GaussianBlurStages:
    """The two dispatches of a separable blur: horizontal ``input -> scratch``, then vertical
    ``scratch -> output``; run them in order (the second reads every row the first wrote)."""
    horizontal: Program
    vertical: Program

    def stage_count(self) -> int:
        return 2

    def programs(self) -> tuple[Program, Program]:
        return (self.horizontal, self.vertical)


def _sample_coord(coord: Expr, offset: int, dim: int) -> Expr:
    """``clamp(coord + offset, 0, dim - 1)`` in u32 without underflow, as vyre writes it."""
    if offset >= 0:
        moved = Expr.add(coord, Expr.u32(offset))
        return Expr.select(Expr.lt(moved, Expr.u32(dim)), moved, Expr.u32(dim - 1))
    return Expr.select(Expr.ge(coord, Expr.u32(-offset)), Expr.sub(coord, Expr.u32(-offset)), Expr.u32(0))


def blur_pass(input: str, output: str, width: int, height: int, radius: int, weights: Sequence[int],
              horizontal: bool) -> Program:
    """One axis of the blur over ``width x height`` pixels (vyre's ``gaussian_blur_pass``)."""
    check_unique_names(OP_ID, input, output)
    width, height = check_u32(OP_ID, "width", width), check_u32(OP_ID, "height", height)
    r = min(radius, MAX_RADIUS)
    count = pixel_count(width, height)
    w1 = max(width, 1)
    dim = w1 if horizontal else max(height, 1)
    px, py = Expr.var("px"), Expr.var("py")
    body = [
        Node.let_bind("px", Expr.rem(Expr.var("idx"), Expr.u32(w1))),
        Node.let_bind("py", Expr.div(Expr.var("idx"), Expr.u32(w1))),
        *[Node.let_bind(f"acc_{c}", Expr.u32(0)) for c in "rgba"],
    ]
    for k in range(2 * r + 1):
        w = weights[k]
        if w == 0:
            continue  # vyre emits no tap for a zero weight
        offset = k - r
        if horizontal:
            src = Expr.add(Expr.mul(py, Expr.u32(width)), _sample_coord(px, offset, dim))
        else:
            src = Expr.add(Expr.mul(_sample_coord(py, offset, dim), Expr.u32(width)), px)
        tap = f"tap_{k}"
        body.append(Node.let_bind(tap, Expr.load(input, src)))
        for i, c in enumerate("rgba"):
            acc = f"acc_{c}"
            body.append(Node.assign(acc, Expr.add(Expr.var(acc), Expr.mul(channel(Expr.var(tap), i), Expr.u32(w)))))
    for c in "rgba":
        # vyre's names: "or", "og", "ob", "oa"
        body.append(Node.let_bind(f"o{c}", Expr.shr(Expr.var(f"acc_{c}"), Expr.u32(16))))
        body.append(Node.assign(f"o{c}", clamp255(Expr.var(f"o{c}"))))
    body += [
        Node.let_bind("packed", pack_rgba(*(Expr.var(f"o{c}") for c in "rgba"))),
        Node.let_bind("oidx", Expr.add(Expr.mul(py, Expr.u32(width)), px)),
        Node.store(output, Expr.var("oidx"), Expr.var("packed")),
    ]
    conv = wrap_child(CONV1D_OP_ID, OP_ID, [
        Node.let_bind("idx", Expr.gid_x()),
        Node.if_then(Expr.lt(Expr.var("idx"), Expr.u32(count)), body),
    ])
    return Program.wrapped(pixel_decls((input, count, "ro"), (output, count, "rw")), PIXEL_WORKGROUP_SIZE,
                           [wrap_anonymous(OP_ID, [conv])])


def gaussian_blur_2pass_with_kernel(input: str, output: str, scratch: str, width: int, height: int,
                                    kernel: GaussianKernel) -> GaussianBlurStages:
    """Both passes over precomputed weights (reuse one kernel across frames and buffers)."""
    check_unique_names(OP_ID, input, output, scratch)
    return GaussianBlurStages(
        blur_pass(input, scratch, width, height, kernel.radius, kernel.weights, True),
        blur_pass(scratch, output, width, height, kernel.radius, kernel.weights, False))


def gaussian_blur_2pass(input: str, output: str, scratch: str, width: int, height: int, radius: int,
                        sigma: float) -> GaussianBlurStages:
    """The two dispatches of a Gaussian blur of radius `radius` (clamped to 64) and `sigma`."""
    return gaussian_blur_2pass_with_kernel(input, output, scratch, width, height, GaussianKernel.new(radius, sigma))


def _build(width: int = 4, height: int = 4, radius: int = 1, sigma: float = 0.8) -> Program:
    return gaussian_blur_2pass("input", "output", "scratch", width, height, radius, sigma).horizontal


_WHITE = pack_u32_slice([0xFFFFFFFF] * 16)
# vyre's vector: a 4x4 all-white image stays all-white (the weights sum to 65536: 255 * 65536 >> 16).
ENTRY = register_case(OP_ID, _build, [_WHITE, bytes(64)], [_WHITE], category="visual", ulp=ULP,
                      bench=dict(width=1920, height=1080, radius=8, sigma=4.0))
