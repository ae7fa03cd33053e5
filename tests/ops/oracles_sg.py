"""Independent NumPy oracles for the ops that use subgroup collectives (vyre-libs
nn::linear_4bit_affine_grouped), written from each op's math and registered into ``ORACLES``
(tests/ops/oracles.py imports this module at its end).

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::nn::linear_4bit_affine_grouped"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> value, scale = spec.numpy(ins, spec.params)["out"]
"""
from __future__ import annotations

import numpy as np

from .oracles import F32, d, normal
from .oracles_math import oracle, ru32


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
# vector (group_size 4) and tests/ops/test_sg.py cover the per-chunk path.
oracle("vyre-libs::nn::linear_4bit_affine_grouped", {"in_dim": 256, "out_dim": 20, "group_size": 64}, affine_window,
       "dot product of exact dequantised codes: 2 muls, per-chunk lane adds, 32 lane-order adds, bias")(
    lambda: (_affine_inputs, _affine_np))
