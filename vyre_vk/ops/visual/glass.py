"""`vyre-libs::visual::glass`: the glass material, a Gaussian blur followed by an in-place
brightness/saturation filter (port of vyre-libs/src/visual/glass/mod.rs).

The pipeline is several dispatches, run in order:

- ``glass_stages``: blur horizontal ``input -> scratch``, blur vertical ``scratch -> output``,
  then ``filter_chain(output, brightness, 1.0, saturation, 0.0)`` in place;
- ``glass_stages_half_res`` (blur_radius > 8 and both sides >= 4): downsample ``input -> half``,
  blur at half size (radius/2 at least 1, sigma/2), upsample ``half_scratch -> output``, filter.

The registered op is ``tag_program(glass, <the blur's horizontal pass>)`` over ``scene`` (ro) and
``scratch`` (rw), 4x4, radius 1, sigma 0.8: ``Region(glass){ Region(blur, parent=glass){
Region(conv1d, parent=blur){...} } }``. ``tint_rgba`` is carried but, as in vyre, never applied.

Deviation from vyre (a bug there): vyre's half-res blur is ``gaussian_blur_2pass(half,
half_scratch, half, ...)``, i.e. its horizontal pass reads and writes ``half`` in one dispatch
(two declarations of one buffer, pixels racing with their neighbours' writes). Here the
horizontal pass writes the full-size ``scratch`` instead (unused on that path, and large
enough), so the result is the blur vyre intends.

Example::

    >>> p = _build()
    >>> [b.name for b in p.buffers], p.entry[0].body[0].generator, p.entry[0].body[0].source_region
    (['scene', 'scratch'], 'vyre-libs::visual::blur', 'vyre-libs::visual::glass')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...ir import Program
from ..nn.linear.tiled import tag_program  # vyre-harness region.rs tag_program
from ..registry import register_case
from ..wire import pack_u32_slice
from .blur import GaussianBlurStages, gaussian_blur_2pass
from .downsample import downsample_2x
from .filter_chain import filter_chain
from .pixels import check_u32, pixel_count
from .upsample import upsample_2x

OP_ID = "vyre-libs::visual::glass"
ULP = None  # u32 pixels: exact
#: The half-resolution path pays off only above this blur radius (vyre's threshold).
HALF_RES_MIN_RADIUS = 8


@dataclass(frozen=True)
class GlassParams:
    """vyre's glass material parameters (image size, blur radius and sigma, tint, brightness, saturation)."""
    width: int
    height: int
    blur_radius: int
    blur_sigma: float
    tint_rgba: int          # carried for API parity; vyre never applies it
    brightness: float
    saturation: float


def glass_blur_stage(input: str, output: str, scratch: str, params: GlassParams) -> GaussianBlurStages:
    """The blur dispatches (``input -> scratch -> output``): the critical path."""
    return gaussian_blur_2pass(input, output, scratch, params.width, params.height, params.blur_radius,
                               params.blur_sigma)


def glass_filter_stage(pixels: str, params: GlassParams) -> Program:
    """The tint stage, in place on the blurred pixels: brightness and saturation, contrast 1, no invert."""
    count = pixel_count(check_u32(OP_ID, "width", params.width), check_u32(OP_ID, "height", params.height))
    return filter_chain(pixels, count, params.brightness, 1.0, params.saturation, 0.0)


def glass_stages(input: str, output: str, scratch: str, params: GlassParams) -> tuple[GaussianBlurStages, Program]:
    """(blur stages, filter program): dispatch blur.horizontal, blur.vertical, then the filter."""
    return glass_blur_stage(input, output, scratch, params), glass_filter_stage(output, params)


@dataclass(frozen=True)
class GlassPipeline:
    """vyre's ``GlassHalfResPipeline``: ``half_res`` tells which variant; `downsample` and
    `upsample` are None on the full-resolution path."""
    half_res: bool
    blur: GaussianBlurStages
    filter: Program
    downsample: Optional[Program] = None
    upsample: Optional[Program] = None

    def stage_count(self) -> int:
        return self.blur.stage_count() + (3 if self.half_res else 1)

    def programs(self) -> list[Program]:
        """Every dispatch in order."""
        if not self.half_res:
            return [*self.blur.programs(), self.filter]
        return [self.downsample, *self.blur.programs(), self.upsample, self.filter]  # type: ignore[list-item]


def glass_stages_half_res(input: str, output: str, scratch: str, half: str, half_scratch: str,
                          params: GlassParams) -> GlassPipeline:
    """The half-resolution pipeline for radii above 8 (else the full-resolution one).

    Buffers: input, output, scratch ``W*H``; half, half_scratch ``(W/2)*(H/2)``. The half-size
    blur runs ``half -> scratch -> half_scratch`` (see the module doc for vyre's aliasing)."""
    width, height = check_u32(OP_ID, "width", params.width), check_u32(OP_ID, "height", params.height)
    radius = check_u32(OP_ID, "blur_radius", params.blur_radius)
    if radius <= HALF_RES_MIN_RADIUS or width < 4 or height < 4:
        blur, flt = glass_stages(input, output, scratch, params)
        return GlassPipeline(False, blur, flt)
    down = downsample_2x(input, half, width, height)
    blur = gaussian_blur_2pass(half, half_scratch, scratch, width // 2, height // 2, max(radius // 2, 1),
                               float(params.blur_sigma) / 2.0)
    up = upsample_2x(half_scratch, output, width, height)
    return GlassPipeline(True, blur, glass_filter_stage(output, params), down, up)


def _build(width: int = 4, height: int = 4, blur_radius: int = 1, blur_sigma: float = 0.8,
           tint_rgba: int = 0x0DFFFFFF, brightness: float = 1.0, saturation: float = 0.75) -> Program:
    params = GlassParams(width, height, blur_radius, blur_sigma, tint_rgba, brightness, saturation)
    return tag_program(OP_ID, glass_blur_stage("scene", "output", "scratch", params).horizontal)


_WHITE = pack_u32_slice([0xFFFFFFFF] * 16)
# vyre's vector: a 4x4 all-white scene stays all-white through the horizontal blur.
ENTRY = register_case(OP_ID, _build, [_WHITE, bytes(64)], [_WHITE], category="visual", ulp=ULP,
                      bench=dict(width=1920, height=1080, blur_radius=8, blur_sigma=4.0))
