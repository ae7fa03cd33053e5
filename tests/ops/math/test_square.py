"""math::square beyond the tables: sizes around the 64-lane workgroup against x*x rounded once
(float64 product -> f32), bit-exact on the reference and on Vulkan; signed zeros, infinities, NaN,
overflow to inf and a square below f32's normal range."""
import numpy as np
import pytest

from ..harness import run_both

F32 = np.float32
OP = "vyre-libs::math::square"


def bits(a) -> list:
    return np.asarray(a, F32).view(np.uint32).tolist()


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_bit_exact_single_rounding(n, vk_device):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-10, 10, n)).astype(F32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=n)
    want = (x.astype(np.float64) ** 2).astype(F32)          # the exact square, rounded once to f32
    assert bits(ref["output"]) == bits(want)
    assert bits(got["output"]) == bits(want)


def test_special_values(vk_device):
    x = np.asarray([0.0, -0.0, np.inf, -np.inf, np.nan, 2e19, -3.0, 1.5], F32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=x.size)
    for out in (ref["output"], got["output"]):
        assert bits(out[:2]) == [0, 0]                      # (+-0)^2 = +0
        assert out[2] == np.inf and out[3] == np.inf and np.isnan(out[4])
        assert out[5] == np.inf                             # 4e38 overflows f32
        assert out[6:].tolist() == [9.0, 2.25]


def test_tiny_squares_agree_between_reference_and_vulkan(vk_device):
    # 1e-20^2 = 1e-40 is below f32's normal range: whatever the reference does there (vyre's
    # reference flushes subnormal results), Vulkan must do the same
    x = np.asarray([1e-20, -1e-20, 1.1e-19, 1.0842022e-19], F32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=x.size)
    assert bits(got["output"]) == bits(ref["output"])
    assert bits(ref["output"][:2]) == [0, 0]                 # 1e-40: flushed to +0
    assert bits(ref["output"][2:3]) == bits([(np.float64(x[2]) ** 2)])   # 1.21e-38 is normal: rounded
