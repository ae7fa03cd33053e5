"""math::avg_floor beyond the tables: every pair of the edge set and sizes around the 64-lane
workgroup, on the reference and on Vulkan, against floor((a+b)/2) in 64-bit; builder errors."""
import itertools

import numpy as np
import pytest

from vyre_vk.ops.math import avg_floor
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.math_avg_floor import avg_floor_np
from ..oracles.u32_edges import EDGES, edgy_u32

U32 = np.uint32
OP = "vyre-libs::math::avg_floor"


def test_every_edge_pair(vk_device):
    pairs = np.asarray(list(itertools.product(EDGES.tolist(), EDGES.tolist())), np.uint64).astype(U32)
    a, b = pairs[:, 0].copy(), pairs[:, 1].copy()
    _, ref = run_equal(OP, vk_device, {"a": a, "b": b}, size=len(a))
    assert ref["out"].tolist() == [(int(x) + int(y)) // 2 for x, y in zip(a, b)]
    np.testing.assert_array_equal(ref["out"], avg_floor_np(a, b))


@pytest.mark.parametrize("size", [1, 63, 64, 65, 1000])
def test_sizes_around_the_workgroup(size, vk_device):
    rng = np.random.default_rng(size)
    ins = {"a": edgy_u32(rng, size), "b": edgy_u32(rng, size)}
    _, ref = run_equal(OP, vk_device, ins, size=size)
    np.testing.assert_array_equal(ref["out"], avg_floor_np(ins["a"], ins["b"]))


def test_aliased_buffers_raise_with_a_fix():
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        avg_floor.avg_floor("a", "a", "out", 4)
