"""Oracle of vyre_vk/ops/hash/blake3_compress: the BLAKE3 compression function from its spec
(message permutation applied between rounds), words 0..7; random chaining values, blocks,
counters, lengths and flags."""
from __future__ import annotations

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle, ru32

_P = "__vyre_hash_blake3_compress_"
CV, MSG, PARAMS, OUT = _P + "chaining_in", _P + "message", _P + "params", _P + "chaining_out"


@oracle("vyre-libs::hash::blake3_compress", {}, 0, "BLAKE3 spec: exact", repeats=12)
def _():
    def inputs(rng, p):
        params = np.asarray([rng.integers(0, 2**32), rng.integers(0, 2**32), rng.integers(0, 65),
                             rng.integers(0, 32)], U32)
        return {CV: ru32(rng, 8), MSG: ru32(rng, 16), PARAMS: params}

    def np_fn(ins, p):
        lo, hi, block_len, flags = (int(x) for x in ins[PARAMS])
        return {OUT: np.asarray(R.blake3_compress(ins[CV], ins[MSG], lo | hi << 32, block_len, flags)[:8], U32)}
    return inputs, np_fn
