"""Oracles of the ops in vyre_vk/ops/math/atomic: each op walks its values serially from the
initial state; the trace is the pre-op states."""
from __future__ import annotations

import numpy as np

from .core import U32, U32_MAX, oracle, ru32


def _serial(apply):
    def np_fn(ins, p):
        state = int(ins["state"][0])
        trace = []
        for v in ins["values"].tolist():
            trace.append(state)
            state = apply(state, int(v)) & U32_MAX
        return {"state": np.asarray([state], U32), "trace": np.asarray(trace, U32)}
    return np_fn


_SERIAL = {
    "atomic_add_u32": lambda s, v: s + v,
    "atomic_and_u32": lambda s, v: s & v,
    "atomic_exchange_u32": lambda s, v: v,
    "atomic_max_u32": max,
    "atomic_min_u32": min,
    "atomic_or_u32": lambda s, v: s | v,
    "atomic_xor_u32": lambda s, v: s ^ v,
}

for _name, _apply in _SERIAL.items():
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


