"""Oracle of vyre_vk/ops/hash/adler32: zlib.adler32 of the words' low bytes (high bits random)."""
from __future__ import annotations

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle, ru32

IN, OUT = "__vyre_hash_adler32_input", "__vyre_hash_adler32_out"


@oracle("vyre-libs::hash::adler32", {"n": 100}, 0, "zlib.adler32: exact")
def _():
    return (lambda rng, p: {IN: ru32(rng, p["n"])},
            lambda ins, p: {OUT: np.asarray([R.adler32(ins[IN])], U32)})
