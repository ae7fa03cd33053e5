"""visual::blur: both passes of the separable Gaussian on the reference and on Vulkan against
the NumPy oracle (exact) and against a float Gaussian (within 1 level per pass); radius
clamping, skipped zero weights, the degenerate sigma = 0 kernel, and builder errors."""
import numpy as np
import pytest

from vyre_vk.ir import Load
from vyre_vk.ir.walk import node_all_exprs
from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.visual.blur import (GaussianKernel, GaussianKernelError, gaussian_blur_2pass,
                                     gaussian_blur_2pass_with_kernel, gaussian_weights)

from ..harness import run_equal
from ..oracles.visual_blur import blur_2pass_np, blur_axis_np, gaussian_weights_np
from ..oracles.visual_pixels import edgy_pixels, unpack


def run_two_pass(device, pixels, width, height, radius, sigma):
    stages = gaussian_blur_2pass("img", "out", "tmp", width, height, radius, sigma)
    assert stages.stage_count() == 2 and stages.programs() == (stages.horizontal, stages.vertical)
    junk = np.full(width * height, 0xDEADBEEF, np.uint32)
    _, mid = run_equal(stages.horizontal, device, {"img": pixels, "tmp": junk})
    _, out = run_equal(stages.vertical, device, {"tmp": mid["tmp"], "out": junk})
    return mid["tmp"], out["out"]


def float_blur_axis(pixels, width, height, radius, sigma, horizontal):
    r = min(radius, 64)
    x = np.arange(-r, r + 1, dtype=np.float64)
    g = np.exp(-x * x / (2.0 * float(np.float32(sigma)) ** 2))
    g /= g.sum()
    img = unpack(pixels).reshape(height, width, 4).astype(np.float64)
    axis, n = (1, width) if horizontal else (0, height)
    acc = sum(gk * np.take(img, np.clip(np.arange(n) + k - r, 0, n - 1), axis=axis) for k, gk in enumerate(g))
    return acc.reshape(-1, 4)


@pytest.mark.parametrize("width,height,radius,sigma", [(1, 1, 1, 0.8), (7, 5, 1, 0.8), (17, 16, 3, 1.5),
                                                       (3, 9, 5, 2.0), (23, 13, 2, 0.6)])
def test_two_pass_matches_numpy_exactly_and_a_float_gaussian_within_one_level(width, height, radius, sigma,
                                                                               vk_device):
    rng = np.random.default_rng(width * 100 + height)
    pixels = edgy_pixels(rng, width * height)
    mid, out = run_two_pass(vk_device, pixels, width, height, radius, sigma)
    np.testing.assert_array_equal(mid, blur_axis_np(pixels, width, height, radius, sigma, True))
    np.testing.assert_array_equal(out, blur_2pass_np(pixels, width, height, radius, sigma))
    # One pass in fixed point vs the float convolution: the floor of >> 16 and the rounded weights
    # (|w_k - 65536 g_k| <= 1/2 each) keep every channel within 1 level.
    ideal = float_blur_axis(pixels, width, height, radius, sigma, True)
    assert np.abs(unpack(mid) - np.minimum(ideal, 255)).max() <= 1.0


def test_uniform_image_stays_uniform_and_registered_weights_sum_to_65537(vk_device):
    assert gaussian_weights(1, 0.8) == [15663, 34211, 15663]
    pixels = np.full(30, 0x80FF4001, np.uint32)
    mid, out = run_two_pass(vk_device, pixels, 6, 5, 1, 0.8)
    assert set(mid.tolist()) == set(out.tolist()) == {0x80FF4001}


@pytest.mark.parametrize("radius,sigma", [(0, 1.0), (1, 0.8), (4, 2.5), (6, 0.3), (64, 20.0), (200, 20.0)])
def test_weights_are_the_normalised_gaussian(radius, sigma):
    w = gaussian_weights(radius, sigma)
    np.testing.assert_array_equal(w, gaussian_weights_np(radius, sigma))
    assert len(w) == 2 * min(radius, 64) + 1 and abs(sum(w) - 65536) <= len(w) // 2 + 1


def test_radius_is_clamped_to_64_and_zero_weights_emit_no_tap():
    assert GaussianKernel.new(200, 30.0).radius == 64
    w = gaussian_weights(5, 0.5)           # the outer weights round to 0
    p = gaussian_blur_2pass("a", "b", "c", 16, 4, 5, 0.5).horizontal
    loads = [e for e in node_all_exprs(p.entry) if isinstance(e, Load)]
    assert len(loads) == sum(1 for x in w if x) < len(w)


def test_sigma_zero_gives_zero_weights_and_a_black_image(vk_device):
    # Rust: -0/0 = NaN at the centre, so every normalised weight is NaN and `as u32` makes it 0.
    assert gaussian_weights(2, 0.0) == [0] * 5
    p = gaussian_blur_2pass("a", "b", "c", 4, 2, 2, 0.0).horizontal
    _, out = run_equal(p, vk_device, {"a": np.full(8, 0xFFFFFFFF, np.uint32), "c": np.ones(8, np.uint32)})
    assert out["c"].tolist() == [0] * 8


def test_precomputed_kernel_builds_the_same_programs():
    k = GaussianKernel.new(2, 1.1)
    assert gaussian_blur_2pass_with_kernel("a", "b", "c", 5, 5, k) == gaussian_blur_2pass("a", "b", "c", 5, 5, 2, 1.1)
    assert GaussianKernel.from_weights(1, [1, 2, 1]).weights == (1, 2, 1)
    with pytest.raises(GaussianKernelError, match="expected 3 weights, got 2. Fix: "):
        GaussianKernel.from_weights(1, [1, 2])


@pytest.mark.parametrize("kw,match", [(dict(width=-1), "`width`"), (dict(height=2.5), "`height`"),
                                      (dict(sigma="x"), "`sigma`"), (dict(radius=True), "`radius`")])
def test_bad_parameters_raise_with_a_fix(kw, match):
    from vyre_vk.ops import get
    with pytest.raises(OpParamError, match=match) as info:
        get("vyre-libs::visual::blur").build_with(**kw)
    assert "Fix:" in str(info.value)


def test_aliased_buffers_raise_with_a_fix():
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        gaussian_blur_2pass("a", "b", "a", 4, 4, 1, 0.8)
