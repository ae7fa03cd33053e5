"""Op-specific checks for math::algebra and math::succinct that the generic random run does not
reach: both bool_semiring_matmul programs (unrolled and looped) around vyre's 64-cell / 64-term
switch, rank/select answered for every bit / every rank, superblock shapes with and without a
partial block, saturation edges, the traps on invalid queries, builder errors and child Regions."""
import itertools

import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ops.math import algebra, succinct
from vyre_vk.reference.eval import TrapError
from vyre_vk.runtime import KernelTrapError

from .interface_alg import CHILD_REGIONS
from .oracles_alg import (U32_MAX, bool_matmul_np, random_bitvector, rank_np, select_np, sparse_u32,
                          superblocks_np, word_popcounts)

U32 = np.uint32
BOOL_MM = "vyre-libs::math::algebra::bool_semiring_matmul"
SUPERBLOCKS = "vyre-libs::math::succinct::rank1_superblocks"
RANK = "vyre-libs::math::succinct::rank1_query"
SELECT = "vyre-libs::math::succinct::select1_query"


def _both(op_id, device, ins, **params):
    """Reference and Vulkan results of the op built with ``params``; they must be equal."""
    program = ops.get(op_id).build_with(**params)
    ref, got = reference.run(program, ins), device.compile(program).run(ins)
    for name in ref:
        np.testing.assert_array_equal(got[name], ref[name], err_msg=f"{op_id} {params} `{name}`: Vulkan vs reference")
    return program, ref


# (rows, inner, cols, workgroup): vyre unrolls into one invocation iff rows*cols <= 64 and inner <= 64.
# The edges use few cells x terms: the unrolled shader grows as rows*cols*inner (8x64x8 compiles in ~10 s).
BOOL_SHAPES = [(4, 5, 3, (1, 1, 1)), (2, 64, 2, (1, 1, 1)), (8, 8, 8, (1, 1, 1)), (1, 1, 1, (1, 1, 1)),
               (1, 65, 1, (64, 1, 1)), (5, 2, 13, (64, 1, 1)), (13, 7, 17, (64, 1, 1))]


@pytest.mark.parametrize("rows,inner,cols,wg", BOOL_SHAPES)
def test_bool_semiring_matmul_both_programs_match_numpy(rows, inner, cols, wg, vk_device):
    rng = np.random.default_rng(rows * 1000 + inner * 10 + cols)
    density = 1.5 / np.sqrt(inner) / 2          # a mix of 0 and 1 cells at every inner size
    ins = {"a": sparse_u32(rng, rows * inner, density), "b": sparse_u32(rng, inner * cols, density)}
    program, ref = _both(BOOL_MM, vk_device, ins, rows=rows, inner=inner, cols=cols)
    assert program.workgroup_size == wg
    want = bool_matmul_np(ins["a"], ins["b"], rows, inner, cols)
    np.testing.assert_array_equal(ref["out"], want)
    if rows * cols >= 4:
        assert 0 < want.sum() < want.size, "the case should hold both 0 and 1 cells"


def test_bool_semiring_matmul_counts_any_nonzero_as_true(vk_device):
    a = np.asarray([0x80000000, 0, 0, 2], U32)        # [[hi bit, 0], [0, 2]]
    b = np.asarray([0, 0xFFFFFFFF, 7, 0], U32)        # [[0, max], [7, 0]]
    _, ref = _both(BOOL_MM, vk_device, {"a": a, "b": b}, rows=2, inner=2, cols=2)
    assert ref["out"].tolist() == [0, 1, 1, 0]


def test_minplus_mul_saturation_edges(vk_device):
    edges = [0, 1, 2, 1000, 2**31 - 1, 2**31, 2**31 + 1, U32_MAX - 1, U32_MAX]
    pairs = np.asarray(list(itertools.product(edges, edges)), np.uint64)
    ins = {"a": pairs[:, 0].astype(U32), "b": pairs[:, 1].astype(U32)}
    _, ref = _both("vyre-libs::math::algebra::minplus_mul", vk_device, ins, size=len(pairs))
    assert ref["out"].tolist() == [min(int(x) + int(y), U32_MAX) for x, y in pairs]


# (word_count, block_words): exact multiple, partial last block, block longer than the vector, 1-word blocks.
SUPERBLOCK_SHAPES = [(8, 4), (9, 4), (3, 8), (33, 1), (1, 1), (0, 3)]


