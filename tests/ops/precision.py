"""The fast precision's accuracy contract, measured per op against the float64 oracles.

For every registered op with an f32 result, each random input set (tests/ops/oracles) runs on
Vulkan in both precisions; errors are in ULPs of the oracle's per-element scale (measure.py):

- exact: the reference's bits, within the oracle's window ``W`` (what test_random.py checks);
- fast: within ``W + FAST_EXTRA_ULP`` (docs/PRECISION.md), and never more than FAST_EXTRA_ULP
  worse than exact on the same inputs; integer results equal the reference's.

``python -m tests.ops.precision [substring] [--seeds N]`` prints the table for every op whose id
contains the substring (10 seeds by default: the contract's random input sets).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from vyre_vk import ops
from vyre_vk.ir import DataType

from .measure import np_error
from .oracles import ORACLES

#: What the fast precision may add to an op's exact window, in ULPs of the oracle's scale: a builtin
#: exp within its 128-ULP window plus rounding-order changes (a contracted a*b+c skips one rounding,
#: about 1 ULP of the scale each), with room for two builtins in one result's chain.
FAST_EXTRA_ULP = 256


@dataclass
class FastError:
    op: str
    exact: float    # worst error of the exact results, ULPs of scale
    fast: float     # worst error of the fast results
    window: float   # the oracle's exact window W
    ints_equal: bool

    @property
    def ok(self) -> bool:
        return (self.ints_equal and self.fast <= self.window + FAST_EXTRA_ULP
                and self.fast <= self.exact + FAST_EXTRA_ULP)


def f32_ops() -> list[str]:
    """Registered ops with an oracle and at least one f32 result buffer."""
    return [e.id for e in ops.all_ops() if e.id in ORACLES
            and any(b.element is DataType.F32 and b.is_result for b in e.build().buffers)]


def fast_errors(op_id: str, device, seeds, params: dict = None) -> FastError:
    """Worst exact and fast errors of `op_id` over `seeds` (the oracle's params, or `params` over them)."""
    spec = ORACLES[op_id]
    params = {**spec.params, **(params or {})}
    program = ops.get(op_id).build_with(**params)
    exact_k, fast_k = device.compile(program), device.compile(program, precision="fast")
    worst_exact = worst_fast = 0.0
    ints_equal = True
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for _ in range(spec.repeats):
            ins = spec.inputs(rng, params)
            want = spec.numpy(ins, params)
            ex, fa = exact_k.run(ins, grid=spec.grid), fast_k.run(ins, grid=spec.grid)
            worst_exact, worst_fast = max(worst_exact, np_error(ex, want)), max(worst_fast, np_error(fa, want))
            for b in program.buffers:
                if b.is_result and b.element is not DataType.F32 and b.name in ex:
                    ints_equal = ints_equal and np.array_equal(ex[b.name], fa[b.name])
    return FastError(op_id, worst_exact, worst_fast, spec.ulp(params), ints_equal)


def main(argv: list[str]) -> int:
    from vyre_vk.runtime import Device

    seeds = range(int(argv[argv.index("--seeds") + 1]) if "--seeds" in argv else 10)
    pattern = next((a for a in argv if not a.startswith("--") and not a.isdigit()), "")
    bad = 0
    with Device() as dev:
        print(f"device: {dev.name}; {dev.native_math()}; fast window = W + {FAST_EXTRA_ULP} ULP of scale")
        print(f"{'op':58} {'W':>6} {'exact':>9} {'fast':>9}  ok")
        for op in f32_ops():
            if pattern in op:
                r = fast_errors(op, dev, seeds)
                bad += not r.ok
                print(f"{op:58} {r.window:6.0f} {r.exact:9.2f} {r.fast:9.2f}  {'ok' if r.ok else 'OVER'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
