"""Independent NumPy implementations of every registered op, written from each op's math
(float64, not from the IR), with random inputs for a run at >= 10x the registered elements.

An oracle returns, per result buffer, ``(value, scale)`` float64 arrays: the error of an f32
result is measured in ULPs of ``scale`` (``|value|`` for single-rounding formulas; the sum of
absolute terms for dot products and cancelling formulas) and must stay within ``ulp``.
Integer results must be equal.

Example::

    >>> spec = ORACLES["vyre-libs::nn::silu"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> value, scale = spec.numpy(ins, spec.params)["output"]
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

F32 = np.float32


@dataclass(frozen=True)
class Oracle:
    params: dict                                     # builder parameters of the random run
    inputs: Callable[[np.random.Generator, dict], dict]
    numpy: Callable[[dict, dict], dict]              # name -> (value, scale) or exact array
    ulp: Callable[[dict], float]                     # window vs NumPy, in ULPs of `scale`
    why: str                                         # one line: where the window comes from


ORACLES: dict[str, Oracle] = {}


def oracle(op_id: str, params: dict, ulp, why: str):
    def deco(fn):
        inputs_fn, numpy_fn = fn()
        ORACLES[op_id] = Oracle(params, inputs_fn, numpy_fn, ulp if callable(ulp) else (lambda p, u=ulp: u), why)
        return fn
    return deco


def d(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def normal(rng, n, s=1.0):
    return (rng.standard_normal(n) * s).astype(F32)


def exact(v):
    return d(v), np.abs(d(v))


# ---------------------------------------------------------------- nn/activation
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


def _silu(z):
    return z / (1.0 + np.exp(-z))


@oracle("vyre-libs::nn::silu", {"n": 1000}, 8, "exp (<=1 ULP in the reference) + add, div, mul roundings")
def _():
    return (lambda rng, p: {"input": normal(rng, p["n"], 6.0)},
            lambda ins, p: {"output": exact(_silu(d(ins["input"])))})


@oracle("vyre-libs::nn::gelu", {"n": 1000}, 8,
        "scale |x|: 1+tanh cancels for x<0, its absolute error (~1 ULP of 1) times 0.5|x|")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        c, k = float(F32(0.7978846)), float(F32(0.044715))
        v = 0.5 * x * (1.0 + np.tanh(c * (x + k * x ** 3)))
        return {"output": (v, np.abs(x))}
    return (lambda rng, p: {"input": normal(rng, p["n"], 3.0)}, np_fn)


@oracle("vyre-libs::nn::logit_softcap", {"n": 1000, "cap": 30.0}, 8, "div, tanh (<=2 ULP), mul")
def _():
    return (lambda rng, p: {"input": normal(rng, p["n"], 40.0)},
            lambda ins, p: {"output": exact(np.tanh(d(ins["input"]) / p["cap"]) * p["cap"])})


def _sigmoid(g):
    return 1.0 / (1.0 + np.exp(-g))


@oracle("vyre-libs::nn::skip_gate", {"n": 1000}, 8,
        "scale |branch|+|skip|: (1-s) cancels as s->1, its absolute error is ~1 ULP of 1")
def _():
    def np_fn(ins, p):
        g, b, s = d(ins["gate"]), d(ins["branch"]), d(ins["skip"])
        sg = _sigmoid(g)
        return {"output": (sg * b + (1 - sg) * s, np.abs(b) + np.abs(s))}
    return (lambda rng, p: {"gate": normal(rng, p["n"], 4.0), "branch": normal(rng, p["n"], 10.0),
                            "skip": normal(rng, p["n"], 10.0)}, np_fn)


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
        l = d(ins["logits"]).reshape(p["n"], p["vocab_size"])
        m = l.max(axis=1)
        lse = np.log(np.exp(l - m[:, None]).sum(axis=1))
        tgt = l[np.arange(p["n"]), ins["targets"].astype(np.int64)]
        loss = m + lse - tgt
        return {"loss": (loss, np.maximum.reduce([np.abs(m), np.abs(lse), np.abs(tgt)]))}
    return inputs, np_fn


@oracle("vyre-libs::nn::parallel_residual_block", {"n": 1000}, 2, "two adds: scale |x|+|attn|+|mlp|")
def _():
    return (lambda rng, p: {"x": normal(rng, p["n"]), "attn": normal(rng, p["n"]), "mlp": normal(rng, p["n"])},
            lambda ins, p: {"out": (d(ins["x"]) + d(ins["attn"]) + d(ins["mlp"]),
                                    np.abs(d(ins["x"])) + np.abs(d(ins["attn"])) + np.abs(d(ins["mlp"])))})


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


@oracle("vyre-libs::nn::mlp_4x_leaky_sq", {"model_dim": 16, "hidden_dim": 64},
        lambda p: 2 * p["model_dim"] + p["hidden_dim"] + 8,
        "two dot products: (d+1) roundings in h (doubled by the square) + (h+1) in out, in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        dm, h = p["model_dim"], p["hidden_dim"]
        act, actmag = _mlp_hidden(ins["x"], ins["w1"], ins["b1"], dm, h)
        return {"out": _mlp_out(act, actmag, ins["w2"], ins["b2"], dm, h)}
    return _mlp_inputs, np_fn


@oracle("vyre-libs::nn::mlp_4x_leaky_sq::hidden_projection", {"model_dim": 16, "hidden_dim": 64},
        lambda p: 2 * p["model_dim"] + 8, "(d+1) roundings in h, doubled by the square, in ULPs of hmag^2")
def _():
    return (lambda rng, p: _mlp_inputs(rng, p, ("x", "w1", "b1")),
            lambda ins, p: {"__mlp_4x_leaky_sq_hidden": _mlp_hidden(
                ins["x"], ins["w1"], ins["b1"], p["model_dim"], p["hidden_dim"])})


@oracle("vyre-libs::nn::mlp_4x_leaky_sq::output_projection", {"model_dim": 16, "hidden_dim": 64},
        lambda p: p["hidden_dim"] + 4, "(h+1) roundings of a dot product, in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        hid = d(ins["__mlp_4x_leaky_sq_hidden"])
        return {"out": _mlp_out(hid, np.abs(hid), ins["w2"], ins["b2"], p["model_dim"], p["hidden_dim"])}
    return (lambda rng, p: _mlp_inputs(rng, p, ("w2", "b2", "__mlp_4x_leaky_sq_hidden")), np_fn)


# ---------------------------------------------------------------- nn/backward
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
        sg = _sigmoid(g)
        v = dy * sg * (1 - sg) * (b - s)
        scale = np.abs(dy) * (np.abs(b) + np.abs(s)) * sg
        return {"grad_gate": (v, scale)}
    return (lambda rng, p: {"gate": normal(rng, p["n"], 4.0), "branch": normal(rng, p["n"], 10.0),
                            "skip": normal(rng, p["n"], 10.0), "grad_out": normal(rng, p["n"])}, np_fn)


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
    def inputs(rng, p):
        H, S, D, R = p["num_heads"], p["seq_len"], p["head_dim"], p["rope_dims"]
        theta = rng.uniform(-math.pi, math.pi, S * (R // 2))
        return {"grad_out": normal(rng, H * S * D), "cos": np.cos(theta).astype(F32),
                "sin": np.sin(theta).astype(F32)}

    def np_fn(ins, p):
        H, S, D, R = p["num_heads"], p["seq_len"], p["head_dim"], p["rope_dims"]
        dy = d(ins["grad_out"]).reshape(H, S, D)
        c = d(ins["cos"]).reshape(S, R // 2)[None, :, :]
        s = d(ins["sin"]).reshape(S, R // 2)[None, :, :]
        e, o = dy[:, :, 0:R:2], dy[:, :, 1:R:2]
        out, scale = dy.copy(), np.abs(dy)
        out[:, :, 0:R:2], scale[:, :, 0:R:2] = e * c + o * s, np.abs(e * c) + np.abs(o * s)
        out[:, :, 1:R:2], scale[:, :, 1:R:2] = -e * s + o * c, np.abs(e * s) + np.abs(o * c)
        return {"grad_in": (out.reshape(-1), scale.reshape(-1))}
    return inputs, np_fn


# ---------------------------------------------------------------- nn/linear
def _linear(ins, p):
    W = d(ins["w"]).reshape(p["in_dim"], p["out_dim"])
    return d(ins["b"]) + d(ins["x"]) @ W, np.abs(d(ins["b"])) + np.abs(d(ins["x"])) @ np.abs(W)


def _linear_inputs(rng, p):
    return {"x": normal(rng, p["in_dim"]), "w": normal(rng, p["in_dim"] * p["out_dim"], 0.3),
            "b": normal(rng, p["out_dim"])}


@oracle("vyre-libs::nn::linear_relu", {"in_dim": 24, "out_dim": 40}, lambda p: p["in_dim"] + 4,
        "(in+1) roundings of a dot product, in ULPs of sum |terms|; relu exact")
def _():
    def np_fn(ins, p):
        acc, mag = _linear(ins, p)
        return {"out": (np.maximum(0.0, acc), mag)}
    return _linear_inputs, np_fn


@oracle("vyre-libs::nn::linear_silu", {"in_dim": 24, "out_dim": 40}, lambda p: p["in_dim"] + 12,
        "dot product error (silu' <= 1.1) + silu's exp/add/div/mul roundings, in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        acc, mag = _linear(ins, p)
        return {"out": (_silu(acc), mag)}
    return _linear_inputs, np_fn


@oracle("vyre-libs::nn::rms_norm_linear", {"n": 20, "in_dim": 24, "out_dim": 40, "eps": 1e-5},
        lambda p: p["n"] // 2 + p["in_dim"] + 8,
        "inv_rms (n squares, div, add, sqrt, recip: ~n/2+3) + dot product (in+1), in ULPs of sum |terms|")
def _():
    def inputs(rng, p):
        return {"input": normal(rng, p["in_dim"]), "w": normal(rng, p["in_dim"] * p["out_dim"], 0.3),
                "b": normal(rng, p["out_dim"])}

    def np_fn(ins, p):
        x = d(ins["input"])
        s = 1.0 / math.sqrt(float(np.sum(x[:p["n"]] ** 2)) / p["n"] + float(F32(p["eps"])))
        W = d(ins["w"]).reshape(p["in_dim"], p["out_dim"])
        return {"out": (d(ins["b"]) + (x * s) @ W, np.abs(d(ins["b"])) + (np.abs(x) * s) @ np.abs(W))}
    return inputs, np_fn


# ---------------------------------------------------------------- nn/norm
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
from . import oracles_nn2  # noqa: E402,F401  (second nn batch registers its oracles)
from . import oracles_math  # noqa: E402,F401  (ops3: math, nn/optim, nn/quant oracles register here)
from . import oracles_tiled  # noqa: E402,F401  (tiled GEMM ports: matmul_tiled, matmul_bias_tiled, linear_tiled)
from . import oracles_int4  # noqa: E402,F401  (packed INT4 quant ops register here)
from . import oracles_alg  # noqa: E402,F401  (math::algebra, math::succinct oracles register here)
from . import oracles_sg  # noqa: E402,F401  (subgroup ops: linear_4bit_affine_grouped)
