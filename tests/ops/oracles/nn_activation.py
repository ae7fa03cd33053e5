"""Oracles of the ops in vyre_vk/ops/nn/activation."""
from __future__ import annotations

import numpy as np

from .core import F32, d, exact, normal, oracle, sigmoid_np, silu_np


@oracle("vyre-libs::nn::relu", {"n": 1000}, 0, "u32 identity: exact")
def _():
    return (lambda rng, p: {"input": rng.integers(0, 2**32, p["n"], dtype=np.uint64).astype(np.uint32)},
            lambda ins, p: {"output": np.maximum(0, ins["input"].astype(np.int64)).astype(np.uint32)})


@oracle("vyre-libs::nn::leaky_relu_sq", {"n": 1000}, 1, "0.5x exact, max exact, one rounding in the square")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        lk = np.where(x >= 0, x, 0.5 * x)
        return {"output": exact(lk * lk)}
    return (lambda rng, p: {"input": normal(rng, p["n"], 4.0)}, np_fn)


@oracle("vyre-libs::nn::silu", {"n": 1000}, 8, "exp (<=1 ULP in the reference) + add, div, mul roundings")
def _():
    return (lambda rng, p: {"input": normal(rng, p["n"], 6.0)},
            lambda ins, p: {"output": exact(silu_np(d(ins["input"])))})


def gelu_np(x):
    """vyre's tanh form with its f32 constants, in float64."""
    c, k = float(F32(0.7978846)), float(F32(0.044715))
    return 0.5 * x * (1.0 + np.tanh(c * (x + k * x ** 3)))


@oracle("vyre-libs::nn::gelu", {"n": 1000}, 8,
        "scale |x|: 1+tanh cancels for x<0, its absolute error (~1 ULP of 1) times 0.5|x|")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        return {"output": (gelu_np(x), np.abs(x))}
    return (lambda rng, p: {"input": normal(rng, p["n"], 3.0)}, np_fn)


@oracle("vyre-libs::nn::logit_softcap", {"n": 1000, "cap": 30.0}, 8, "div, tanh (<=2 ULP), mul")
def _():
    return (lambda rng, p: {"input": normal(rng, p["n"], 40.0)},
            lambda ins, p: {"output": exact(np.tanh(d(ins["input"]) / p["cap"]) * p["cap"])})


def skip_gate_inputs(rng, p, *extra):
    """gate, branch, skip (and `extra` unit-normal buffers) of n elements: skip_gate and its backward."""
    ins = {"gate": normal(rng, p["n"], 4.0), "branch": normal(rng, p["n"], 10.0), "skip": normal(rng, p["n"], 10.0)}
    return {**ins, **{name: normal(rng, p["n"]) for name in extra}}


@oracle("vyre-libs::nn::skip_gate", {"n": 1000}, 8,
        "scale |branch|+|skip|: (1-s) cancels as s->1, its absolute error is ~1 ULP of 1")
def _():
    def np_fn(ins, p):
        g, b, s = d(ins["gate"]), d(ins["branch"]), d(ins["skip"])
        sg = sigmoid_np(g)
        return {"output": (sg * b + (1 - sg) * s, np.abs(b) + np.abs(s))}
    return skip_gate_inputs, np_fn


@oracle("vyre-libs::nn::embedding", {"n": 40, "embed_dim": 16}, 0, "a gather: exact")
def _():
    def inputs(rng, p):
        vocab = 37
        return {"table": normal(rng, vocab * p["embed_dim"]),
                "tokens": rng.integers(0, vocab, p["n"]).astype(np.uint32)}

    def np_fn(ins, p):
        table = ins["table"].reshape(-1, p["embed_dim"])
        return {"output": exact(table[ins["tokens"]].reshape(-1))}
    return inputs, np_fn


@oracle("vyre-libs::nn::cross_entropy", {"n": 5, "vocab_size": 300}, 16,
        "scale max(|max|,|lse|,|target|): tree sum of exp (log2 V roundings, relative), log, two adds")
