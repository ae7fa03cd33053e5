"""NumPy oracles for the second batch of nn ops (attention, moe, u32/4-bit linear, swiglu,
softmax, layerwise_ln_scale), registered into the shared ``ORACLES`` mapping of
tests/ops/oracles.py (which imports this module at its end). Same conventions: float64 math
written from each op's definition, ``(value, scale)`` per f32 result, exact arrays for integers.
"""
from __future__ import annotations

import math

import numpy as np

from .oracles import F32, _silu, d, exact, normal, oracle


# ---------------------------------------------------------------- nn/norm
@oracle("vyre-libs::nn::layerwise_ln_scale", {"n": 1000}, 1, "one multiply: one rounding")
def _():
    return (lambda rng, p: {"input": normal(rng, p["n"], 2.0), "scale": normal(rng, p["n"])},
            lambda ins, p: {"output": exact(d(ins["input"]) * d(ins["scale"]))})


# ---------------------------------------------------------------- nn/activation
@oracle("vyre-libs::nn::swiglu", {"n": 1000}, 10, "exp (<=1 ULP in the reference) + add, div and two mul roundings")
def _():
    return (lambda rng, p: {"gate": normal(rng, p["n"], 6.0), "up": normal(rng, p["n"], 3.0)},
            lambda ins, p: {"output": exact(_silu(d(ins["gate"])) * d(ins["up"]))})


# ---------------------------------------------------------------- nn/attention
@oracle("vyre-libs::nn::qk_gain", {"num_heads": 8, "seq_len": 5, "head_dim": 16}, 1, "one multiply: one rounding")
def _():
    def inputs(rng, p):
        return {"q_in": normal(rng, p["num_heads"] * p["seq_len"] * p["head_dim"]),
                "gain": normal(rng, p["num_heads"], 3.0)}

    def np_fn(ins, p):
        g = np.repeat(d(ins["gain"]), p["seq_len"] * p["head_dim"])
        return {"q_out": exact(d(ins["q_in"]) * g)}
    return inputs, np_fn


@oracle("vyre-libs::nn::partial_rope", {"num_heads": 3, "seq_len": 7, "head_dim": 12, "rope_dims": 8}, 2,
        "two products and a difference: <= 1.5 ULP of |x0 c| + |x1 s|")
def _():
    def inputs(rng, p):
        H, S, D, R = p["num_heads"], p["seq_len"], p["head_dim"], p["rope_dims"]
        theta = rng.uniform(-math.pi, math.pi, S * (R // 2))
        return {"input": normal(rng, H * S * D), "cos": np.cos(theta).astype(F32),
                "sin": np.sin(theta).astype(F32)}

    def np_fn(ins, p):
        H, S, D, R = p["num_heads"], p["seq_len"], p["head_dim"], p["rope_dims"]
        x = d(ins["input"]).reshape(H, S, D)
        c = d(ins["cos"]).reshape(S, R // 2)[None, :, :]
        s = d(ins["sin"]).reshape(S, R // 2)[None, :, :]
        e, o = x[:, :, 0:R:2], x[:, :, 1:R:2]
        out, scale = x.copy(), np.abs(x)
        out[:, :, 0:R:2], scale[:, :, 0:R:2] = e * c - o * s, np.abs(e * c) + np.abs(o * s)
        out[:, :, 1:R:2], scale[:, :, 1:R:2] = e * s + o * c, np.abs(e * s) + np.abs(o * c)
        return {"output": (out.reshape(-1), scale.reshape(-1))}
    return inputs, np_fn


# ---------------------------------------------------------------- nn/linear (u32)
def _u32_affine(x, w, b, in_dim, out_dim):
    W = w.astype(np.uint64).reshape(in_dim, out_dim)
    acc = b.astype(np.uint64).copy()
    for k in range(in_dim):
        acc = (acc + x[k].astype(np.uint64) * W[k]) & 0xFFFFFFFF
    return acc.astype(np.uint32)


@oracle("vyre-libs::nn::linear", {"in_dim": 24, "out_dim": 40}, 0, "u32 wrapping arithmetic: exact")
def _():
    def inputs(rng, p):
        u = lambda n: rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)  # noqa: E731
        return {"x": u(p["in_dim"]), "w": u(p["in_dim"] * p["out_dim"]), "b": u(p["out_dim"])}
    return inputs, lambda ins, p: {"out": _u32_affine(ins["x"], ins["w"], ins["b"], p["in_dim"], p["out_dim"])}
