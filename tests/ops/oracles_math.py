"""Independent NumPy oracles for the ops ported in ops3 (vyre-libs math, nn/optim, nn/quant),
written from each op's math, registered into ``ORACLES`` (tests/ops/oracles.py imports this
module at its end).

Fixed-size programs (e.g. the 2x2 Strassen kernel) take ``repeats`` independent random cases
so the random run still covers >= 10x the registered vector's elements.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::math::dot"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> spec.numpy(ins, spec.params)["out"].dtype
    dtype('uint32')
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .oracles import ORACLES, F32, Oracle, d, exact, normal

U32 = np.uint32
MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class RepeatedOracle(Oracle):
    repeats: int = 1                                 # independent random cases of a fixed-size program
    grid: tuple | None = None                        # a dispatch override, where vyre's inferred one races


def oracle(op_id: str, params: dict, ulp, why: str, repeats: int = 1, grid: tuple | None = None):
    def deco(fn):
        inputs_fn, numpy_fn = fn()
        ORACLES[op_id] = RepeatedOracle(params, inputs_fn, numpy_fn, ulp if callable(ulp) else (lambda p, u=ulp: u),
                                        why, repeats, grid)
        return fn
    return deco


def f(x) -> float:
    """The f32 value the host folds a builder constant to (vyre's Rust builders use f32)."""
    return float(F32(x))


def ru32(rng, n, hi=2**32):
    return rng.integers(0, hi, n, dtype=np.uint64).astype(U32)


# ---------------------------------------------------------------- math/linalg
@oracle("vyre-libs::math::dot", {"n": 2600}, 0, "wrapping u32: exact")
def _():
    def np_fn(ins, p):
        prod = (ins["lhs"].astype(np.uint64) * ins["rhs"].astype(np.uint64)) & MASK
        return {"out": np.asarray([int(prod.sum()) & MASK], U32)}
    return (lambda rng, p: {"lhs": ru32(rng, p["n"]), "rhs": ru32(rng, p["n"])}, np_fn)


def _wrapping_matmul(a, b, m, k, n):
    a = a.astype(np.uint64).reshape(m, k)
    b = b.astype(np.uint64).reshape(k, n)
    prod = (a[:, :, None] * b[None, :, :]) & MASK                  # each < 2^32, k of them fit in u64
    return (prod.sum(axis=1) & MASK).astype(U32).reshape(-1)


@oracle("vyre-libs::math::matmul", {"m": 16, "k": 12, "n": 20}, 0, "wrapping u32: exact")
def _():
    return (lambda rng, p: {"a": ru32(rng, p["m"] * p["k"]), "b": ru32(rng, p["k"] * p["n"])},
            lambda ins, p: {"out": _wrapping_matmul(ins["a"], ins["b"], p["m"], p["k"], p["n"])})


def _bias_inputs(rng, p):
    return {"a": ru32(rng, p["m"] * p["k"]), "b": ru32(rng, p["k"] * p["n"]), "bias": ru32(rng, p["n"])}


def _bias_np(ins, p):
    mm = _wrapping_matmul(ins["a"], ins["b"], p["m"], p["k"], p["n"]).astype(np.uint64).reshape(p["m"], p["n"])
    return {"out": ((mm + ins["bias"].astype(np.uint64)[None, :]) & MASK).astype(U32).reshape(-1)}


@oracle("vyre-libs::math::matmul_bias", {"m": 8, "k": 6, "n": 10}, 0, "wrapping u32: exact")
def _():
    return _bias_inputs, _bias_np


@oracle("vyre-libs::math::matmul_bias::scalar", {"m": 4, "k": 3, "n": 5}, 0, "wrapping u32: exact")
def _():
    return _bias_inputs, _bias_np


@oracle("vyre-libs::math::linalg::matmul_strassen_2x2", {}, 8,
        "Strassen is only normwise stable: in ULPs of (sum|A|)(sum|B|), a few roundings per product chain",
        repeats=16)
def _():
    def np_fn(ins, p):
        A, B = d(ins["a"]).reshape(2, 2), d(ins["b"]).reshape(2, 2)
        norm = np.abs(A).sum() * np.abs(B).sum()
        return {"c": ((A @ B).reshape(-1), np.full(4, norm))}
    return (lambda rng, p: {"a": normal(rng, 4, 3.0), "b": normal(rng, 4, 3.0)}, np_fn)


# ---------------------------------------------------------------- math/broadcast, reduce_variance
@oracle("vyre-libs::math::broadcast", {"n": 100}, 0, "copy: exact")
def _():
    return (lambda rng, p: {"src": ru32(rng, 1)},
            lambda ins, p: {"dst": np.full(p["n"], ins["src"][0], U32)})


@oracle("vyre-libs::math::reduce_variance", {"n": 3000}, 8,
        "Welford per lane (12 steps) + 8-level merge tree, in ULPs of E[x^2] (measured <= 1.3)")
def _():
    def np_fn(ins, p):
        x = d(ins["input"])
        return {"output": (np.asarray([x.var()]), np.asarray([np.mean(x * x)]))}
    return (lambda rng, p: {"input": (rng.standard_normal(p["n"]) * 1.5 + 0.5).astype(F32)}, np_fn)


# ---------------------------------------------------------------- math/atomic
def _serial(apply):
    def np_fn(ins, p):
        state = int(ins["state"][0])
        trace = []
        for v in ins["values"].tolist():
            trace.append(state)
            state = apply(state, int(v)) & MASK
        return {"state": np.asarray([state], U32), "trace": np.asarray(trace, U32)}
    return np_fn


_SERIAL = {
    "atomic_add_u32": (lambda s, v: s + v, 2**32),
    "atomic_and_u32": (lambda s, v: s & v, 2**32),
    "atomic_exchange_u32": (lambda s, v: v, 2**32),
    "atomic_max_u32": (max, 2**32),
    "atomic_min_u32": (min, 2**32),
    "atomic_or_u32": (lambda s, v: s | v, 2**32),
    "atomic_xor_u32": (lambda s, v: s ^ v, 2**32),
}

for _name, (_apply, _hi) in _SERIAL.items():
    def _make(apply=_apply, name=_name):
        def inputs(rng, p):
            vals = ru32(rng, p["n"])
            if name == "atomic_and_u32":   # keep most bits set so the state does not collapse to 0 at once
                vals = vals | ru32(rng, p["n"]) | ru32(rng, p["n"])
            return {"values": vals, "state": ru32(rng, 1)}
        return inputs, _serial(apply)
    oracle(f"vyre-libs::math::atomic::{_name}", {"n": 100}, 0, "serial walk: exact")(_make)


@oracle("vyre-libs::math::atomic::atomic_compare_exchange_u32", {"n": 100}, 0, "serial walk: exact")
def _():
    def inputs(rng, p):
        state = int(rng.integers(0, 2**32))
        s0, expected, desired = state, [], []
        for _ in range(p["n"]):           # about half of the lanes match the running state
            e = state if rng.random() < 0.5 else int(rng.integers(0, 2**32))
            w = int(rng.integers(0, 2**32))
            expected.append(e)
            desired.append(w)
            state = w if state == e else state
        return {"expected": np.asarray(expected, U32), "desired": np.asarray(desired, U32),
                "state": np.asarray([s0], U32)}

    def np_fn(ins, p):
        state, trace = int(ins["state"][0]), []
        for e, w in zip(ins["expected"].tolist(), ins["desired"].tolist()):
            trace.append(state)
            state = w if state == e else state
        return {"state": np.asarray([state], U32), "trace": np.asarray(trace, U32)}
    return inputs, np_fn


@oracle("vyre-libs::math::atomic::lru_update_u32", {"index": 0, "timestamp": 12345}, 0, "max: exact", repeats=12)
def _():
    return (lambda rng, p: {"buffer": ru32(rng, 1, 25000)},
            lambda ins, p: {"buffer": np.maximum(ins["buffer"], U32(p["timestamp"]))})


# ---------------------------------------------------------------- nn/optim
@oracle("vyre-libs::optim::adamw_step", {"n": 50, "lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.01},
        8, "m, v: two products and an add; params: sqrt, add, div, mul, sub in ULPs of |decayed| + |step|")
def _():
    def inputs(rng, p):
        n = p["n"]
        return {"params": normal(rng, n), "grads": normal(rng, n, 0.3), "m": normal(rng, n, 0.1),
                "v": np.abs(normal(rng, n, 0.05)).astype(F32)}

    def np_fn(ins, p):
        b1, b2, lr = f(p["beta1"]), f(p["beta2"]), f(p["lr"])
        c1, c2 = float(F32(1.0) - F32(p["beta1"])), float(F32(1.0) - F32(p["beta2"]))
        decay = float(F32(1.0) - F32(p["lr"]) * F32(p["wd"]))
        g, m, v, w = d(ins["grads"]), d(ins["m"]), d(ins["v"]), d(ins["params"])
        m1, v1 = b1 * m + c1 * g, b2 * v + c2 * g * g
        m2, v2 = b1 * m1 + c1 * g, b2 * v1 + c2 * g * g   # the params expression re-loads m, v after the stores
        step = lr * m2 / (np.sqrt(v2) + f(p["eps"]))
        return {"params": (w * decay - step, np.abs(w * decay) + np.abs(step)),
                "m": (m1, np.abs(b1 * m) + np.abs(c1 * g)), "v": (v1, np.abs(v1))}
    return inputs, np_fn


@oracle("vyre-libs::optim::ema_apply", {"n": 64, "decay": 0.9}, 2, "two products and an add, in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        a, b = f(p["decay"]) * d(ins["ema"]), float(F32(1.0) - F32(p["decay"])) * d(ins["theta"])
        return {"ema": (a + b, np.abs(a) + np.abs(b))}
    return (lambda rng, p: {"ema": normal(rng, p["n"], 10.0), "theta": normal(rng, p["n"], 10.0)}, np_fn)


def _muon(ins, lr, mu):
    g, m, w = d(ins["grads"]), d(ins["momentum"]), d(ins["params"])
    m1 = mu * m + g
    m2 = mu * m1 + g                      # the output expression re-loads the stored momentum
    step = lr * (g + mu * m2)
    mag = lr * (np.abs(g) + mu * (mu * (mu * np.abs(m) + np.abs(g)) + np.abs(g)))
    return {"momentum": (m1, mu * np.abs(m) + np.abs(g)), "output": (w - step, np.abs(w) + mag)}


def _muon_inputs(rng, p):
    n = p["n"]
    return {"params": normal(rng, n), "grads": normal(rng, n, 0.3), "momentum": normal(rng, n, 0.3)}


@oracle("vyre-libs::optim::muon_update", {"n": 40, "lr": 0.02, "momentum": 0.95}, 6,
        "momentum: mul+add; output: 6 roundings, in ULPs of sum |terms|")
def _():
    return _muon_inputs, lambda ins, p: _muon(ins, f(p["lr"]), f(p["momentum"]))


@oracle("vyre-libs::optim::muoneq_r", {"n": 64, "rows": 4, "cols": 2, "lr": 0.02, "momentum": 0.95}, 6,
        "as muon_update with lr*sqrt(max(1, rows/cols)) folded in f32")
def _():
    def np_fn(ins, p):
        scale = F32(np.sqrt(max(F32(p["rows"]) / F32(p["cols"]), F32(1.0)), dtype=F32))
        return _muon(ins, float(F32(scale * F32(p["lr"]))), f(p["momentum"]))
    return _muon_inputs, np_fn


_NS = (f(3.4445), f(-4.7750), f(2.0315))


@oracle("vyre-libs::optim::newton_schulz_5step", {"rows": 8, "cols": 8}, 8,
        "5 quintic steps; scale propagates each step's sum |terms| through |p'(x)| (first-order error bound)")
def _():
    def np_fn(ins, p):
        a, b, c = _NS
        x = d(ins["mat"])
        s = np.zeros_like(x)
        for _ in range(5):
            s = np.abs(a + 3 * b * x**2 + 5 * c * x**4) * s + np.abs(a * x) + np.abs(b * x**3) + np.abs(c * x**5)
            x = a * x + b * x**3 + c * x**5
        return {"output": (x, s)}
    return (lambda rng, p: {"mat": rng.uniform(-1.0, 1.0, p["rows"] * p["cols"]).astype(F32)}, np_fn)


# ---------------------------------------------------------------- nn/quant
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


# ---------------------------------------------------------------- math/conv
def _patches(img, h, w):
    """[h*w, 9] zero-padded 3x3 neighbourhoods, tap order ky*3+kx."""
    pad = np.zeros((h + 2, w + 2))
    pad[1:-1, 1:-1] = d(img).reshape(h, w)
    return np.stack([pad[ky:ky + h, kx:kx + w].reshape(-1) for ky in range(3) for kx in range(3)], axis=1)


@oracle("vyre-libs::math::conv::conv2d_3x3_direct", {"h": 16, "w": 16}, 10,
        "9 products summed in sequence (<= 10 roundings), in ULPs of sum |terms|")
def _():
    def np_fn(ins, p):
        terms = _patches(ins["input"], p["h"], p["w"]) * d(ins["kernel"])[None, :]
        return {"output": (terms.sum(axis=1), np.abs(terms).sum(axis=1))}
    return (lambda rng, p: {"input": normal(rng, p["h"] * p["w"]), "kernel": normal(rng, 9)}, np_fn)


@oracle("vyre-libs::math::conv::im2col_3x3", {"h": 12, "w": 14}, 0, "copies and zeros: exact")
def _():
    return (lambda rng, p: {"input": normal(rng, p["h"] * p["w"])},
            lambda ins, p: {"output": exact(_patches(ins["input"], p["h"], p["w"]).reshape(-1))})


# ---------------------------------------------------------------- math/fft
def _complex(x):
    x = d(x)
    return x[0::2] + 1j * x[1::2]


def _interleave(z):
    out = np.empty(2 * z.size)
    out[0::2], out[1::2] = z.real, z.imag
    return out


def _fft_oracle(ins, name):
    x = ins[name]
    norm = np.abs(d(x)).sum()           # every |X_k| <= sum |x|: a normwise scale for the butterflies
    return _interleave(np.fft.fft(_complex(x))), np.full(x.size, norm)


@oracle("vyre-libs::math::fft::fft4_complex", {}, 4, "2 adds per output, in ULPs of sum |x| (normwise)", repeats=12)
def _():
    return (lambda rng, p: {"input": normal(rng, 8)}, lambda ins, p: {"output": _fft_oracle(ins, "input")})


@oracle("vyre-libs::math::fft::fft_radix2", {"n": 16}, lambda p: 4 * int(np.log2(p["n"])),
        "log2(n) butterfly stages (f32 twiddles, mul-sub, add), in ULPs of sum |x| (normwise)",
        repeats=3)  # straight-line code grows as n log n: lavapipe compiles n=64 for minutes
def _():
    return (lambda rng, p: {"input": normal(rng, 2 * p["n"])}, lambda ins, p: {"output": _fft_oracle(ins, "input")})


@oracle("vyre-libs::math::fft::pointwise_complex_multiply_conjugate", {}, 2,
        "two products and an add/sub, in ULPs of sum |terms|", repeats=10)
def _():
    def np_fn(ins, p):
        a, b = _complex(ins["signal_freq"]), _complex(ins["kernel_freq"])
        prod = np.conj(a * b)
        mag = _interleave(np.abs(a.real * b.real) + np.abs(a.imag * b.imag)
                          + 1j * (np.abs(a.real * b.imag) + np.abs(a.imag * b.real)))
        return {"product_freq": (_interleave(prod), mag)}
    return (lambda rng, p: {"signal_freq": normal(rng, 8), "kernel_freq": normal(rng, 8)}, np_fn)


def _zero_small(v, eps=float(F32(1.0e-6))):
    return np.where(np.abs(v) < eps, 0.0, v)


@oracle("vyre-libs::math::fft::scale_conjugate_inverse", {}, 1, "one multiply by 1/n; |.| < 1e-6 -> 0",
        repeats=10)
def _():
    def inputs(rng, p):
        x = normal(rng, 8)
        x[:2] = [3e-6, -1e-6]          # scaled by 1/4 below the 1e-6 threshold -> 0
        return {"product_freq": x}

    def np_fn(ins, p):
        z = np.conj(_complex(ins["product_freq"])) * float(F32(0.25))
        return {"output": exact(_zero_small(_interleave(z)))}
    return inputs, np_fn


@oracle("vyre-libs::math::fft::fft_convolve_circular_complex", {"n": 8}, lambda p: 8 * int(np.log2(p["n"])),
        "3 FFTs (log2 n stages each), a product, 1/n: in ULPs of (sum|s|)(sum|k|)/n, the bound of |output|",
        repeats=5, grid=(1, 1, 1))
# One workgroup: vyre infers one invocation per output element (16 here), and every invocation
# runs the whole convolution and scales `output` in place, so on a GPU the workgroups race on
# `output` (the reference runs them one after another); about 1 run in 3 failed on lavapipe.
def _():
    def np_fn(ins, p):
        s, k = _complex(ins["signal"]), _complex(ins["kernel"])
        out = np.fft.ifft(np.fft.fft(s) * np.fft.fft(k))
        norm = np.abs(d(ins["signal"])).sum() * np.abs(d(ins["kernel"])).sum() / p["n"] * 2
        return {"output": (_zero_small(_interleave(out)), np.full(2 * p["n"], norm))}
    return (lambda rng, p: {"signal": normal(rng, 2 * p["n"]), "kernel": normal(rng, 2 * p["n"])}, np_fn)
