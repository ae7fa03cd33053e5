"""Independent NumPy oracles for vyre-libs math::algebra and math::succinct, written from each
op's math (not from the IR), registered into ``ORACLES`` (tests/ops/oracles.py imports this
module at its end). All outputs are u32 and compared exactly.

The rank/select oracles expand the bitvector to one entry per bit (bit ``i`` = bit ``i % 32``
of word ``i / 32``) and answer with a prefix sum / ``flatnonzero``, instead of the kernels'
word-popcount walks.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::math::succinct::select1_query"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> spec.numpy(ins, spec.params)["out"].dtype
    dtype('uint32')
"""
from __future__ import annotations

import numpy as np

from .oracles_math import U32, oracle, ru32

U32_MAX = 0xFFFFFFFF


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


# ---------------------------------------------------------------- math/algebra (elementwise)
def _mixed_u32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniform u32 with 1/4 small values and a few 0 / u32::MAX / u32::MAX-1 lanes."""
    x = ru32(rng, n)
    small = rng.random(n) < 0.25
    x[small] = rng.integers(0, 1000, small.sum())
    special = rng.random(n) < 0.05
    x[special] = rng.choice(np.asarray([0, U32_MAX, U32_MAX - 1], U32), special.sum())
    return x


def _binary_inputs(rng, p):
    return {"a": _mixed_u32(rng, p["size"]), "b": _mixed_u32(rng, p["size"])}


@oracle("vyre-libs::math::algebra::join", {"size": 1000}, 0, "bitwise OR: exact")
def _():
    return _binary_inputs, lambda ins, p: {"out": np.bitwise_or(ins["a"], ins["b"])}


@oracle("vyre-libs::math::algebra::meet", {"size": 1000}, 0, "bitwise AND: exact")
def _():
    return _binary_inputs, lambda ins, p: {"out": np.bitwise_and(ins["a"], ins["b"])}


@oracle("vyre-libs::math::algebra::minplus_mul", {"size": 1000}, 0, "saturating u32 add: exact")
def _():
    def np_fn(ins, p):
        total = ins["a"].astype(np.uint64) + ins["b"].astype(np.uint64)   # exact in u64
        return {"out": np.minimum(total, U32_MAX).astype(U32)}
    return _binary_inputs, np_fn


def wang_mix(x: np.ndarray) -> np.ndarray:
    """Thomas Wang's 32-bit integer mix, in u64 and reduced mod 2^32 after every step."""
    m = np.uint64(U32_MAX)
    h = np.asarray(x, np.uint64)
    h = (h + (~(h << np.uint64(15)) & m)) & m
    h ^= h >> np.uint64(12)
    h = (h + (h << np.uint64(2))) & m
    h ^= h >> np.uint64(4)
    h = (h * np.uint64(2057)) & m
    h ^= h >> np.uint64(16)
    return h.astype(U32)


@oracle("vyre-libs::math::algebra::sketch_mix", {"size": 1000}, 0, "wrapping u32 hash: exact")
def _():
    return (lambda rng, p: {"input": _mixed_u32(rng, p["size"])},
            lambda ins, p: {"out": wang_mix(ins["input"])})


# ---------------------------------------------------------------- math/algebra (boolean matmul)
def sparse_u32(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """Zero with probability 1 - density, else a random non-zero u32 (not only 1)."""
    return np.where(rng.random(n) < density, ru32(rng, n, 2**32 - 1) + 1, 0).astype(U32)


def bool_matmul_np(a: np.ndarray, b: np.ndarray, rows: int, inner: int, cols: int) -> np.ndarray:
    hits = (a.reshape(rows, inner) != 0).astype(np.int64) @ (b.reshape(inner, cols) != 0).astype(np.int64)
    return (hits > 0).astype(U32).reshape(-1)


# 9*11 = 99 cells > 64: the one-invocation-per-cell loop program (tests/ops/test_alg.py runs
# the unrolled single-invocation program on random inputs too).
@oracle("vyre-libs::math::algebra::bool_semiring_matmul", {"rows": 9, "inner": 13, "cols": 11}, 0,
        "0/1 OR of ANDs: exact")
def _():
    return (lambda rng, p: {"a": sparse_u32(rng, p["rows"] * p["inner"], 0.2),
                            "b": sparse_u32(rng, p["inner"] * p["cols"], 0.2)},
            lambda ins, p: {"out": bool_matmul_np(ins["a"], ins["b"], p["rows"], p["inner"], p["cols"])})


# ---------------------------------------------------------------- math/succinct
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
