"""Oracles of the ops in vyre_vk/ops/nn/linear: f32 linear layers fused with an activation or an
RMS norm, the u32 wrapping linear (plain and tiled) and the 4-bit ones."""
from __future__ import annotations

import math

import numpy as np

from .core import F32, d, normal, oracle, ru32, silu_np, wrapping_gemm


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
        return {"out": (silu_np(acc), mag)}
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


# ---------------------------------------------------------------- u32 wrapping linear
def _u32_linear(rng, p):
    return {"x": ru32(rng, p["in_dim"]), "w": ru32(rng, p["in_dim"] * p["out_dim"]), "b": ru32(rng, p["out_dim"])}


def _u32_linear_np(ins, p):
    return {"out": wrapping_gemm(ins["x"], ins["w"], 1, p["in_dim"], p["out_dim"], ins["b"])}


@oracle("vyre-libs::nn::linear", {"in_dim": 24, "out_dim": 40}, 0, "u32 wrapping arithmetic: exact")
def _():
    return _u32_linear, _u32_linear_np


# in_dim*out_dim > 16 * padded output: vyre's grid rule (workgroup memory -> inputs count too)
# launches idle workgroups past the single output row, which must not write.
@oracle("vyre-libs::nn::linear_tiled", {"in_dim": 37, "out_dim": 65, "tile": 16}, 0, "wrapping u32: exact")
def _():
    return _u32_linear, _u32_linear_np


# ---------------------------------------------------------------- 4-bit weights
@oracle("vyre-libs::nn::linear_4bit", {"in_dim": 48, "out_dim": 24}, lambda p: p["in_dim"] + 2,
        "exact nibble decode, then (in+1) roundings of a dot product, in ULPs of sum |terms|")
def _():
    def inputs(rng, p):
        codes = rng.integers(0, 16, (p["in_dim"] // 8, 8, p["out_dim"]), dtype=np.uint64)
        words = np.zeros((p["in_dim"] // 8, p["out_dim"]), np.uint64)
        for s in range(8):
            words |= codes[:, s, :] << np.uint64(4 * s)
        return {"x": normal(rng, p["in_dim"]), "w": words.reshape(-1).astype(np.uint32), "b": normal(rng, p["out_dim"])}

    def np_fn(ins, p):
        w = ins["w"].astype(np.uint64).reshape(p["in_dim"] // 8, p["out_dim"])
        W = np.stack([(w >> np.uint64(4 * s)) & np.uint64(0xF) for s in range(8)], axis=1)
        W = W.reshape(p["in_dim"], p["out_dim"]).astype(np.float64)
        x, b = d(ins["x"]), d(ins["b"])
        return {"out": (b + x @ W, np.abs(b) + np.abs(x) @ W)}
    return inputs, np_fn


def affine_grouped_weights(w: np.ndarray, zp: np.ndarray, scale: np.ndarray, in_dim: int, out_dim: int,
                           group_size: int) -> np.ndarray:
    """Dequantised weights (in_dim, out_dim), float64: (code(k, i) - zp[g, i]) * scale[g, i], g = k // group_size;
    code(k, i) is nibble k % 8 (lowest first) of word (k // 8, i) of the row-major (in_dim/8, out_dim) words."""
    words = w.astype(np.int64).reshape(in_dim // 8, out_dim)
    k = np.arange(in_dim)
    codes = (words[k // 8, :] >> (4 * (k % 8))[:, None]) & 0xF
    g = k // group_size
    groups = -(-in_dim // group_size)
    zp = zp.astype(np.float64).reshape(groups, out_dim)[g, :]
    sc = d(scale).reshape(groups, out_dim)[g, :]
    return (codes - zp) * sc


def _affine_inputs(rng, p):
    groups = -(-p["in_dim"] // p["group_size"])
    return {"x": normal(rng, p["in_dim"]), "w": ru32(rng, p["in_dim"] // 8 * p["out_dim"]),
            "scale": rng.uniform(0.01, 0.2, groups * p["out_dim"]).astype(F32),
            "zp": rng.integers(0, 16, groups * p["out_dim"]).astype(np.uint32), "b": normal(rng, p["out_dim"])}


def _affine_np(ins, p):
    wt = affine_grouped_weights(ins["w"], ins["zp"], ins["scale"], p["in_dim"], p["out_dim"], p["group_size"])
    x, b = d(ins["x"]), d(ins["b"])
    return {"out": (b + x @ wt, np.abs(b) + np.abs(x) @ np.abs(wt))}


def affine_window(p) -> int:
    """Roundings on the longest path, in ULPs of sum |terms|: mul by scale, mul by x, one add per 32-k chunk
    in the lane's accumulator, 32 lane-order adds of the subgroup sum, the bias add (codes - zp is exact)."""
    return 2 + -(-p["in_dim"] // 32) + 32 + 1


# group_size 64 (> 32 and a multiple of it) takes the per-group sidecar-broadcast path; the registered
# vector (group_size 4) and tests/ops/nn/test_linear_4bit_affine_grouped.py cover the per-chunk path.
oracle("vyre-libs::nn::linear_4bit_affine_grouped", {"in_dim": 256, "out_dim": 20, "group_size": 64}, affine_window,
       "dot product of exact dequantised codes: 2 muls, per-chunk lane adds, 32 lane-order adds, bias")(
    lambda: (_affine_inputs, _affine_np))
