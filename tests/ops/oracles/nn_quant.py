"""Oracles of the ops in vyre_vk/ops/nn/quant: byte shuffle, GPTQ rounding/clipping, int6/int8
pack and unpack, and the packed signed INT4 ops (vyre-libs/src/nn/quant/int4.rs).

INT4 packing (the layout contract, not the IR): lane ``k`` of a packed vector is bits
``4*(k%8) .. 4*(k%8)+3`` of word ``k/8``; codes 8..15 are -8..-1. Matrices are row-major with
``ceil(cols/8)`` words per row. Random words fill every nibble, so the unused high nibbles of a
row's last word (cols not a multiple of 8 below) hold garbage the ops must ignore.

Example::

    >>> unpack_i4(np.array([0xCDEF4321], np.uint32), 8).tolist()
    [1, 2, 3, 4, -1, -2, -3, -4]
"""
from __future__ import annotations

import numpy as np

from .core import F32, F32_MIN, U32, d, exact, f, normal, oracle, ru32


@oracle("vyre-libs::quant::byte_shuffle", {"n": 20, "elem_bytes": 4}, 0, "permutation: exact")
def _():
    return (lambda rng, p: {"input": ru32(rng, p["n"] * p["elem_bytes"], 256)},
            lambda ins, p: {"output": ins["input"].reshape(p["n"], p["elem_bytes"]).T.reshape(-1).copy()})


FMIN = float(np.finfo(np.float32).tiny)


def _clamp(v, lo, hi):
    v = np.where(np.isfinite(v), v, lo)      # vyre's clamp maps NaN and +-inf to `lo`
    return np.minimum(np.maximum(v, lo), hi)


def _with_specials(x, values):
    x = x.copy()
    x[:len(values)] = values
    return x


@oracle("vyre-libs::quant::gptq_round", {"n": 64, "max_val": 63.0}, 1, "one division; selects and clamps exact")
def _():
    def inputs(rng, p):
        x = normal(rng, p["n"], 100.0)
        s = rng.uniform(0.5, 5.0, p["n"]).astype(F32)
        x = _with_specials(x, [np.nan, np.inf, -np.inf, 3.0, 7.0, 1e30, -5.0, 2.5])
        s = _with_specials(s, [2.0, 2.0, 2.0, 3.0, 0.0, -1.0, np.inf, np.nan])  # x == s, zero/neg/inf/nan scales
        return {"input": x, "scale": s}

    def np_fn(ins, p):
        x = np.where(np.isfinite(d(ins["input"])), d(ins["input"]), 0.0)
        s = d(ins["scale"])
        s = np.where(np.isfinite(s) & (s > FMIN), s, FMIN)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            q = np.where(x == s, 1.0, x / s)
            q = np.where(np.abs(q) > float(np.finfo(np.float32).max), np.sign(q) * np.inf, q)   # f32 overflow
        return {"output": exact(_clamp(q, 0.0, f(p["max_val"])))}
    return inputs, np_fn


@oracle("vyre-libs::quant::gptq_sdclip", {"n": 64, "k": 30.0}, 0, "selects: exact")
def _():
    def inputs(rng, p):
        return {"input": _with_specials(normal(rng, p["n"], 40.0), [np.nan, np.inf, -np.inf, 30.0, -30.0])}

    def np_fn(ins, p):
        x = np.where(np.isfinite(d(ins["input"])), d(ins["input"]), 0.0)
        return {"output": exact(_clamp(x, -f(p["k"]), f(p["k"])))}
    return inputs, np_fn


