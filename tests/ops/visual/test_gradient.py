"""visual::gradient: axis-aligned ramps against the float CSS gradient within 1 level, many stops
and angles against the NumPy oracle (exact) on the reference and on Vulkan, hard stops, vyre's
whole-pixel range rounding at diagonal angles (pinned), and the stop-count errors."""
import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.visual.gradient import RED_TO_BLUE, ColorStop, gradient_constants, linear_gradient

from ..harness import run_equal
from ..oracles.visual_gradient import gradient_np, gradient_t_np
from ..oracles.visual_pixels import unpack

STOPS3 = (ColorStop(0.0, 0x80FF2010), ColorStop(0.4, 0xFF00C0FF), ColorStop(1.0, 0x2040A000))


def run_gradient(device, width, height, angle, stops):
    p = linear_gradient("img", width, height, angle, stops)
    _, ref = run_equal(p, device, {"img": np.full(width * height, 0x12345678, np.uint32)})
    np.testing.assert_array_equal(ref["img"], gradient_np(width, height, angle, stops))
    return ref["img"]


def css_ramp(t: np.ndarray, stops) -> np.ndarray:
    pos = np.asarray([s.position for s in stops], float)
    col = unpack(np.asarray([s.color for s in stops], np.uint32)).astype(float)
    return np.stack([np.interp(t, pos, col[:, k]) for k in range(4)], -1)


@pytest.mark.parametrize("angle,axis", [(0.0, "up"), (90.0, "right"), (180.0, "down"), (270.0, "left")])
@pytest.mark.parametrize("stops", [RED_TO_BLUE, STOPS3], ids=["2stops", "3stops"])
def test_axis_aligned_ramps_match_css_within_one_level(angle, axis, stops, vk_device):
    w, h = 19, 7
    got = unpack(run_gradient(vk_device, w, h, angle, stops)).reshape(h, w, 4)
    y, x = np.mgrid[0:h, 0:w].astype(float)
    t = {"up": (h - 1 - y) / (h - 1), "down": y / (h - 1), "right": x / (w - 1), "left": (w - 1 - x) / (w - 1)}[axis]
    ideal = css_ramp(t.reshape(-1), stops).reshape(h, w, 4)
    # t is floor(65536 * t) and each lerp rounds once: |error| <= 1/2 + 255/65536
    assert np.abs(got - ideal).max() <= 0.5 + 255 / 65536


@pytest.mark.parametrize("angle", [30.0, 135.0, 200.0, 315.0, -45.0, 720.0 + 90.0])
def test_oblique_angles_and_sizes_past_a_workgroup(angle, vk_device):
    run_gradient(vk_device, 37, 9, angle, STOPS3)


def test_many_stops_and_a_hard_stop(vk_device):
    stops = tuple(ColorStop(p, c) for p, c in [(0.0, 0xFF000000), (0.25, 0xFF0000FF), (0.5, 0xFF00FF00),
                                               (0.5, 0xFFFF0000), (0.75, 0x00FFFFFF), (1.0, 0xFF808080)])
    out = run_gradient(vk_device, 65, 1, 90.0, stops)   # range 64 pixels: t = 1024 * x
    assert gradient_t_np(65, 1, 90.0)[32] == 32768
    # the pair (0.5, 0.5) is empty: x = 31 is 15/16 of blue -> green (239, 16), red from exactly t = 0.5 on
    assert hex(out[31]) == "0xff00ef10" and hex(out[32]) == "0xffff0000"
    assert out[16] == 0xFF0000FF and out[-1] == 0xFF808080 and out[0] == 0xFF000000


def test_diagonal_ramps_stop_short_of_the_last_stop(vk_device):
    # vyre divides by ceil(range / 65536) whole pixels: at 45 degrees on 4x4 the range is
    # 278046 / 65536 = 4.24 pixels, divided as 5, so the far corner gets t = 55609 (0.85), not 1.
    assert gradient_constants(4, 4, 45.0) == (46341, -46341, 139023, 5)
    out = run_gradient(vk_device, 4, 4, 45.0, RED_TO_BLUE)
    assert gradient_t_np(4, 4, 45.0).max() == 55609
    assert hex(out[3]) == "0xffd80027" and 0xFFFF0000 not in out.tolist()


def test_registered_ramp(vk_device):
    assert [hex(v) for v in run_gradient(vk_device, 4, 1, 90.0, RED_TO_BLUE)] == [
        "0xff0000ff", "0xff5500aa", "0xffaa0055", "0xffff0000"]


@pytest.mark.parametrize("n", [0, 1, 17])
def test_stop_count_outside_2_to_16_raises_with_a_fix(n):
    with pytest.raises(OpParamError, match=f"needs 2..=16 stops, got {n}. Fix: "):
        linear_gradient("o", 4, 1, 90.0, [ColorStop(0.0, 0)] * n)


def test_positions_are_clamped_to_0_1():
    a = linear_gradient("o", 8, 1, 90.0, (ColorStop(-1.0, 0xFF0000FF), ColorStop(2.0, 0xFFFF0000)))
    assert a == linear_gradient("o", 8, 1, 90.0, RED_TO_BLUE)


def test_stops_are_plain_pairs_and_bad_ones_raise_with_a_fix():
    pairs = [[0.0, 0xFF0000FF], [1.0, 0xFFFF0000]]          # as JSON gives them back
    assert linear_gradient("o", 4, 1, 90.0, pairs) == linear_gradient("o", 4, 1, 90.0, RED_TO_BLUE)
    for bad in ([(0.0,), (1.0, 0)], 5, [(0.0, -1), (1.0, 0)]):
        with pytest.raises(OpParamError, match="Fix: "):
            linear_gradient("o", 4, 1, 90.0, bad)


def test_direction_matches_the_platform_sinf_cosf_rust_calls():
    ctypes = pytest.importorskip("ctypes")
    try:
        libm = ctypes.CDLL("libm.so.6")
    except OSError:
        pytest.skip("no glibc libm here")
    for f in (libm.sinf, libm.cosf):
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
    from vyre_vk.ops.visual.gradient import RADS_PER_DEG, direction_fp
    from vyre_vk.ops.visual.pixels import f32_round_to_i32
    for a in np.arange(-720, 720.01, 0.25, dtype=np.float32):
        rad = float(np.float32(a * RADS_PER_DEG))
        s, c = np.float32(libm.sinf(rad)), np.float32(libm.cosf(rad))
        want = (f32_round_to_i32(s * np.float32(65536)), f32_round_to_i32(-c * np.float32(65536)))
        assert direction_fp(float(a)) == want, a
