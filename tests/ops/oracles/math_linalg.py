"""Oracles of the ops in vyre_vk/ops/math/linalg: wrapping u32 products (plain and cooperative
tiled) and the f32 2x2 Strassen kernel.

The tiled random shapes are ragged on purpose: m, n not multiples of the 16x16 output tile and k
not a multiple of the k-tile, so edge tiles, zero-padded tile slots and several workgroups all run.
"""
from __future__ import annotations

import numpy as np

from .core import U32, U32_MAX, d, normal, oracle, ru32, wrapping_gemm


@oracle("vyre-libs::math::dot", {"n": 2600}, 0, "wrapping u32: exact")
def _():
    def np_fn(ins, p):
        prod = (ins["lhs"].astype(np.uint64) * ins["rhs"].astype(np.uint64)) & U32_MAX
        return {"out": np.asarray([int(prod.sum()) & U32_MAX], U32)}
    return (lambda rng, p: {"lhs": ru32(rng, p["n"]), "rhs": ru32(rng, p["n"])}, np_fn)


def _gemm_inputs(rng, p):
    return {"a": ru32(rng, p["m"] * p["k"]), "b": ru32(rng, p["k"] * p["n"])}


def _gemm_np(ins, p):
    return {"out": wrapping_gemm(ins["a"], ins["b"], p["m"], p["k"], p["n"])}


def _bias_inputs(rng, p):
    return {**_gemm_inputs(rng, p), "bias": ru32(rng, p["n"])}


def _bias_np(ins, p):
    return {"out": wrapping_gemm(ins["a"], ins["b"], p["m"], p["k"], p["n"], ins["bias"])}


# (op, random-run shape): the plain programs, then the cooperative tiled ones
for _op, _params, _bias in (("matmul", {"m": 16, "k": 12, "n": 20}, False),
                            ("matmul_bias", {"m": 8, "k": 6, "n": 10}, True),
                            ("matmul_bias::scalar", {"m": 4, "k": 3, "n": 5}, True),
                            ("matmul_tiled", {"m": 37, "k": 45, "n": 40, "tile": 8}, False),
                            ("matmul_bias_tiled", {"m": 29, "k": 21, "n": 50, "tile": 4}, True)):
    oracle(f"vyre-libs::math::{_op}", _params, 0, "wrapping u32: exact")(
        lambda bias=_bias: (_bias_inputs, _bias_np) if bias else (_gemm_inputs, _gemm_np))


@oracle("vyre-libs::math::linalg::matmul_strassen_2x2", {}, 8,
        "Strassen is only normwise stable: in ULPs of (sum|A|)(sum|B|), a few roundings per product chain",
        repeats=16)
def _():
    def np_fn(ins, p):
        A, B = d(ins["a"]).reshape(2, 2), d(ins["b"]).reshape(2, 2)
        norm = np.abs(A).sum() * np.abs(B).sum()
        return {"c": ((A @ B).reshape(-1), np.full(4, norm))}
    return (lambda rng, p: {"a": normal(rng, 4, 3.0), "b": normal(rng, 4, 3.0)}, np_fn)
