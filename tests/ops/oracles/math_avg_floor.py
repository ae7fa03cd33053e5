"""Oracle of vyre_vk/ops/math/avg_floor."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32


def avg_floor_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """floor((a + b) / 2) in 64-bit, where a + b cannot overflow."""
    return ((a.astype(np.uint64) + b.astype(np.uint64)) // 2).astype(U32)


@oracle("vyre-libs::math::avg_floor", {"size": 1000}, 0, "integer average: exact")
def _():
    return (lambda rng, p: {"a": edgy_u32(rng, p["size"]), "b": edgy_u32(rng, p["size"])},
            lambda ins, p: {"out": avg_floor_np(ins["a"], ins["b"])})
