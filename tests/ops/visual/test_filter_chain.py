"""visual::filter_chain: each filter alone against its float formula within a stated window,
the whole chain against the NumPy oracle (exact) on the reference and on Vulkan, the factor
conversions (negative, huge, NaN, out-of-range invert), and the invert step's absence at 0."""
import numpy as np
import pytest

from vyre_vk.ops.visual.filter_chain import filter_chain, filter_factors
from vyre_vk.ops.visual.pixels import U32_MAX

from ..harness import run_equal
from ..oracles.visual_filter_chain import filter_chain_np
from ..oracles.visual_pixels import edgy_pixels, unpack

N = 300   # > one workgroup of 256


def run_chain(device, pixels, *factors):
    _, ref = run_equal(filter_chain("pixels", pixels.size, *factors), device, {"pixels": pixels})
    np.testing.assert_array_equal(ref["pixels"], filter_chain_np(pixels, *factors))
    got = unpack(ref["pixels"])
    np.testing.assert_array_equal(got[:, 3], unpack(pixels)[:, 3])   # alpha untouched
    return got[:, :3], unpack(pixels)[:, :3].astype(float)


@pytest.fixture(scope="module")
def pixels():
    return edgy_pixels(np.random.default_rng(7), N)


@pytest.mark.parametrize("b", [0.0, 0.5, 1.0, 1.7])
def test_brightness_alone_within_one_level(b, pixels, vk_device):
    got, c = run_chain(vk_device, pixels, b, 1.0, 1.0, 0.0)
    assert np.abs(got - np.minimum(c * b, 255)).max() < 1.0 + 1e-9   # one floor


@pytest.mark.parametrize("k", [0.0, 0.6, 1.0, 1.8])
def test_contrast_alone_within_one_level(k, pixels, vk_device):
    got, c = run_chain(vk_device, pixels, 1.0, k, 1.0, 0.0)
    assert np.abs(got - np.clip(128 + (c - 128) * k, 0, 255)).max() < 1.0 + 1e-9   # one floor of |delta|


@pytest.mark.parametrize("s", [0.0, 0.5, 1.0, 1.5])
def test_saturate_alone_within_a_stated_window(s, pixels, vk_device):
    got, c = run_chain(vk_device, pixels, 1.0, 1.0, s, 0.0)
    luma = c @ np.asarray([0.2126, 0.7152, 0.0722])
    ideal = np.clip(luma[:, None] + (c - luma[:, None]) * s, 0, 255)
    # the fixed-point luma is low by < 3 levels (three floors) plus the 16.16 coefficients'
    # rounding (< 0.01 level); it moves the result by |1 - s| times that, and the delta floors once more
    assert np.abs(got - ideal).max() < 1.0 + abs(1 - s) * 3.01


@pytest.mark.parametrize("i", [0.25, 0.5, 1.0])
def test_invert_alone_within_two_levels(i, pixels, vk_device):
    got, c = run_chain(vk_device, pixels, 1.0, 1.0, 1.0, i)
    assert np.abs(got - (c * (1 - i) + (255 - c) * i)).max() < 2.0   # two floors


@pytest.mark.parametrize("factors", [(1.15, 0.85, 1.4, 0.3), (0.3, 2.5, 0.0, 0.9), (2.0, 0.1, 3.0, 1.0)])
def test_whole_chain_matches_the_oracle(factors, pixels, vk_device):
    run_chain(vk_device, pixels, *factors)


def test_factor_conversion_follows_rust_casts():
    assert filter_factors(1.0, 1.0, 1.0, 0.0) == (65536, 65536, 65536, 0)
    assert filter_factors(-1.0, float("nan"), 1e30, 7.0) == (0, 0, U32_MAX, 65536)   # saturate; clamp invert
    assert filter_factors(0.5, 2.0, 0.75, float("nan"))[3] == 0                       # NaN invert: none
    assert filter_factors(1.0 / 3, 1, 1, -2.0) == (21845, 65536, 65536, 0)


def test_extreme_factors_on_vulkan(pixels, vk_device):
    got, c = run_chain(vk_device, pixels, 1e30, 1.0, 1.0, 0.0)
    np.testing.assert_array_equal(got, np.where(c > 0, 255, 0))
    got, c = run_chain(vk_device, pixels, 1.0, 1.0, 1.0, 9.0)                       # clamped to a full invert
    np.testing.assert_array_equal(got, 255 - c)


def test_invert_step_is_emitted_only_for_a_nonzero_factor():
    with_inv = filter_chain("p", 4, 1.0, 1.0, 1.0, 0.5)
    without = filter_chain("p", 4, 1.0, 1.0, 1.0, 0.0)
    body = lambda p: p.entry[0].body[0].body[1].then   # Region(op) > Region(map) > if
    assert len(body(with_inv)) == len(body(without)) + 6


@pytest.mark.parametrize("seed", range(3))
def test_random_factors_match_the_oracle(seed, pixels, vk_device):
    rng = np.random.default_rng(seed)
    run_chain(vk_device, pixels, *(float(x) for x in rng.uniform(0, 3, 3)), float(rng.uniform(-0.2, 1.2)))
