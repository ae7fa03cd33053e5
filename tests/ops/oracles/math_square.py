"""Oracle of vyre_vk/ops/math/square."""
from __future__ import annotations

import numpy as np

from .core import F32, d, oracle


@oracle("vyre-libs::math::square", {"n": 1000}, 0.5, "one f32 multiply: correctly rounded, <= 0.5 ULP")
def _():
    def inputs(rng, p):
        # magnitudes 1e-15 .. 1e15: squares stay normal and finite (tiny and huge ones: tests/ops/math)
        return {"input": (rng.choice([-1.0, 1.0], p["n"]) * 10.0 ** rng.uniform(-15, 15, p["n"])).astype(F32)}

    def np_fn(ins, p):
        x = d(ins["input"])
        return {"output": (x * x, np.abs(x * x))}
    return inputs, np_fn
