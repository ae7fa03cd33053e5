"""Oracle of vyre_vk/ops/math/reduce_variance."""
from __future__ import annotations

import numpy as np

from .core import F32, d, oracle


@oracle("vyre-libs::math::reduce_variance", {"n": 3000}, 8,
        "Welford per lane (12 steps) + 8-level merge tree, in ULPs of E[x^2] (measured <= 1.3)")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        return {"output": (np.asarray([x.var()]), np.asarray([np.mean(x * x)]))}
    return (lambda rng, p: {"input": (rng.standard_normal(p["n"]) * 1.5 + 0.5).astype(F32)}, np_fn)
