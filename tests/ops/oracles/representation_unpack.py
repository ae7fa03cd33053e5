"""Oracle of vyre_vk/ops/representation/unpack (unpack_4bit_f32)."""
from __future__ import annotations

import numpy as np

from .core import F32, U32, oracle
from .u32_edges import edgy_u32


def unpack_4bit_np(words: np.ndarray, n: int) -> np.ndarray:
    """Nibble k of word w (bits 4k..4k+3) is element 8w + k; elements past the words are 0."""
    nibbles = (np.asarray(words, np.uint64)[:, None] >> (4 * np.arange(8, dtype=np.uint64))[None, :]) & 0xF
    flat = np.zeros(n, np.float64)
    m = min(n, nibbles.size)
    flat[:m] = nibbles.reshape(-1)[:m]
    return flat


@oracle("vyre-libs::representation::unpack_4bit_f32", {"n": 1000}, 0, "small integers convert exactly")
def _():
    def np_fn(ins, p):
        v = unpack_4bit_np(ins["input"], p["n"])
        return {"output": (v, v)}
    return (lambda rng, p: {"input": edgy_u32(rng, p["n"] // 8)}, np_fn)
