"""math::succinct beyond the tables: rank/select answered for every bit / every rank, superblock
shapes with and without a partial block, the traps on invalid queries, builder errors."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ops.math import succinct
from vyre_vk.reference.eval import TrapError
from vyre_vk.runtime import KernelTrapError

from ..harness import run_equal
from ..oracles.math_succinct import random_bitvector, rank_np, select_np, superblocks_np, word_popcounts

U32 = np.uint32
SUPERBLOCKS = "vyre-libs::math::succinct::rank1_superblocks"
RANK = "vyre-libs::math::succinct::rank1_query"
SELECT = "vyre-libs::math::succinct::select1_query"

# (word_count, block_words): exact multiple, partial last block, block longer than the vector, 1-word blocks.
SUPERBLOCK_SHAPES = [(8, 4), (9, 4), (3, 8), (33, 1), (1, 1), (0, 3)]


@pytest.mark.parametrize("word_count,block_words", SUPERBLOCK_SHAPES)
def test_rank1_superblocks_shapes(word_count, block_words, vk_device):
    bits = random_bitvector(np.random.default_rng(word_count), max(word_count, 1))
    _, ref = run_equal(SUPERBLOCKS, vk_device, {"bits": bits}, word_count=word_count, block_words=block_words)
    want = superblocks_np(bits, word_count, block_words)
    assert len(want) == -(-word_count // block_words) + 1
    np.testing.assert_array_equal(ref["superblocks"], want)


@pytest.mark.parametrize("block_words", [1, 3, 8])
def test_rank1_query_every_bit_position(block_words, vk_device):
    word_count = 13
    bits = random_bitvector(np.random.default_rng(block_words), word_count)
    positions = np.arange(32 * word_count, dtype=U32)
    ins = {"bits": bits, "superblocks": superblocks_np(bits, word_count, block_words), "queries": positions}
    _, ref = run_equal(RANK, vk_device, ins, word_count=word_count, query_count=positions.size,
                       block_words=block_words)
    want = rank_np(bits, positions)
    np.testing.assert_array_equal(ref["out"], want)
    assert want[-1] == word_popcounts(bits).sum() - (int(bits[-1]) >> 31)


def test_select1_query_every_rank(vk_device):
    word_count = 13
    bits = random_bitvector(np.random.default_rng(5), word_count)
    total = int(word_popcounts(bits).sum())
    ranks = np.arange(1, total + 1, dtype=U32)
    _, ref = run_equal(SELECT, vk_device, {"bits": bits, "queries": ranks}, word_count=word_count, query_count=total)
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
    lambda: succinct.rank1_superblocks("bits", "superblocks", 4, 0),
    lambda: succinct.rank1_query("bits", "superblocks", "queries", "out", 4, 5, 0),
], ids=["rank1_superblocks", "rank1_query"])
def test_builder_errors_name_a_fix(build):
    with pytest.raises(ValueError, match="Fix: "):
        build()
