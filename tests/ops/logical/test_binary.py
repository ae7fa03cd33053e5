"""logical::{and, or, xor, nand, nor} beyond the tables: every pair of the edge set and sizes
around both workgroups (256 for the wrapped bitset primitives, 64 for nand/nor), on the reference
and on Vulkan, against NumPy's bitwise ops and Python ints; the child Region each wrapped op
delegates to; builder errors."""
import itertools

import numpy as np
import pytest

from vyre_vk.ops.logical import binary
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.logical_binary import BITWISE
from ..oracles.u32_edges import EDGES, edgy_u32

U32 = np.uint32
MASK = 0xFFFFFFFF
PY = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
      "nand": lambda x, y: ~(x & y) & MASK, "nor": lambda x, y: ~(x | y) & MASK}


@pytest.mark.parametrize("op", sorted(PY))
def test_every_edge_pair(op, vk_device):
    pairs = np.asarray(list(itertools.product(EDGES.tolist(), EDGES.tolist())), np.uint64).astype(U32)
    a, b = pairs[:, 0].copy(), pairs[:, 1].copy()
    _, ref = run_equal(f"vyre-libs::logical::{op}", vk_device, {"a": a, "b": b}, size=len(a))
    assert ref["out"].tolist() == [PY[op](x, y) for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(ref["out"], BITWISE[op](a, b))


@pytest.mark.parametrize("op", sorted(PY))
@pytest.mark.parametrize("size", [1, 63, 65, 255, 257])
def test_sizes_around_the_workgroups(op, size, vk_device):
    rng = np.random.default_rng(size)
    ins = {"a": edgy_u32(rng, size), "b": edgy_u32(rng, size)}
    _, ref = run_equal(f"vyre-libs::logical::{op}", vk_device, ins, size=size)
    np.testing.assert_array_equal(ref["out"], BITWISE[op](ins["a"], ins["b"]))


@pytest.mark.parametrize("op,build", [("and", binary.and_), ("or", binary.or_), ("xor", binary.xor)])
def test_wrapped_ops_delegate_to_the_bitset_primitive(op, build):
    p = build("a", "b", "out", 4)
    assert p.workgroup_size == (256, 1, 1)
    (outer,) = p.entry
    (child,) = outer.body
    assert (outer.generator, child.generator, child.source_region) == (
        f"vyre-libs::logical::{op}", f"vyre-primitives::bitset::{op}", f"vyre-libs::logical::{op}")
    assert child.body[0].generator == f"vyre-primitives::bitset::{op}"   # the primitive's own Region


@pytest.mark.parametrize("build", [binary.and_, binary.or_, binary.xor, binary.nand, binary.nor])
def test_aliased_buffers_raise_with_a_fix(build):
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        build("a", "b", "a", 4)
