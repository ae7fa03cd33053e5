"""math::reduce_mean beyond the tables: the op's summation order written in NumPy f32 (lane
sums over chunks of 256, then the 128..1 tree, then / f32(n)) is bit-exact on the reference and
on Vulkan for n around the 256-lane tile; within the stated window of the float64 mean; NaN and
infinities propagate; n = 0 is refused."""
import numpy as np
import pytest

from vyre_vk.ops.math import reduce_mean
from vyre_vk.ops.registry import OpParamError

from ..harness import run_both
from ..measure import scaled_ulps
from ..oracles.math_reduce_mean import reduce_mean_f32_np, window

F32 = np.float32
OP = "vyre-libs::math::reduce_mean"


@pytest.mark.parametrize("n", [1, 3, 255, 256, 257, 777, 3000])
def test_bit_exact_in_the_ops_order(n, vk_device):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 4.0 + 1.0).astype(F32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=n)
    want = reduce_mean_f32_np(x)
    assert ref["output"].view(np.uint32)[0] == np.asarray([want], F32).view(np.uint32)[0]
    assert got["output"].view(np.uint32)[0] == ref["output"].view(np.uint32)[0]
    # and within the stated window of the mean in float64
    x64 = x.astype(np.float64)
    assert scaled_ulps(ref["output"], np.asarray([x64.mean()]), np.asarray([np.abs(x64).mean()])) <= window({"n": n})


def test_order_matters_and_is_the_ops():
    # 2^24 + 1 + 1 ... : a sequential f32 sum loses the ones, the lane/tree order keeps some
    x = np.asarray([2.0 ** 24] + [1.0] * 511, F32)
    seq = F32(0)
    for v in x:
        seq = F32(seq + v)
    assert reduce_mean_f32_np(x) != F32(seq / F32(512))


def test_order_matters_on_the_reference_and_vulkan(vk_device):
    x = np.asarray([2.0 ** 24] + [1.0] * 511, F32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=x.size)
    want = reduce_mean_f32_np(x)
    assert ref["output"][0] == want and got["output"][0] == want


@pytest.mark.parametrize("special,check", [
    (np.nan, np.isnan), (np.inf, lambda v: v == np.inf), (-np.inf, lambda v: v == -np.inf)])
def test_specials_propagate(special, check, vk_device):
    x = np.asarray([1.0, special, 3.0, 4.0], F32)
    _, ref, got = run_both(OP, vk_device, {"input": x}, n=4)
    assert check(ref["output"][0]) and check(got["output"][0])


def test_empty_reduction_is_refused():
    with pytest.raises(OpParamError, match="n=0 is invalid.*|Fix: reduce_mean n=0"):
        reduce_mean.reduce_mean("input", "output", 0)
