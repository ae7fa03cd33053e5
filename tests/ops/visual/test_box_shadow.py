"""visual::box_shadow: random rects, blur widths and colours against the NumPy oracle (exact) on
the reference and on Vulkan; the inclusive box edge; blur widths below 1 pixel; errors."""
import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.visual.box_shadow import box_shadow, shadow_blur

from ..harness import run_equal
from ..oracles.visual_box_shadow import box_shadow_np


def run_shadow(device, *args):
    p = box_shadow("out", *args)
    n = args[0] * args[1]
    _, ref = run_equal(p, device, {"out": np.full(n, 0xFFFFFFFF, np.uint32)})
    np.testing.assert_array_equal(ref["out"], box_shadow_np(*args))
    return ref["out"]


@pytest.mark.parametrize("seed", range(4))
def test_random_shadows_match_the_oracle(seed, vk_device):
    rng = np.random.default_rng(seed)
    w, h = int(rng.integers(1, 40)), int(rng.integers(1, 20))
    rx, ry, rw, rh = (int(v) for v in rng.integers(0, 30, 4))
    run_shadow(vk_device, w, h, rx, ry, rw, rh, float(rng.uniform(0, 12)), int(rng.integers(0, 2**32)))


def test_box_is_inclusive_of_its_far_edge(vk_device):
    a = run_shadow(vk_device, 12, 1, 2, 0, 4, 1, 1.0, 0xFF000000).tolist()
    # cx = 4, hw = 2: columns 2..=6 are inside (5 columns for rect_w = 4); 1 and 7 fall off to 0
    assert [v >> 24 for v in a] == [0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0]


def test_blur_below_one_pixel_is_one_pixel():
    assert [shadow_blur(x) for x in (0.0, 0.49, 0.5, 1.4, 2.5, -3.0, float("nan"))] == [1, 1, 1, 1, 3, 1, 1]


def test_colour_channels_are_kept_and_alpha_scaled(vk_device):
    out = run_shadow(vk_device, 9, 9, 3, 3, 2, 2, 4.0, 0x80336699)
    assert set(v & 0xFFFFFF for v in out.tolist()) == {0x336699}
    assert sorted(set(v >> 24 for v in out.tolist())) == [0x20, 0x40, 0x60, 0x80]


def test_bad_parameters_raise_with_a_fix():
    with pytest.raises(OpParamError, match="`rect_w`.*Fix: "):
        box_shadow("o", 4, 4, 0, 0, -1, 2, 1.0, 0)
    with pytest.raises(OpParamError, match="overflows u32. Fix: "):
        box_shadow("o", 4, 4, 2**32 - 1, 0, 4, 2, 1.0, 0)
