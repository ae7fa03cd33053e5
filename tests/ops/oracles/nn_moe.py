"""Oracles of the ops in vyre_vk/ops/nn/moe (top-k selection and mixture-of-experts gating)."""
from __future__ import annotations

import numpy as np

from .core import F32, d, exact, normal, oracle, top_k_desc


def _distinct_scores(rng, n, s=3.0):
    return rng.permutation(np.linspace(-s, s, n)).astype(F32) + normal(rng, n, 1e-3)


@oracle("vyre-libs::nn::top_k", {"n": 200, "k": 8}, 0, "a selection: values copied, exact")
def _():
    def np_fn(ins, p):
        idx = top_k_desc(ins["input"], p["k"])
        return {"output": idx, "best_idxs": idx, "best_vals": exact(ins["input"][idx])}
    return (lambda rng, p: {"input": _distinct_scores(rng, p["n"]), "best_vals": np.zeros(p["k"], F32),
                            "best_idxs": np.zeros(p["k"], np.uint32)}, np_fn)


@oracle("vyre-libs::nn::softmax_top_k", {"n": 240, "k": 8}, lambda p: p["n"] + 4,
        "exp (<=1 ULP) then a sequential sum of n positive terms (<= n-1 roundings) and a division")
def _():
    def np_fn(ins, p):
        s = d(ins["scores"])
        e = np.exp(s - s.max())
        idx = top_k_desc(s, p["k"])
        return {"indices": idx, "best_idxs": idx, "best_vals": exact(e[idx]), "weights": exact(e[idx] / e.sum())}
    return (lambda rng, p: {"scores": _distinct_scores(rng, p["n"]), "weights": np.zeros(p["k"], F32),
                            "best_vals": np.zeros(p["k"], F32), "best_idxs": np.zeros(p["k"], np.uint32)},
            np_fn)


def _softmax_weights(s, idx):
    e = np.exp(s - s.max())
    return e[idx] / e.sum()


@oracle("vyre-libs::nn::moe_gate", {"num_experts": 160, "k": 8}, lambda p: p["num_experts"] + 4,
        "exp (<=1 ULP), a sequential sum of E positive terms (<= E-1 roundings), exp and a division")
def _():
    def np_fn(ins, p):
        s = d(ins["scores"])
        idx = top_k_desc(s, p["k"])
        return {"indices": idx, "weights": exact(_softmax_weights(s, idx))}
    return (lambda rng, p: {"scores": _distinct_scores(rng, p["num_experts"]),
                            "indices": np.zeros(p["k"], np.uint32)}, np_fn)


@oracle("vyre-libs::nn::moe_gate::softmax_stats", {"num_experts": 300}, lambda p: p["num_experts"] + 2,
        "max and copy exact; sum of E exps: exp (<=1 ULP) + <= E-1 roundings of positive terms")
def _():
    def np_fn(ins, p):
        s = d(ins["scores"])
        return {"__moe_gate_scores_scratch": exact(s),
                "__moe_gate_stats": exact(np.array([s.max(), np.exp(s - s.max()).sum()]))}
    return (lambda rng, p: {"scores": normal(rng, p["num_experts"], 3.0),
                            "__moe_gate_scores_scratch": np.zeros(p["num_experts"], F32),
                            "__moe_gate_stats": np.zeros(2, F32)}, np_fn)


@oracle("vyre-libs::nn::moe_gate::weight_write", {"num_experts": 160, "k": 16}, 16,
        "given max and sum: s-max rounds (exp turns it into |s-max|/2 ULPs, |s-max| < 24 here), exp, div")
def _():
    def inputs(rng, p):
        s = normal(rng, p["num_experts"], 3.0)
        e = np.exp(d(s) - d(s).max())
        return {"scores": s, "indices": rng.permutation(p["num_experts"])[:p["k"]].astype(np.uint32),
                "__moe_gate_stats": np.array([s.max(), e.sum()], F32)}

    def np_fn(ins, p):
        s, (m, tot) = d(ins["scores"]), d(ins["__moe_gate_stats"])
        return {"weights": exact(np.exp(s[ins["indices"]] - m) / tot)}
    return inputs, np_fn
