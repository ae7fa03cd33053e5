"""Oracles of the ops in vyre_vk/ops/nn/optim."""
from __future__ import annotations

import numpy as np

from .core import F32, d, f, normal, oracle


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
