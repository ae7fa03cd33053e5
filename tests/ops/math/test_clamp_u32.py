"""math::clamp_u32 beyond the tables: ordered and crossed bounds (lo > hi gives hi, as min(max))
and sizes around the 64-lane workgroup, on the reference and on Vulkan, against NumPy."""
import numpy as np
import pytest

from vyre_vk.ops.math import clamp_u32

from ..harness import run_equal
from ..oracles.math_clamp_u32 import clamp_inputs, clamp_np

U32 = np.uint32
OP = "vyre-libs::math::clamp_u32"


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_sizes_and_crossed_bounds(n, vk_device):
    ins = clamp_inputs(np.random.default_rng(n), n)
    _, ref = run_equal(OP, vk_device, ins, n=n)
    want = [min(max(x, lo), hi) for x, lo, hi in zip(ins["input"].tolist(), ins["lo"].tolist(), ins["hi"].tolist())]
    assert ref["out"].tolist() == want
    np.testing.assert_array_equal(ref["out"], clamp_np(ins["input"], ins["lo"], ins["hi"]))


def test_crossed_bounds_give_hi_and_extremes(vk_device):
    ins = {"input": np.asarray([0, 50, 0xFFFFFFFF, 0, 0xFFFFFFFF], U32),
           "lo": np.asarray([10, 10, 10, 0, 0], U32), "hi": np.asarray([5, 5, 5, 0xFFFFFFFF, 0xFFFFFFFF], U32)}
    _, ref = run_equal(OP, vk_device, ins, n=5)
    assert ref["out"].tolist() == [5, 5, 5, 0, 0xFFFFFFFF]


def test_builds_the_registered_interface():
    p = clamp_u32.clamp_u32("x", "l", "h", "o", 7)
    assert [(b.name, b.binding, b.count) for b in p.buffers] == [("x", 0, 7), ("l", 1, 7), ("h", 2, 7), ("o", 3, 7)]
