"""Oracles of vyre_vk/ops/math/succinct (rank/select over a bitvector of u32 words), exact.

They expand the bitvector to one entry per bit (bit ``i`` = bit ``i % 32`` of word ``i / 32``) and
answer with a prefix sum / ``flatnonzero``, instead of the kernels' word-popcount walks.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::math::succinct::select1_query"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> spec.numpy(ins, spec.params)["out"].dtype
    dtype('uint32')
"""
from __future__ import annotations

import numpy as np

from .core import U32, U32_MAX, oracle, ru32


def bit_vector(words: np.ndarray) -> np.ndarray:
    """One 0/1 entry per bit, LSB of word 0 first."""
    return np.unpackbits(np.asarray(words, "<u4").view(np.uint8), bitorder="little")


def word_popcounts(words: np.ndarray) -> np.ndarray:
    return bit_vector(words).reshape(-1, 32).sum(axis=1, dtype=np.int64)


def random_bitvector(rng: np.random.Generator, word_count: int) -> np.ndarray:
    """Words of mixed density: empty, full, single-bit, sparse and uniform random words."""
    kind = rng.integers(0, 5, word_count)
    uniform = ru32(rng, word_count)
    sparse = uniform & ru32(rng, word_count) & ru32(rng, word_count)
    single = (np.uint32(1) << rng.integers(0, 32, word_count).astype(U32)).astype(U32)
    return np.choose(kind, [np.zeros(word_count, U32), np.full(word_count, U32_MAX, U32), single, sparse,
                            uniform]).astype(U32)


def superblocks_np(bits: np.ndarray, word_count: int, block_words: int) -> np.ndarray:
    """[set bits before word j*block_words for each superblock j] + [total set bits]."""
    before = np.concatenate([[0], np.cumsum(word_popcounts(bits[:word_count]))])  # before[w]: bits in words < w
    starts = np.arange(0, word_count, block_words)
    return np.concatenate([before[starts], [before[-1]]]).astype(U32)


def rank_np(bits: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Set bits strictly before each bit position."""
    before = np.concatenate([[0], np.cumsum(bit_vector(bits), dtype=np.int64)])
    return before[np.asarray(positions, np.int64)].astype(U32)


def select_np(bits: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Position of the k-th (one-based) set bit."""
    return np.flatnonzero(bit_vector(bits))[np.asarray(ranks, np.int64) - 1].astype(U32)


# 300 words in superblocks of 7 (a partial last superblock).
@oracle("vyre-libs::math::succinct::rank1_superblocks", {"word_count": 300, "block_words": 7}, 0,
        "popcount prefix sums: exact")
def _():
    return (lambda rng, p: {"bits": random_bitvector(rng, p["word_count"])},
            lambda ins, p: {"superblocks": superblocks_np(ins["bits"], p["word_count"], p["block_words"])})


@oracle("vyre-libs::math::succinct::rank1_query", {"word_count": 200, "query_count": 500, "block_words": 5}, 0,
        "popcount prefix sums: exact")
def _():
    def inputs(rng, p):
        bits = random_bitvector(rng, p["word_count"])
        queries = rng.integers(0, 32 * p["word_count"], p["query_count"]).astype(U32)
        queries[:4] = [0, 31, 32 * p["word_count"] - 1, 32 * p["block_words"]]   # word / superblock edges
        return {"bits": bits, "superblocks": superblocks_np(bits, p["word_count"], p["block_words"]),
                "queries": queries}
    return inputs, lambda ins, p: {"out": rank_np(ins["bits"], ins["queries"])}


@oracle("vyre-libs::math::succinct::select1_query", {"word_count": 200, "query_count": 500}, 0,
        "positions of set bits: exact")
def _():
    def inputs(rng, p):
        bits = random_bitvector(rng, p["word_count"])
        total = int(word_popcounts(bits).sum())
        queries = rng.integers(1, total + 1, p["query_count"]).astype(U32)
        queries[:2] = [1, total]
        return {"bits": bits, "queries": queries}
    return inputs, lambda ins, p: {"out": select_np(ins["bits"], ins["queries"])}
