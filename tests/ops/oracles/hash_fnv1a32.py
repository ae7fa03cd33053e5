"""Oracle of vyre_vk/ops/hash/fnv1a32: FNV-1a32 from its offset basis and prime."""
from __future__ import annotations

import numpy as np

from . import codecs_ref as R
from .core import U32, oracle, ru32

IN, OUT = "__vyre_hash_fnv1a32_input", "__vyre_hash_fnv1a32_out"


@oracle("vyre-libs::hash::fnv1a32", {"n": 100}, 0, "FNV-1a32 spec: exact")
def _():
    return (lambda rng, p: {IN: ru32(rng, p["n"])},
            lambda ins, p: {OUT: np.asarray([R.fnv1a32(R.low_bytes(ins[IN]))], U32)})
