"""Independent NumPy oracles for the cooperative tiled GEMM ports (vyre-libs math::matmul_tiled,
math::matmul_bias_tiled, nn::linear_tiled), written from the math (wrapping u32 matrix products),
registered into ``ORACLES`` (tests/ops/oracles.py imports this module at its end).

The random shapes are ragged on purpose: m, n not multiples of the 16x16 output tile and k not a
multiple of the k-tile, so edge tiles, zero-padded tile slots and several workgroups all run.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::math::matmul_tiled"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> spec.numpy(ins, spec.params)["out"].shape
    (1480,)
"""
from __future__ import annotations

import numpy as np

from .oracles import ORACLES, Oracle

MASK = 0xFFFFFFFF


def _u32(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


def wrapping_gemm(a: np.ndarray, b: np.ndarray, m: int, k: int, n: int, bias=None) -> np.ndarray:
    """(a @ b + bias) mod 2^32, row-major flat result. Each product is reduced mod 2^32 before
    the k-sum, so the u64 sum of k < 2^32 terms cannot overflow."""
    prod = (a.astype(np.uint64).reshape(m, k)[:, :, None] * b.astype(np.uint64).reshape(k, n)[None, :, :]) & MASK
    acc = prod.sum(axis=1)
    if bias is not None:
        acc = acc + bias.astype(np.uint64)[None, :]
    return (acc & MASK).astype(np.uint32).reshape(-1)


def _register(op_id: str, params: dict, inputs, numpy_fn) -> None:
    ORACLES[op_id] = Oracle(params, inputs, numpy_fn, lambda p: 0, "wrapping u32: exact")


_register("vyre-libs::math::matmul_tiled", {"m": 37, "k": 45, "n": 40, "tile": 8},
          lambda rng, p: {"a": _u32(rng, p["m"] * p["k"]), "b": _u32(rng, p["k"] * p["n"])},
          lambda ins, p: {"out": wrapping_gemm(ins["a"], ins["b"], p["m"], p["k"], p["n"])})

_register("vyre-libs::math::matmul_bias_tiled", {"m": 29, "k": 21, "n": 50, "tile": 4},
          lambda rng, p: {"a": _u32(rng, p["m"] * p["k"]), "b": _u32(rng, p["k"] * p["n"]), "bias": _u32(rng, p["n"])},
          lambda ins, p: {"out": wrapping_gemm(ins["a"], ins["b"], p["m"], p["k"], p["n"], ins["bias"])})

# in_dim*out_dim > 16 * padded output: vyre's grid rule (workgroup memory -> inputs count too)
# launches idle workgroups past the single output row, which must not write.
_register("vyre-libs::nn::linear_tiled", {"in_dim": 37, "out_dim": 65, "tile": 16},
          lambda rng, p: {"x": _u32(rng, p["in_dim"]), "w": _u32(rng, p["in_dim"] * p["out_dim"]),
                          "b": _u32(rng, p["out_dim"])},
          lambda ins, p: {"out": wrapping_gemm(ins["x"], ins["w"], 1, p["in_dim"], p["out_dim"], ins["b"])})
