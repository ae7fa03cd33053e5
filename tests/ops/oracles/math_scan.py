"""Oracle of vyre_vk/ops/math/scan (scan_prefix_sum)."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32


def inclusive_scan_u32_np(x: np.ndarray) -> np.ndarray:
    """np.cumsum accumulated in uint32: every partial sum wraps modulo 2^32."""
    return np.cumsum(np.asarray(x, U32), dtype=U32)


@oracle("vyre-libs::math::scan_prefix_sum", {"n": 1000}, 0, "wrapping u32 sums: exact")
def _():
    return (lambda rng, p: {"input": edgy_u32(rng, p["n"])},
            lambda ins, p: {"output": inclusive_scan_u32_np(ins["input"])})
