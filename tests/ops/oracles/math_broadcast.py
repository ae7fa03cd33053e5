"""Oracle of vyre_vk/ops/math/broadcast."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle, ru32


@oracle("vyre-libs::math::broadcast", {"n": 100}, 0, "copy: exact")
def _():
    return (lambda rng, p: {"src": ru32(rng, 1)},
            lambda ins, p: {"dst": np.full(p["n"], ins["src"][0], U32)})
