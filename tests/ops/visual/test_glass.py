"""visual::glass: the full pipelines (blur, blur, filter; and the half-resolution downsample,
blur, blur, upsample, filter) run stage by stage on the reference and on Vulkan against the NumPy
composition (exact); the registered program's Region nesting; tint_rgba has no effect (as in vyre)."""
import numpy as np
import pytest

from vyre_vk.ops.visual.glass import GlassParams, _build, glass_stages, glass_stages_half_res

from ..harness import run_equal
from ..oracles.visual_blur import blur_2pass_np
from ..oracles.visual_downsample import downsample_np
from ..oracles.visual_filter_chain import filter_chain_np
from ..oracles.visual_pixels import edgy_pixels
from ..oracles.visual_upsample import upsample_np


def run_stages(device, programs, buffers):
    """Dispatch `programs` in order over named arrays (each result replaces its buffer)."""
    for p in programs:
        ins = {b.name: buffers[b.name] for b in p.buffers}
        _, ref = run_equal(p, device, ins)
        buffers.update(ref)
    return buffers


def test_full_resolution_pipeline(vk_device):
    params = GlassParams(12, 9, 2, 1.2, 0x0DFFFFFF, 1.1, 0.75)
    pixels = edgy_pixels(np.random.default_rng(1), 12 * 9)
    blur, flt = glass_stages("scene", "output", "scratch", params)
    junk = np.full(pixels.size, 0xA5A5A5A5, np.uint32)
    out = run_stages(vk_device, [*blur.programs(), flt], {"scene": pixels, "scratch": junk, "output": junk.copy()})
    want = filter_chain_np(blur_2pass_np(pixels, 12, 9, 2, 1.2), 1.1, 1.0, 0.75, 0.0)
    np.testing.assert_array_equal(out["output"], want)


def test_half_resolution_pipeline(vk_device):
    w, h = 20, 16
    params = GlassParams(w, h, 10, 4.0, 0x0DFFFFFF, 0.9, 1.2)
    pipe = glass_stages_half_res("scene", "output", "scratch", "half", "half_scratch", params)
    assert pipe.half_res and pipe.stage_count() == 5 and len(pipe.programs()) == 5
    pixels = edgy_pixels(np.random.default_rng(2), w * h)
    hw = (w // 2) * (h // 2)
    # the half-size blur's horizontal pass writes the first (W/2)*(H/2) pixels of `scratch` (see glass.py)
    assert [b.name for b in pipe.blur.horizontal.buffers] == ["half", "scratch"]
    bufs = {"scene": pixels, "output": np.ones(w * h, np.uint32), "half": np.ones(hw, np.uint32),
            "half_scratch": np.ones(hw, np.uint32), "scratch": np.ones(hw, np.uint32)}
    out = run_stages(vk_device, pipe.programs(), bufs)
    small = blur_2pass_np(downsample_np(pixels, w, h), w // 2, h // 2, 5, 2.0)
    want = filter_chain_np(upsample_np(small, w, h), 0.9, 1.0, 1.2, 0.0)
    np.testing.assert_array_equal(out["output"], want)


@pytest.mark.parametrize("params", [GlassParams(16, 16, 8, 3.0, 0, 1.0, 1.0), GlassParams(3, 64, 12, 3.0, 0, 1.0, 1.0)])
def test_small_radius_or_image_stays_full_resolution(params):
    pipe = glass_stages_half_res("a", "b", "c", "d", "e", params)
    assert not pipe.half_res and pipe.stage_count() == 3 and pipe.downsample is None


def test_registered_program_nests_blur_under_glass_and_ignores_tint():
    p = _build()
    outer = p.entry[0]
    blur = outer.body[0]
    conv = blur.body[0]
    assert (outer.generator, outer.source_region) == ("vyre-libs::visual::glass", None)
    assert (blur.generator, blur.source_region) == ("vyre-libs::visual::blur", "vyre-libs::visual::glass")
    assert (conv.generator, conv.source_region) == ("vyre-primitives::math::conv1d", "vyre-libs::visual::blur")
    assert _build(tint_rgba=0xFF0000FF, brightness=3.0, saturation=0.0) == p   # later stages only