@oracle("vyre-libs::quant::int6_unpack", {"n": 64, "block_size": 8}, 2, "exact cast, mul + add (contractible)")
def _():
    def inputs(rng, p):
        nb = -(-p["n"] // p["block_size"])
        return {"packed": ru32(rng, p["n"]), "scale": normal(rng, nb, 0.1), "zero": normal(rng, nb)}

    def np_fn(ins, p):
        blk = np.arange(p["n"]) // p["block_size"]
        a = d(ins["packed"] & U32(0x3F)) * d(ins["scale"])[blk]
        z = d(ins["zero"])[blk]
        return {"output": (a + z, np.abs(a) + np.abs(z))}
    return inputs, np_fn


@oracle("vyre-libs::quant::int8_unpack", {"n": 64, "cols": 8}, 2, "u32 -> f32 cast (rounds above 2^24) and a multiply")
def _():
    def inputs(rng, p):
        return {"packed": _with_specials(ru32(rng, p["n"]), [0, 255, 2**24 + 1, 2**32 - 1]),
                "scales": normal(rng, -(-p["n"] // p["cols"]))}

    def np_fn(ins, p):
        return {"output": exact(d(ins["packed"]) * d(ins["scales"])[np.arange(p["n"]) // p["cols"]])}
    return inputs, np_fn


@oracle("vyre-libs::quant::int6_pack", {"n": 64}, 0, "mask: exact")
def _():
    return (lambda rng, p: {"input": ru32(rng, p["n"])}, lambda ins, p: {"output": ins["input"] & U32(0x3F)})


@oracle("vyre-libs::quant::int8_pack", {"n": 64}, 0, "mask: exact")
def _():
    return (lambda rng, p: {"input": ru32(rng, p["n"])}, lambda ins, p: {"output": ins["input"] & U32(0xFF)})


# ---------------------------------------------------------------- int4
def unpack_i4(words: np.ndarray, cols: int) -> np.ndarray:
    """``[..., ceil(cols/8)]`` u32 words -> ``[..., cols]`` int64 lanes in -8..7."""
    w = np.asarray(words, np.uint64)
    nib = (w[..., :, None] >> (np.uint64(4) * np.arange(8, dtype=np.uint64))) & np.uint64(0xF)
    lanes = nib.astype(np.int64).reshape(*w.shape[:-1], w.shape[-1] * 8)[..., :cols]
    return np.where(lanes >= 8, lanes - 16, lanes)


def pack_i4(lanes: np.ndarray) -> np.ndarray:
    """``[..., cols]`` ints in -8..7 -> ``[..., ceil(cols/8)]`` u32 words (zero padding)."""
    lanes = np.asarray(lanes, np.int64)
    cols = lanes.shape[-1]
    pad = np.zeros((*lanes.shape[:-1], -(-cols // 8) * 8), np.uint64)
    pad[..., :cols] = (lanes & 0xF).astype(np.uint64)
    grouped = pad.reshape(*lanes.shape[:-1], -1, 8) << (np.uint64(4) * np.arange(8, dtype=np.uint64))
    return np.bitwise_or.reduce(grouped, axis=-1).astype(np.uint32)


def words(cols: int) -> int:
    return -(-cols // 8)


def wrap_i32(v) -> np.ndarray:
    return ((np.asarray(v, np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


def scaled_f32(acc, *scales) -> np.ndarray:
    """vyre's f32 association ``((acc * s0) * s1)``, each product rounded to f32 (acc exact in f32)."""
    out = np.asarray(acc, np.float64).astype(F32)
    for s in scales:
        out = (out * np.asarray(s, F32)).astype(F32)
    return out


def top1(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """vyre's documented rule per row of ``scores [batch, rows]``: start at (f32::MIN, 0) and take
    row r only if ``score[r] > best`` (strict: the first maximum wins a tie; NaN never wins)."""
    best = np.full(scores.shape[0], F32_MIN, F32)
    idx = np.zeros(scores.shape[0], np.int64)
    for b in range(scores.shape[0]):
        for r in range(scores.shape[1]):
            if scores[b, r] > best[b]:
                best[b], idx[b] = scores[b, r], r
    return best, idx


# The dots have one output: 8 independent cases per seed check more than one rounding.
@oracle("vyre-libs::quant::int4_dot_i32", {"lane_count": 1003}, 0, "integer dot, wrapping i32: exact", repeats=8)
def _():
    def inputs(rng, p):
        n = words(p["lane_count"])
        return {"lhs": ru32(rng, n), "rhs": ru32(rng, n)}

    def np_fn(ins, p):
        n = p["lane_count"]
        return {"out": wrap_i32([int((unpack_i4(ins["lhs"], n) * unpack_i4(ins["rhs"], n)).sum())])}
    return inputs, np_fn


@oracle("vyre-libs::quant::int4_dot_f32_scaled", {"lane_count": 1003}, 2,
        "exact integer dot (|acc| <= 64n < 2^24), then two rounding multiplies by the scales", repeats=8)
def _():
    def inputs(rng, p):
        n = words(p["lane_count"])
        return {"lhs": ru32(rng, n), "rhs": ru32(rng, n), "lhs_scale": normal(rng, 1, 0.1),
                "rhs_scale": normal(rng, 1, 0.1)}

    def np_fn(ins, p):
        n = p["lane_count"]
        acc = d((unpack_i4(ins["lhs"], n) * unpack_i4(ins["rhs"], n)).sum())
        return {"out": exact([acc * d(ins["lhs_scale"][0]) * d(ins["rhs_scale"][0])])}
    return inputs, np_fn


def _matvec_np(w_words, x, scales, rows, cols):
    w = d(unpack_i4(np.asarray(w_words).reshape(rows, words(cols)), cols))      # [rows, cols]
    x = d(x).reshape(-1, cols)                                                    # [batch, cols]
    s = d(scales)[None, :]
    return (((x @ w.T) * s).reshape(-1), ((np.abs(x) @ np.abs(w).T) * np.abs(s)).reshape(-1))


@oracle("vyre-libs::quant::int4_matvec_f32_scaled", {"rows": 40, "cols": 37}, lambda p: p["cols"] + 2,
        "exact lane decode, then cols roundings of a sequential dot and one scale multiply, in ULPs of sum |terms|")
def _():
    def inputs(rng, p):
        return {"weights": ru32(rng, p["rows"] * words(p["cols"])), "x": normal(rng, p["cols"]),
                "scales": normal(rng, p["rows"], 0.1)}
    return inputs, lambda ins, p: {"out": _matvec_np(ins["weights"], ins["x"], ins["scales"], p["rows"], p["cols"])}


@oracle("vyre-libs::quant::int4_batched_matvec_f32_scaled", {"batch": 3, "rows": 20, "cols": 37},
        lambda p: p["cols"] + 2,
        "exact lane decode, then cols roundings of a sequential dot and one scale multiply, in ULPs of sum |terms|")
def _():
    def inputs(rng, p):
        return {"weights": ru32(rng, p["rows"] * words(p["cols"])), "x": normal(rng, p["batch"] * p["cols"]),
                "scales": normal(rng, p["rows"], 0.1)}
    return inputs, lambda ins, p: {"out": _matvec_np(ins["weights"], ins["x"], ins["scales"], p["rows"], p["cols"])}


def _matmul_acc(ins, p) -> np.ndarray:
    """``[batch, rows]`` exact integer dots of the packed activations with the packed weights."""
    w = unpack_i4(ins["weights"].reshape(p["rows"], words(p["cols"])), p["cols"])
    a = unpack_i4(ins["activations"].reshape(p["batch"], words(p["cols"])), p["cols"])
    return a @ w.T


def _matmul_inputs(rng, p):
    return {"weights": ru32(rng, p["rows"] * words(p["cols"])), "activations": ru32(rng, p["batch"] * words(p["cols"])),
            "row_scales": normal(rng, p["rows"], 0.1), "batch_scales": normal(rng, p["batch"], 0.1)}


@oracle("vyre-libs::quant::int4_batched_matmul_f32_scaled", {"batch": 6, "rows": 20, "cols": 45}, 2,
        "exact integer dot (|acc| <= 64 cols < 2^24), then two rounding multiplies by the scales")
def _():
    def np_fn(ins, p):
        value = d(_matmul_acc(ins, p)) * d(ins["row_scales"])[None, :] * d(ins["batch_scales"])[:, None]
        return {"out": exact(value.reshape(-1))}
    return _matmul_inputs, np_fn


@oracle("vyre-libs::quant::int4_batched_matmul_top1_f32_scaled", {"batch": 10, "rows": 30, "cols": 21}, 0,
        "scores are vyre's f32 ((acc*row_scale)*batch_scale) with acc exact, so scores and indices are exact")
def _():
    def inputs(rng, p):
        # Ties at the maximum are common by construction: rows are drawn from a pool of few distinct
        # rows, scales from {0.5, 1} (so duplicate rows score equal), activations sometimes zero.
        ins = _matmul_inputs(rng, p)
        pool = rng.integers(-8, 8, (max(2, p["rows"] // 4), p["cols"]))
        ins["weights"] = pack_i4(pool[rng.integers(0, len(pool), p["rows"])]).reshape(-1)
        ins["row_scales"] = rng.choice(np.array([0.5, 1.0], F32), p["rows"])
        acts = rng.integers(-8, 8, (p["batch"], p["cols"]))
        acts[rng.random(p["batch"]) < 0.2] = 0                       # every score 0.0: row 0 wins
        ins["activations"] = pack_i4(acts).reshape(-1)
        return ins

    def np_fn(ins, p):
        scores = scaled_f32(_matmul_acc(ins, p), ins["row_scales"][None, :], ins["batch_scales"][:, None])
        best, idx = top1(scores)
        return {"out": np.concatenate([best, idx.astype(F32)])}
    return inputs, np_fn
