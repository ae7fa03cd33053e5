"""Run ops on random inputs through the reference, Vulkan and their NumPy oracles, and report the
largest errors: ``python -m tests.ops.measure [substring]`` prints, for every registered op whose
id contains the substring, the worst errors over seeds 0 and 1 (all of an oracle's ``repeats``).

Errors vs NumPy are in ULPs of the oracle's per-element scale; reference vs Vulkan uses vyre's
metric (sign-ordered ULP distance of the f32 bit patterns).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from .oracles import ORACLES

FLT_MIN = float(np.finfo(np.float32).tiny)


@dataclass
class Measured:
    op: str
    elements: int               # input + output elements of one random case
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


def measure(op_id: str, device=None, seeds=(0,)) -> Measured:
    """The worst errors of `op_id`'s random run over `seeds` (each running all the oracle's repeats);
    reference vs NumPy only when `device` is None."""
    entry, spec = ops.get(op_id), ORACLES[op_id]
    program = entry.build_with(**spec.params)
    kernel = device.compile(program) if device is not None else None
    elements, ref_np, vk_ulp, budget, vk_np, ok, msgs = 0, 0.0, 0, 0, 0.0, True, []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for _ in range(spec.repeats):
            ins = spec.inputs(rng, spec.params)
            ref = reference.run(program, ins, grid=spec.grid)   # grid: where vyre's inferred one races
            want = spec.numpy(ins, spec.params)
            elements = sum(np.asarray(v).size for v in ins.values()) + sum(v.size for v in ref.values())
            ref_np = max(ref_np, np_error(ref, want))
            if kernel is not None:
                got = kernel.run(ins, grid=spec.grid)
                rep = compare(program, ref, got, entry.ulp)
                vk_ulp, budget, ok = max(vk_ulp, rep.worst_ulps), rep.ulp, ok and rep.ok
                msgs += [str(m) for m in rep.mismatches]
                vk_np = max(vk_np, np_error(got, want))
    return Measured(op_id, elements, registered_elements(entry), vk_ulp, budget, ref_np, vk_np,
                    float(spec.ulp(spec.params)), ok, "; ".join(msgs))


def main() -> None:
    from vyre_vk.runtime import Device

    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    dev = Device()
    print(f"{'op':58} {'elems':>6} {'reg':>4} {'ulp':>4} {'ref~vk':>7} {'budget':>6} {'ref~np':>7} {'vk~np':>7} "
          f"{'window':>6}")
    for e in ops.all_ops():
        if pattern in e.id:
            m = measure(e.id, dev, seeds=(0, 1))
            print(f"{m.op:58} {m.elements:6} {m.registered_elements:4} {str(e.ulp):>4} {m.ref_vs_vk_ulp:7} "
                  f"{m.vk_budget:6} {m.ref_vs_np:7.2f} {m.vk_vs_np:7.2f} {m.np_window:6.0f}")


if __name__ == "__main__":
    main()
