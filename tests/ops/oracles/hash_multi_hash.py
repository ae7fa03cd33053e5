"""Oracle of vyre_vk/ops/hash/multi_hash: [zlib.crc32, FNV-1a32, zlib.adler32]."""
from __future__ import annotations

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle, ru32

IN, OUT = "__vyre_hash_multi_input", "__vyre_hash_multi_out"


@oracle("vyre-libs::hash::multi_hash", {"n": 100}, 0, "zlib and the FNV-1a32 spec: exact")
def _():
    def np_fn(ins, p):
        w = ins[IN]
        return {OUT: np.asarray([R.crc32(w), R.fnv1a32(R.low_bytes(w)), R.adler32(w)], U32)}
    return (lambda rng, p: {IN: ru32(rng, p["n"])}, np_fn)