@pytest.mark.parametrize("word_count,block_words", SUPERBLOCK_SHAPES)
def test_rank1_superblocks_shapes(word_count, block_words, vk_device):
    bits = random_bitvector(np.random.default_rng(word_count), max(word_count, 1))
    _, ref = _both(SUPERBLOCKS, vk_device, {"bits": bits}, word_count=word_count, block_words=block_words)
    want = superblocks_np(bits, word_count, block_words)
    assert len(want) == -(-word_count // block_words) + 1
    np.testing.assert_array_equal(ref["superblocks"], want)


@pytest.mark.parametrize("block_words", [1, 3, 8])
def test_rank1_query_every_bit_position(block_words, vk_device):
    word_count = 13
    bits = random_bitvector(np.random.default_rng(block_words), word_count)
    positions = np.arange(32 * word_count, dtype=U32)
    ins = {"bits": bits, "superblocks": superblocks_np(bits, word_count, block_words), "queries": positions}
    _, ref = _both(RANK, vk_device, ins, word_count=word_count, query_count=positions.size, block_words=block_words)
    want = rank_np(bits, positions)
    np.testing.assert_array_equal(ref["out"], want)
    assert want[-1] == word_popcounts(bits).sum() - (int(bits[-1]) >> 31)


def test_select1_query_every_rank(vk_device):
    word_count = 13
    bits = random_bitvector(np.random.default_rng(5), word_count)
    total = int(word_popcounts(bits).sum())
    ranks = np.arange(1, total + 1, dtype=U32)
    _, ref = _both(SELECT, vk_device, {"bits": bits, "queries": ranks}, word_count=word_count, query_count=total)
    want = select_np(bits, ranks)
    np.testing.assert_array_equal(ref["out"], want)
    # select is the inverse of rank: rank(select(k)) = k - 1.
    np.testing.assert_array_equal(rank_np(bits, want), ranks - 1)


BITS = np.asarray([0b1011, 0x8000_0000, 0xFFFF_0000, 0], U32)   # 20 set bits, as in vyre's vectors


@pytest.mark.parametrize("op_id,params,ins,tag", [
    (SELECT, {"word_count": 4, "query_count": 3}, {"bits": BITS, "queries": np.asarray([1, 0, 2], U32)},
     "select-query-zero-rank"),
    (SELECT, {"word_count": 4, "query_count": 3}, {"bits": BITS, "queries": np.asarray([1, 21, 2], U32)},
     "select-query-rank-out-of-bounds"),
    (RANK, {"word_count": 4, "query_count": 3, "block_words": 2},
     {"bits": BITS, "superblocks": np.asarray([0, 4, 20], U32), "queries": np.asarray([0, 128, 5], U32)},
     "rank-query-out-of-bounds"),
])
def test_invalid_queries_trap_on_reference_and_vulkan(op_id, params, ins, tag, vk_device):
    program = ops.get(op_id).build_with(**params)
    with pytest.raises(TrapError, match=tag):
        reference.run(program, ins)
    with pytest.raises(KernelTrapError, match=tag):
        vk_device.compile(program).run(ins)


def test_last_valid_queries_do_not_trap():
    e = ops.get(RANK)
    out = reference.run(e.build(), {"bits": BITS, "superblocks": np.asarray([0, 4, 20], U32),
                                    "queries": np.asarray([127, 96, 95, 64, 32], U32)})["out"]
    assert out.tolist() == [20, 20, 19, 4, 3]
    out = reference.run(ops.get(SELECT).build(), {"bits": BITS, "queries": np.asarray([20, 19, 6, 5, 4], U32)})["out"]
    assert out.tolist() == [95, 94, 81, 80, 63]


@pytest.mark.parametrize("build", [
    lambda: algebra.lattice_join("a", "a", "out", 4),
    lambda: algebra.lattice_meet("a", "b", "a", 4),
    lambda: algebra.semiring_min_plus_mul("a", "b", "b", 4),
    lambda: algebra.bool_semiring_matmul("a", "b", "b", 2, 2, 2),
    lambda: algebra.sketch_mix("x", "x", 4),
    lambda: succinct.rank1_superblocks("bits", "superblocks", 4, 0),
    lambda: succinct.rank1_query("bits", "superblocks", "queries", "out", 4, 5, 0),
], ids=["join", "meet", "minplus_mul", "bool_semiring_matmul", "sketch_mix", "rank1_superblocks", "rank1_query"])
def test_builder_errors_name_a_fix(build):
    with pytest.raises(ValueError, match="Fix: "):
        build()


@pytest.mark.parametrize("op_id", sorted(CHILD_REGIONS))
def test_child_regions_are_vyres(op_id):
    outer = ops.get(op_id).build().entry
    assert [r.generator for r in outer] == [op_id] and outer[0].source_region is None
    child = outer[0].body[0]
    assert (child.generator, child.source_region) == CHILD_REGIONS[op_id]
