"""Oracles of the ops in vyre_vk/ops/nn/backward."""
from __future__ import annotations

import numpy as np

from .core import F32, d, exact, normal, oracle, sigmoid_np
from .nn_activation import skip_gate_inputs
from .nn_attention import rope_inputs, rope_np


@oracle("vyre-libs::nn::mlp_backward", {"model_dim": 16, "hidden_dim": 64},
        lambda p: 2 * p["model_dim"] + p["hidden_dim"] + 8,
        "h (d+1 roundings), g (d), accumulation over h: in ULPs of sum |terms|")
def _():
    def inputs(rng, p):
        dm, h = p["model_dim"], p["hidden_dim"]
        return {"x": normal(rng, dm), "w1": normal(rng, dm * h, 0.5), "b1": normal(rng, h),
                "w2": normal(rng, h * dm, 0.5), "grad_out": normal(rng, dm)}

    def np_fn(ins, p):
        dm, h = p["model_dim"], p["hidden_dim"]
        W1, W2 = d(ins["w1"]).reshape(dm, h), d(ins["w2"]).reshape(h, dm)
        hid = d(ins["b1"]) + d(ins["x"]) @ W1
        hmag = np.abs(d(ins["b1"])) + np.abs(d(ins["x"])) @ np.abs(W1)
        dact = np.where(hid >= 0, 2.0 * hid, 0.5 * hid)
        g, gmag = W2 @ d(ins["grad_out"]), np.abs(W2) @ np.abs(d(ins["grad_out"]))
        return {"grad_x": (W1 @ (g * dact), np.abs(W1) @ (gmag * 2.0 * hmag))}
    return inputs, np_fn


@oracle("vyre-libs::nn::leaky_relu_sq_backward", {"n": 1000}, 1, "0.5x/2x exact, one rounding in dy*d")
def _():
    def np_fn(ins, p):
        x, dy = d(ins["input"]), d(ins["grad_out"])
        return {"grad_in": exact(dy * np.where(x >= 0, 2.0 * x, 0.5 * x))}
    return (lambda rng, p: {"input": normal(rng, p["n"], 4.0), "grad_out": normal(rng, p["n"])}, np_fn)


@oracle("vyre-libs::nn::logit_softcap_backward", {"n": 1000, "cap": 30.0}, 16,
        "x/cap rounding amplified by 2|z| <= 8 in exp, then exp, add, mul, div roundings")
def _():
    def np_fn(ins, p):
        x, dy = d(ins["input"]), d(ins["grad_out"])
        return {"grad_in": exact(dy * (1.0 - np.tanh(x / p["cap"]) ** 2))}
    return (lambda rng, p: {"input": rng.uniform(-120, 120, p["n"]).astype(F32),
                            "grad_out": normal(rng, p["n"])}, np_fn)


@oracle("vyre-libs::nn::skip_gate_backward", {"n": 1000}, 8,
        "scale |dy|*(|b|+|skip|)*s: (1-s) cancels as s->1 (absolute error ~1 ULP of s); b-skip rounds once")
def _():
    def np_fn(ins, p):
        g, b, s, dy = (d(ins[k]) for k in ("gate", "branch", "skip", "grad_out"))
        sg = sigmoid_np(g)
        v = dy * sg * (1 - sg) * (b - s)
        scale = np.abs(dy) * (np.abs(b) + np.abs(s)) * sg
        return {"grad_gate": (v, scale)}
    return (lambda rng, p: skip_gate_inputs(rng, p, "grad_out"), np_fn)


@oracle("vyre-libs::nn::qk_gain_backward", {"num_heads": 4, "seq_len": 8, "head_dim": 16}, 1, "one multiply")
def _():
    def np_fn(ins, p):
        per_head = p["seq_len"] * p["head_dim"]
        return {"grad_q": exact(d(ins["grad_out"]) * np.repeat(d(ins["gain"]), per_head))}
    return (lambda rng, p: {"gain": normal(rng, p["num_heads"]),
                            "grad_out": normal(rng, p["num_heads"] * p["seq_len"] * p["head_dim"])}, np_fn)


@oracle("vyre-libs::nn::ln_scale_backward", {"n": 1000}, 1, "one multiply per output")
def _():
    def inputs(rng, p):
        return {"input": normal(rng, p["n"]), "scale": normal(rng, p["n"]), "grad_out": normal(rng, p["n"]),
                "grad_scale": normal(rng, p["n"])}  # in/out buffer: its initial contents are overwritten
    return (inputs, lambda ins, p: {"grad_x": exact(d(ins["grad_out"]) * d(ins["scale"])),
                                    "grad_scale": exact(d(ins["grad_out"]) * d(ins["input"]))})


@oracle("vyre-libs::nn::residual_block_backward", {"n": 1000}, 0, "copies: exact")
def _():
    def inputs(rng, p):
        return {"grad_out": normal(rng, p["n"]), "grad_attn": normal(rng, p["n"]), "grad_mlp": normal(rng, p["n"])}
    return (inputs, lambda ins, p: {k: exact(ins["grad_out"]) for k in ("grad_x", "grad_attn", "grad_mlp")})


@oracle("vyre-libs::nn::partial_rope_backward", {"num_heads": 3, "seq_len": 5, "head_dim": 16, "rope_dims": 8},
        4, "two products and an add (contractible), scale |e*c|+|o*s|; the 0/1 blend is exact")
def _():
    # The backward rotation is the forward one by -theta (sin negated).
    return (lambda rng, p: rope_inputs(rng, p, "grad_out"),
            lambda ins, p: {"grad_in": rope_np(ins["grad_out"], ins["cos"], -d(ins["sin"]), p)})
