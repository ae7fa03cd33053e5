"""path_reconstruct beyond its vector: vyre's cpu_ref cases (path_reconstruct.rs: happy path,
target past the parent array, a cycle cut at max_depth), a tail of garbage zeroed, a parent array
longer than max_depth, on the reference and on Vulkan against a Python walk; errors; doctest."""
import doctest

import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.security import path_reconstruct as pr

from ..harness import run_equal
from ..oracles.security_path_reconstruct import walk

OP = pr.OP_ID
U32 = np.uint32


def run(device, parent, target, max_depth, garbage=0xDEADBEEF):
    ins = {"parent": np.asarray(parent, np.uint64).astype(U32), "target": np.asarray([target], np.uint64).astype(U32),
           "path_out": np.full(max_depth, garbage, U32), "path_len": np.asarray([garbage], U32)}
    _, ref = run_equal(OP, device, ins, max_depth=max_depth)
    return ref["path_out"].tolist(), int(ref["path_len"][0])


@pytest.mark.parametrize("parent,target,max_depth,want_path,want_len", [
    ([0, 0, 1, 2], 3, 4, [3, 2, 1, 0], 4),        # happy path
    ([0, 0, 1, 2], 10, 4, [10, 0, 0, 0], 1),      # target past the array: its own root
    ([0, 2, 1, 3], 1, 4, [1, 2, 1, 2], 4),        # 2-cycle stops at max_depth
    ([0, 0, 1, 2], 3, 2, [3, 2], 2),              # cut before the root
    ([5, 0, 1], 2, 8, [2, 1, 0, 5, 0, 0, 0, 0], 4),  # parent past the array ends the walk after it
    ([0], 0, 1, [0], 1),
])
def test_vyres_cases(parent, target, max_depth, want_path, want_len, vk_device):
    assert run(vk_device, parent, target, max_depth) == (want_path, want_len)


@pytest.mark.parametrize("seed", range(4))
def test_long_chains_against_python(seed, vk_device):
    rng = np.random.default_rng(seed)
    n = 500
    parent = np.arange(n, dtype=U32)
    parent[1:] = np.arange(n - 1, dtype=U32)          # one chain 499 -> ... -> 0
    parent[rng.integers(1, n, 3)] = rng.integers(0, n, 3)   # a few rewired links (maybe cycles)
    target = int(rng.integers(0, n))
    got_path, got_len = run(vk_device, parent, target, 300)
    want = walk(parent, target, 300)
    assert got_len == len(want) and got_path == want + [0] * (300 - len(want))


def test_structure():
    p = pr.path_reconstruct("p", "t", "o", "l", 8)
    (outer,) = p.entry
    assert (outer.generator, outer.body[0].generator, outer.body[0].source_region) == (OP, pr.PRIMITIVE_OP_ID, OP)
    assert p.workgroup_size == (1, 1, 1) and p.buffers[0].count == 0


def test_errors_say_how_to_fix():
    with pytest.raises(OpParamError, match="max_depth must be a positive u32.*Fix: "):
        pr.path_reconstruct("p", "t", "o", "l", 0)
    with pytest.raises(OpParamError, match="non-empty buffer name.*Fix: "):
        pr.path_reconstruct("", "t", "o", "l", 4)
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        pr.path_reconstruct("p", "t", "o", "o", 4)


def test_doctest():
    assert doctest.testmod(pr).failed == 0
