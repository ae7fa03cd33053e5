"""The oracle registry and the helpers every category module shares.

An oracle is an independent NumPy implementation of one op, written from its math (float64, not
from the IR), with random inputs for a run at >= 10x the registered vector's elements. It
returns, per result buffer, ``(value, scale)`` float64 arrays: the error of an f32 result is
measured in ULPs of ``scale`` (``|value|`` for single-rounding formulas; the sum of absolute terms
for dot products and cancelling formulas) and must stay within ``ulp``. Integer results are
exact arrays and must be equal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

F32 = np.float32
U32 = np.uint32
U32_MAX = 0xFFFFFFFF
F32_MIN = float(np.finfo(np.float32).min)


@dataclass(frozen=True)
class Oracle:
    params: dict                                     # builder parameters of the random run
    inputs: Callable[[np.random.Generator, dict], dict]
    numpy: Callable[[dict, dict], dict]              # name -> (value, scale) or exact array
    ulp: Callable[[dict], float]                     # window vs NumPy, in ULPs of `scale`
    why: str                                         # one line: where the window comes from
    repeats: int = 1                                 # independent random cases of a fixed-size program
    grid: Optional[tuple] = None                     # a dispatch override, where vyre's inferred one races
    module: str = ""                                 # the tests.ops.oracles module that registered it


ORACLES: dict[str, Oracle] = {}


def oracle(op_id: str, params: dict, ulp, why: str, repeats: int = 1, grid: Optional[tuple] = None):
    """Register the oracle of `op_id`: decorates a function returning ``(inputs, numpy)``."""
    def deco(fn):
        if op_id in ORACLES:
            raise ValueError(f"oracle for `{op_id}` registered twice. Fix: keep one, in its category module.")
        inputs_fn, numpy_fn = fn()
        window = ulp if callable(ulp) else (lambda p, u=ulp: u)
        ORACLES[op_id] = Oracle(params, inputs_fn, numpy_fn, window, why, repeats, grid, fn.__module__)
        return fn
    return deco


def d(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def f(x) -> float:
    """The f32 value the host folds a builder constant to (vyre's Rust builders use f32)."""
    return float(F32(x))


def normal(rng, n, s=1.0):
    return (rng.standard_normal(n) * s).astype(F32)


def ru32(rng, n, hi=2**32):
    return rng.integers(0, hi, n, dtype=np.uint64).astype(U32)


def exact(v):
    return d(v), np.abs(d(v))


def silu_np(z):
    return z / (1.0 + np.exp(-z))


def sigmoid_np(g):
    return 1.0 / (1.0 + np.exp(-g))


def top_k_desc(values, k):
    """Indices of the k largest, descending, ties keep the earlier index (strict-> insertion)."""
    return np.argsort(-d(values), kind="stable")[:k].astype(np.uint32)


def wrapping_gemm(a: np.ndarray, b: np.ndarray, m: int, k: int, n: int, bias=None) -> np.ndarray:
    """(a @ b + bias) mod 2^32, row-major flat result. Each product is reduced mod 2^32 before
    the k-sum, so the u64 sum of k < 2^32 terms cannot overflow."""
    prod = (a.astype(np.uint64).reshape(m, k)[:, :, None] * b.astype(np.uint64).reshape(k, n)[None, :, :]) & U32_MAX
    acc = prod.sum(axis=1)
    if bias is not None:
        acc = acc + bias.astype(np.uint64)[None, :]
    return (acc & U32_MAX).astype(U32).reshape(-1)
