"""math::lzcnt_u32 / tzcnt_u32 beyond the tables: 0, every single bit and its complement, random
words, sizes around the 64-lane workgroup, on the reference and on Vulkan, against a bit loop
and Python's int.bit_length; builder errors."""
import numpy as np
import pytest

from vyre_vk.ops.math import bit_count_ops
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.u32_edges import EDGES, bit_loop_lzcnt, bit_loop_tzcnt, edgy_u32

CASES = [("lzcnt_u32", bit_loop_lzcnt, lambda v: 32 - v.bit_length()),
         ("tzcnt_u32", bit_loop_tzcnt, lambda v: (v & -v).bit_length() - 1 if v else 32)]


@pytest.mark.parametrize("op,bit_loop,from_int", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("size", [0, 1, 65, 1000])
def test_against_a_bit_loop(op, bit_loop, from_int, size, vk_device):
    x = EDGES.copy() if size == 0 else edgy_u32(np.random.default_rng(size), size)  # 0: the edge set
    _, ref = run_equal(f"vyre-libs::math::{op}", vk_device, {"input": x}, size=x.size)
    np.testing.assert_array_equal(ref["out"], bit_loop(x))
    assert ref["out"].tolist() == [from_int(int(v)) for v in x]


def test_single_bits_count_both_ways(vk_device):
    x = np.asarray([1 << k for k in range(32)] + [0], np.uint32)
    _, lz = run_equal("vyre-libs::math::lzcnt_u32", vk_device, {"input": x}, size=33)
    _, tz = run_equal("vyre-libs::math::tzcnt_u32", vk_device, {"input": x}, size=33)
    assert lz["out"].tolist() == [31 - k for k in range(32)] + [32]
    assert tz["out"].tolist() == list(range(32)) + [32]


@pytest.mark.parametrize("build", [bit_count_ops.lzcnt_u32, bit_count_ops.tzcnt_u32])
def test_aliased_buffers_raise_with_a_fix(build):
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        build("x", "x", 4)
