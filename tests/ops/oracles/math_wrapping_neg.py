"""Oracle of vyre_vk/ops/math/wrapping_neg."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32


def wrapping_neg_np(a: np.ndarray) -> np.ndarray:
    """(2^32 - a) mod 2^32, in 64-bit."""
    return ((np.uint64(1 << 32) - a.astype(np.uint64)) % np.uint64(1 << 32)).astype(U32)


@oracle("vyre-libs::math::wrapping_neg", {"size": 1000}, 0, "two's complement negation: exact")
def _():
    return (lambda rng, p: {"a": edgy_u32(rng, p["size"])},
            lambda ins, p: {"out": wrapping_neg_np(ins["a"])})
