"""Oracle of vyre_vk/ops/math/clamp_u32."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32


def clamp_np(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Raise to lo, then cap at hi (so lo > hi gives hi)."""
    return np.minimum(np.maximum(x, lo), hi).astype(U32)


def clamp_inputs(rng: np.random.Generator, n: int) -> dict:
    """Mostly ordered bounds (lo <= hi), about a quarter crossed (lo > hi)."""
    x, p, q = edgy_u32(rng, n), edgy_u32(rng, n), edgy_u32(rng, n)
    lo, hi = np.minimum(p, q), np.maximum(p, q)
    crossed = rng.integers(0, 4, n) == 0
    lo[crossed], hi[crossed] = hi[crossed], lo[crossed]
    return {"input": x, "lo": lo, "hi": hi}


@oracle("vyre-libs::math::clamp_u32", {"n": 1000}, 0, "min/max: exact")
def _():
    return (lambda rng, p: clamp_inputs(rng, p["n"]),
            lambda ins, p: {"out": clamp_np(ins["input"], ins["lo"], ins["hi"])})
