"""Random u32 words with the edge values mixed in (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
single bits and their complements), shared by the oracles of the u32 elementwise ops."""
from __future__ import annotations

import numpy as np

from .core import U32, ru32

EDGES = np.asarray([0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0x00F00000, 0xAAAAAAAA, 0x55555555]
                   + [1 << k for k in range(32)] + [0xFFFFFFFF ^ (1 << k) for k in range(32)], U32)


def edgy_u32(rng: np.random.Generator, n: int) -> np.ndarray:
    """`n` random words, every third one an edge value (random position in EDGES)."""
    words = ru32(rng, n)
    pick = rng.integers(0, 3, n) == 0
    words[pick] = EDGES[rng.integers(0, EDGES.size, int(pick.sum()))]
    return words


def bit_loop_lzcnt(x: np.ndarray) -> np.ndarray:
    """Leading zero bits by testing bits 31 down to 0 (32 for 0)."""
    x = np.asarray(x, np.uint64)
    out = np.full(x.shape, 32, np.uint32)
    found = np.zeros(x.shape, bool)
    for k, bit in enumerate(range(31, -1, -1)):
        hit = ~found & (((x >> np.uint64(bit)) & np.uint64(1)) == 1)
        out[hit] = k
        found |= hit
    return out


def bit_loop_tzcnt(x: np.ndarray) -> np.ndarray:
    """Trailing zero bits by testing bits 0 up to 31 (32 for 0)."""
    x = np.asarray(x, np.uint64)
    out = np.full(x.shape, 32, np.uint32)
    found = np.zeros(x.shape, bool)
    for bit in range(32):
        hit = ~found & (((x >> np.uint64(bit)) & np.uint64(1)) == 1)
        out[hit] = bit
        found |= hit
    return out
