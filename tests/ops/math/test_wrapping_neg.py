"""math::wrapping_neg beyond the tables: edge values (0, 1, 2^31, u32::MAX) and sizes around
the 64-lane workgroup, on the reference and on Vulkan, against -x mod 2^32; builder errors."""
import numpy as np
import pytest

from vyre_vk.ops.math import wrapping_neg
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.math_wrapping_neg import wrapping_neg_np
from ..oracles.u32_edges import EDGES, edgy_u32

OP = "vyre-libs::math::wrapping_neg"


def test_edges(vk_device):
    _, ref = run_equal(OP, vk_device, {"a": EDGES.copy()}, size=len(EDGES))
    assert ref["out"].tolist() == [(-int(x)) % 2**32 for x in EDGES]
    assert ref["out"][EDGES.tolist().index(0x80000000)] == 0x80000000      # -(2^31) is itself


@pytest.mark.parametrize("size", [1, 63, 64, 65, 1000])
def test_sizes_around_the_workgroup(size, vk_device):
    a = edgy_u32(np.random.default_rng(size), size)
    _, ref = run_equal(OP, vk_device, {"a": a}, size=size)
    np.testing.assert_array_equal(ref["out"], wrapping_neg_np(a))


def test_aliased_buffers_raise_with_a_fix():
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        wrapping_neg.wrapping_neg("x", "x", 4)
