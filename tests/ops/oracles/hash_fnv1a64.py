"""Oracle of vyre_vk/ops/hash/fnv1a64: FNV-1a64 from its offset basis and prime, as (low, high)."""
from __future__ import annotations

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle, ru32

IN, OUT = "__vyre_hash_fnv1a64_input", "__vyre_hash_fnv1a64_out"


@oracle("vyre-libs::hash::fnv1a64", {"n": 100}, 0, "FNV-1a64 spec: exact")
def _():
    def np_fn(ins, p):
        h = R.fnv1a64(R.low_bytes(ins[IN]))
        return {OUT: np.asarray([h & 0xFFFFFFFF, h >> 32], U32)}
    return (lambda rng, p: {IN: ru32(rng, p["n"])}, np_fn)
