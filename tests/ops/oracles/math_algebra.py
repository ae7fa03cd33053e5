"""Oracles of vyre_vk/ops/math/algebra: lattice join/meet, saturating min-plus, the wrapping
sketch mix and the boolean-semiring matmul. All outputs are u32 and compared exactly."""
from __future__ import annotations

import numpy as np

from .core import U32, U32_MAX, oracle, ru32


def _mixed_u32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniform u32 with 1/4 small values and a few 0 / u32::MAX / u32::MAX-1 lanes."""
    x = ru32(rng, n)
    small = rng.random(n) < 0.25
    x[small] = rng.integers(0, 1000, small.sum())
    special = rng.random(n) < 0.05
    x[special] = rng.choice(np.asarray([0, U32_MAX, U32_MAX - 1], U32), special.sum())
    return x


def _binary_inputs(rng, p):
    return {"a": _mixed_u32(rng, p["size"]), "b": _mixed_u32(rng, p["size"])}


@oracle("vyre-libs::math::algebra::join", {"size": 1000}, 0, "bitwise OR: exact")
def _():
    return _binary_inputs, lambda ins, p: {"out": np.bitwise_or(ins["a"], ins["b"])}


@oracle("vyre-libs::math::algebra::meet", {"size": 1000}, 0, "bitwise AND: exact")
def _():
    return _binary_inputs, lambda ins, p: {"out": np.bitwise_and(ins["a"], ins["b"])}


@oracle("vyre-libs::math::algebra::minplus_mul", {"size": 1000}, 0, "saturating u32 add: exact")
def _():
    def np_fn(ins, p):
        total = ins["a"].astype(np.uint64) + ins["b"].astype(np.uint64)   # exact in u64
        return {"out": np.minimum(total, U32_MAX).astype(U32)}
    return _binary_inputs, np_fn


def wang_mix(x: np.ndarray) -> np.ndarray:
    """Thomas Wang's 32-bit integer mix, in u64 and reduced mod 2^32 after every step."""
    m = np.uint64(U32_MAX)
    h = np.asarray(x, np.uint64)
    h = (h + (~(h << np.uint64(15)) & m)) & m
    h ^= h >> np.uint64(12)
    h = (h + (h << np.uint64(2))) & m
    h ^= h >> np.uint64(4)
    h = (h * np.uint64(2057)) & m
    h ^= h >> np.uint64(16)
    return h.astype(U32)


@oracle("vyre-libs::math::algebra::sketch_mix", {"size": 1000}, 0, "wrapping u32 hash: exact")
def _():
    return (lambda rng, p: {"input": _mixed_u32(rng, p["size"])},
            lambda ins, p: {"out": wang_mix(ins["input"])})


# ---------------------------------------------------------------- boolean matmul
def sparse_u32(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """Zero with probability 1 - density, else a random non-zero u32 (not only 1)."""
    return np.where(rng.random(n) < density, ru32(rng, n, 2**32 - 1) + 1, 0).astype(U32)


def bool_matmul_np(a: np.ndarray, b: np.ndarray, rows: int, inner: int, cols: int) -> np.ndarray:
    hits = (a.reshape(rows, inner) != 0).astype(np.int64) @ (b.reshape(inner, cols) != 0).astype(np.int64)
    return (hits > 0).astype(U32).reshape(-1)


# 9*11 = 99 cells > 64: the one-invocation-per-cell loop program (tests/ops/math/test_algebra.py runs
# the unrolled single-invocation program on random inputs too).
@oracle("vyre-libs::math::algebra::bool_semiring_matmul", {"rows": 9, "inner": 13, "cols": 11}, 0,
        "0/1 OR of ANDs: exact")
def _():
    return (lambda rng, p: {"a": sparse_u32(rng, p["rows"] * p["inner"], 0.2),
                            "b": sparse_u32(rng, p["inner"] * p["cols"], 0.2)},
            lambda ins, p: {"out": bool_matmul_np(ins["a"], ins["b"], p["rows"], p["inner"], p["cols"])})
