"""math::algebra beyond the tables: both bool_semiring_matmul programs (unrolled and looped) around
vyre's 64-cell / 64-term switch, any non-zero as true, min-plus saturation edges, builder errors."""
import itertools

import numpy as np
import pytest

from vyre_vk.ops.math import algebra

from ..harness import run_equal
from ..oracles.core import U32_MAX
from ..oracles.math_algebra import bool_matmul_np, sparse_u32

U32 = np.uint32
BOOL_MM = "vyre-libs::math::algebra::bool_semiring_matmul"

# (rows, inner, cols, workgroup): vyre unrolls into one invocation iff rows*cols <= 64 and inner <= 64.
# The edges use few cells x terms: the unrolled shader grows as rows*cols*inner (8x64x8 compiles in ~10 s).
BOOL_SHAPES = [(4, 5, 3, (1, 1, 1)), (2, 64, 2, (1, 1, 1)), (8, 8, 8, (1, 1, 1)), (1, 1, 1, (1, 1, 1)),
               (1, 65, 1, (64, 1, 1)), (5, 2, 13, (64, 1, 1)), (13, 7, 17, (64, 1, 1))]


@pytest.mark.parametrize("rows,inner,cols,wg", BOOL_SHAPES)
def test_bool_semiring_matmul_both_programs_match_numpy(rows, inner, cols, wg, vk_device):
    rng = np.random.default_rng(rows * 1000 + inner * 10 + cols)
    density = 1.5 / np.sqrt(inner) / 2          # a mix of 0 and 1 cells at every inner size
    ins = {"a": sparse_u32(rng, rows * inner, density), "b": sparse_u32(rng, inner * cols, density)}
    program, ref = run_equal(BOOL_MM, vk_device, ins, rows=rows, inner=inner, cols=cols)
    assert program.workgroup_size == wg
    want = bool_matmul_np(ins["a"], ins["b"], rows, inner, cols)
    np.testing.assert_array_equal(ref["out"], want)
    if rows * cols >= 4:
        assert 0 < want.sum() < want.size, "the case should hold both 0 and 1 cells"


def test_bool_semiring_matmul_counts_any_nonzero_as_true(vk_device):
    a = np.asarray([0x80000000, 0, 0, 2], U32)        # [[hi bit, 0], [0, 2]]
    b = np.asarray([0, 0xFFFFFFFF, 7, 0], U32)        # [[0, max], [7, 0]]
    _, ref = run_equal(BOOL_MM, vk_device, {"a": a, "b": b}, rows=2, inner=2, cols=2)
    assert ref["out"].tolist() == [0, 1, 1, 0]


def test_minplus_mul_saturation_edges(vk_device):
    edges = [0, 1, 2, 1000, 2**31 - 1, 2**31, 2**31 + 1, U32_MAX - 1, U32_MAX]
    pairs = np.asarray(list(itertools.product(edges, edges)), np.uint64)
    ins = {"a": pairs[:, 0].astype(U32), "b": pairs[:, 1].astype(U32)}
    _, ref = run_equal("vyre-libs::math::algebra::minplus_mul", vk_device, ins, size=len(pairs))
    assert ref["out"].tolist() == [min(int(x) + int(y), U32_MAX) for x, y in pairs]


@pytest.mark.parametrize("build", [
    lambda: algebra.lattice_join("a", "a", "out", 4),
    lambda: algebra.lattice_meet("a", "b", "a", 4),
    lambda: algebra.semiring_min_plus_mul("a", "b", "b", 4),
    lambda: algebra.bool_semiring_matmul("a", "b", "b", 2, 2, 2),
    lambda: algebra.sketch_mix("x", "x", 4),
], ids=["join", "meet", "minplus_mul", "bool_semiring_matmul", "sketch_mix"])
def test_builder_errors_name_a_fix(build):
    with pytest.raises(ValueError, match="Fix: "):
        build()
