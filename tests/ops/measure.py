"""Run one op on random inputs through the reference, Vulkan and its NumPy oracle, and report
the largest errors. ``python -m tests.ops.measure`` prints the table for every registered op.

Errors vs NumPy are in ULPs of the oracle's per-element scale; reference vs Vulkan uses vyre's
metric (sign-ordered ULP distance of the f32 bit patterns).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare, ulp_distance

from .oracles import ORACLES

FLT_MIN = float(np.finfo(np.float32).tiny)


@dataclass
class Measured:
    op: str
    elements: int               # input + output elements of the random run
    registered_elements: int    # the same count for the registered vector
    ref_vs_vk_ulp: int          # vyre metric
    vk_budget: int
    ref_vs_np: float            # in ULPs of the oracle's scale
    vk_vs_np: float
    np_window: float
    report_ok: bool
    mismatch: str


def scaled_ulps(got: np.ndarray, value: np.ndarray, scale: np.ndarray) -> float:
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    value = np.asarray(value, dtype=np.float64).reshape(-1)
    scale = np.maximum(np.asarray(scale, dtype=np.float64).reshape(-1), np.abs(value))
    ulp = np.spacing(np.maximum(scale, FLT_MIN).astype(np.float32)).astype(np.float64)
    both_nan = np.isnan(got) & np.isnan(value)
    err = np.where(both_nan, 0.0, np.abs(got - value) / ulp)
    return float(np.nan_to_num(err, nan=np.inf).max()) if err.size else 0.0


def np_error(got: dict, want: dict) -> float:
    worst = 0.0
    for name, w in want.items():
        if isinstance(w, tuple):
            worst = max(worst, scaled_ulps(got[name], *w))
        elif not np.array_equal(np.asarray(got[name]), w):
            worst = float("inf")
    return worst


def registered_elements(entry) -> int:
    case, exp = entry.test_inputs()[0], entry.expected_output()[0]
    return sum(len(b) // 4 for b in case) + sum(len(b) // 4 for b in exp)


def measure(op_id: str, device=None, seed: int = 0) -> Measured:
    entry = ops.get(op_id)
    spec = ORACLES[op_id]
    program = entry.build_with(**spec.params)
    rng = np.random.default_rng(seed)
    ins = spec.inputs(rng, spec.params)
    grid = getattr(spec, "grid", None)  # a dispatch override where vyre's inferred grid races
    ref = reference.run(program, ins, grid=grid)
    want = spec.numpy(ins, spec.params)
    elements = sum(np.asarray(v).size for v in ins.values()) + sum(v.size for v in ref.values())
    ref_np = np_error(ref, want)
    vk_ulp, budget, vk_np, ok, msg = 0, 0, 0.0, True, ""
    if device is not None:
        got = device.compile(program).run(ins, grid=grid)
        rep = compare(program, ref, got, entry.ulp)
        vk_ulp, budget, ok = rep.worst_ulps, rep.ulp, rep.ok
        msg = "; ".join(str(m) for m in rep.mismatches)
        vk_np = np_error(got, want)
    return Measured(op_id, elements, registered_elements(entry), vk_ulp, budget, ref_np, vk_np,
                    float(spec.ulp(spec.params)), ok, msg)


def main() -> None:
    from vyre_vk.runtime import Device

    dev = Device()
    print(f"{'op':58} {'elems':>6} {'reg':>4} {'ref~vk':>7} {'budget':>6} {'ref~np':>7} {'vk~np':>7} {'window':>6}")
    for e in ops.all_ops():
        m = measure(e.id, dev)
        print(f"{m.op:58} {m.elements:6} {m.registered_elements:4} {m.ref_vs_vk_ulp:7} {m.vk_budget:6} "
              f"{m.ref_vs_np:7.2f} {m.vk_vs_np:7.2f} {m.np_window:6.0f}")


if __name__ == "__main__":
    main()
