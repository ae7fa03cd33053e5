"""Oracles of the ops in vyre_vk/ops/nn/norm."""
from __future__ import annotations

import math

import numpy as np

from .core import F32, d, exact, normal, oracle


@oracle("vyre-libs::nn::rms_norm", {"n": 700, "eps": 1e-5}, 16,
        "sum of squares (positive terms, tree of depth log2 256 + strided chunks), div, add, 1/sqrt, mul")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        return {"output": exact(x / np.sqrt(np.mean(x * x) + float(F32(p["eps"]))))}
    return (lambda rng, p: {"input": normal(rng, p["n"], 2.0)}, np_fn)


@oracle("vyre-libs::nn::layer_norm", {"n": 700, "eps": 1e-5}, 32,
        "one-pass variance E[x^2]-mean^2 (relative error ~ E[x^2]/var) and x-mean: scale includes both")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        mean, var = x.mean(), x.var()
        inv = 1.0 / math.sqrt(var + float(F32(p["eps"])))
        y = (x - mean) * inv
        scale = (np.abs(x) + abs(mean)) * inv + np.abs(y) * (np.mean(x * x) / var)
        return {"output": (y, scale)}
    return (lambda rng, p: {"input": (rng.standard_normal(p["n"]) * 1.5 + 0.5).astype(F32)}, np_fn)


@oracle("vyre-libs::nn::layerwise_ln_scale", {"n": 1000}, 1, "one multiply: one rounding")
def _():
    return (lambda rng, p: {"input": normal(rng, p["n"], 2.0), "scale": normal(rng, p["n"])},
            lambda ins, p: {"output": exact(d(ins["input"]) * d(ins["scale"]))})
