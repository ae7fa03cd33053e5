"""math::weighted_sum_fma_f32 beyond the tables: the fused chain acc = fma(w[i], v[i], acc)
emulated exactly in NumPy (tests/ops/oracles/math_weighted_sum.fma_f32) is bit-exact on the
reference and on Vulkan; a case where fusing changes the result; within the stated window of the
float64 sum; n = 1, NaN and inf; n = 0 is refused."""
import numpy as np
import pytest

from vyre_vk.ops.math import weighted_sum
from vyre_vk.ops.registry import OpParamError

from ..harness import run_both
from ..measure import scaled_ulps
from ..oracles.math_weighted_sum import fma_f32, weighted_sum_f32_np

F32 = np.float32
OP = "vyre-libs::math::weighted_sum_fma_f32"


def u32_bits(v) -> int:
    return int(np.asarray([v], F32).view(np.uint32)[0])


def test_fma_emulation_is_single_rounding():
    a = F32(1 + 2.0 ** -12)
    # a*a = 1 + 2^-11 + 2^-24 exactly: fused with -1 it keeps the 2^-24; mul then add loses it
    assert fma_f32(np.asarray([a]), np.asarray([a]), np.asarray([F32(-1)]))[0] == F32(2.0 ** -11 + 2.0 ** -24)
    assert F32(F32(a * a) - F32(1)) == F32(2.0 ** -11)
    # a double-rounding trap: the f64 sum sits on an f32 midpoint, the exact sum just above it
    c = np.asarray([F32(1.0)])
    tiny = np.asarray([F32(2.0 ** -24)]), np.asarray([F32(1 + 2.0 ** -23)])   # product 2^-24 + 2^-47
    assert fma_f32(*tiny, c)[0] == np.nextafter(F32(1), F32(2))


@pytest.mark.parametrize("n", [1, 2, 17, 1000])
def test_bit_exact_fused_chain(n, vk_device):
    rng = np.random.default_rng(n)
    w, v = rng.standard_normal(n).astype(F32), rng.standard_normal(n).astype(F32)
    _, ref, got = run_both(OP, vk_device, {"weights": w, "values": v}, n=n)
    want = weighted_sum_f32_np(w, v)
    assert u32_bits(ref["output"][0]) == u32_bits(want)
    assert u32_bits(got["output"][0]) == u32_bits(want)
    prod = w.astype(np.float64) * v.astype(np.float64)
    assert scaled_ulps(ref["output"], np.asarray([prod.sum()]), np.asarray([np.abs(prod).sum()])) <= n / 2


def test_fusing_is_observable(vk_device):
    a = F32(1 + 2.0 ** -12)
    ins = {"weights": np.asarray([1.0, a], F32), "values": np.asarray([-1.0, a], F32)}
    _, ref, got = run_both(OP, vk_device, ins, n=2)
    assert ref["output"][0] == got["output"][0] == F32(2.0 ** -11 + 2.0 ** -24)


@pytest.mark.parametrize("w,v,check", [
    ([1.0, np.nan, 1.0], [1.0, 1.0, 1.0], np.isnan), ([1.0, 1.0, 1.0], [1.0, np.nan, 1.0], np.isnan),
    ([1.0, np.inf, 1.0], [1.0, 1.0, 1.0], np.isinf), ([3.0], [4.0], lambda r: r == 12.0)])
def test_specials_and_one_term(w, v, check, vk_device):
    ins = {"weights": np.asarray(w, F32), "values": np.asarray(v, F32)}
    _, ref, got = run_both(OP, vk_device, ins, n=len(w))
    assert check(ref["output"][0]) and check(got["output"][0])


def test_empty_reduction_is_refused():
    with pytest.raises(OpParamError, match="n=0 is invalid.*Fix:|Fix: weighted_sum_fma_f32 n=0"):
        weighted_sum.weighted_sum_fma_f32("w", "v", "o", 0)
