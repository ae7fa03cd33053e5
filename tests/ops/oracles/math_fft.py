"""Oracles of the ops in vyre_vk/ops/math/fft (complex values interleaved re, im)."""
from __future__ import annotations

import numpy as np

from .core import F32, d, exact, normal, oracle


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