def _():
    def inputs(rng, p):
        return {"logits": normal(rng, p["n"] * p["vocab_size"], 3.0),
                "targets": rng.integers(0, p["vocab_size"], p["n"]).astype(np.uint32)}

    def np_fn(ins, p):
        logits = d(ins["logits"]).reshape(p["n"], p["vocab_size"])
        m = logits.max(axis=1)
        lse = np.log(np.exp(logits - m[:, None]).sum(axis=1))
        tgt = logits[np.arange(p["n"]), ins["targets"].astype(np.int64)]
        loss = m + lse - tgt
        return {"loss": (loss, np.maximum.reduce([np.abs(m), np.abs(lse), np.abs(tgt)]))}
    return inputs, np_fn


@oracle("vyre-libs::nn::parallel_residual_block", {"n": 1000}, 2, "two adds: scale |x|+|attn|+|mlp|")
def _():
    return (lambda rng, p: {"x": normal(rng, p["n"]), "attn": normal(rng, p["n"]), "mlp": normal(rng, p["n"])},
            lambda ins, p: {"out": (d(ins["x"]) + d(ins["attn"]) + d(ins["mlp"]),
                                    np.abs(d(ins["x"])) + np.abs(d(ins["attn"])) + np.abs(d(ins["mlp"])))})


@oracle("vyre-libs::nn::swiglu", {"n": 1000}, 10, "exp (<=1 ULP in the reference) + add, div and two mul roundings")
def _():
    return (lambda rng, p: {"gate": normal(rng, p["n"], 6.0), "up": normal(rng, p["n"], 3.0)},
            lambda ins, p: {"output": exact(silu_np(d(ins["gate"])) * d(ins["up"]))})


# ---------------------------------------------------------------- mlp_4x_leaky_sq and its two stages
def _mlp_hidden(x, w1, b1, dm, h):
    W1 = d(w1).reshape(dm, h)
    hid = d(b1) + d(x) @ W1
    hmag = np.abs(d(b1)) + np.abs(d(x)) @ np.abs(W1)
    lk = np.where(hid >= 0, hid, 0.5 * hid)
    return lk * lk, hmag * hmag


def _mlp_out(act, actmag, w2, b2, dm, h):
    W2 = d(w2).reshape(h, dm)
    return d(b2) + act @ W2, np.abs(d(b2)) + actmag @ np.abs(W2)


def _mlp_inputs(rng, p, names=("x", "w1", "b1", "w2", "b2")):
    dm, h = p["model_dim"], p["hidden_dim"]
    sizes = {"x": dm, "w1": dm * h, "b1": h, "w2": h * dm, "b2": dm,
             "__mlp_4x_leaky_sq_hidden": h}
    return {n: normal(rng, sizes[n], 0.5) for n in names}


_MLP = {"model_dim": 16, "hidden_dim": 64}


@oracle("vyre-libs::nn::mlp_4x_leaky_sq", _MLP, lambda p: 2 * p["model_dim"] + p["hidden_dim"] + 8,
        "two dot products: (d+1) roundings in h (doubled by the square) + (h+1) in out, in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        dm, h = p["model_dim"], p["hidden_dim"]
        act, actmag = _mlp_hidden(ins["x"], ins["w1"], ins["b1"], dm, h)
        return {"out": _mlp_out(act, actmag, ins["w2"], ins["b2"], dm, h)}
    return _mlp_inputs, np_fn


@oracle("vyre-libs::nn::mlp_4x_leaky_sq::hidden_projection", _MLP,
        lambda p: 2 * p["model_dim"] + 8, "(d+1) roundings in h, doubled by the square, in ULPs of hmag^2")
def _():
    return (lambda rng, p: _mlp_inputs(rng, p, ("x", "w1", "b1")),
            lambda ins, p: {"__mlp_4x_leaky_sq_hidden": _mlp_hidden(
                ins["x"], ins["w1"], ins["b1"], p["model_dim"], p["hidden_dim"])})


@oracle("vyre-libs::nn::mlp_4x_leaky_sq::output_projection", _MLP,
        lambda p: p["hidden_dim"] + 4, "(h+1) roundings of a dot product, in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        hid = d(ins["__mlp_4x_leaky_sq_hidden"])
        return {"out": _mlp_out(hid, np.abs(hid), ins["w2"], ins["b2"], p["model_dim"], p["hidden_dim"])}
    return (lambda rng, p: _mlp_inputs(rng, p, ("w2", "b2", "__mlp_4x_leaky_sq_hidden")), np_fn)
