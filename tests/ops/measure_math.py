"""Largest errors of the ops3 ports on their random runs (all ``repeats`` cases, seeds 0 and 1):
``python -m tests.ops.measure_math [substring]`` prints op, ref~vk (vyre bit-ULP metric),
ref~np and vk~np (ULPs of the oracle scale) and the oracle window."""
from __future__ import annotations

import sys

import numpy as np

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from .measure import np_error
from .oracles import ORACLES
from .oracles_math import RepeatedOracle


def measure_all(device, pattern: str = ""):
    for op_id, spec in sorted(ORACLES.items()):
        if not isinstance(spec, RepeatedOracle) or pattern not in op_id:
            continue
        entry = ops.get(op_id)
        program = entry.build_with(**spec.params)
        kernel = device.compile(program)
        worst = [0, 0.0, 0.0]
        for seed in (0, 1):
            rng = np.random.default_rng(seed)
            for _ in range(spec.repeats):
                ins = spec.inputs(rng, spec.params)
                ref, got, want = reference.run(program, ins), kernel.run(ins), spec.numpy(ins, spec.params)
                rep = compare(program, ref, got, entry.ulp)
                worst = [max(worst[0], rep.worst_ulps), max(worst[1], np_error(ref, want)),
                         max(worst[2], np_error(got, want))]
        yield op_id, entry.ulp, worst, spec.ulp(spec.params)


def main() -> None:
    from vyre_vk.runtime import Device
    print(f"{'op':58} {'ulp':>4} {'ref~vk':>7} {'ref~np':>7} {'vk~np':>7} {'window':>6}")
    for op_id, ulp, (a, b, c), win in measure_all(Device(), sys.argv[1] if len(sys.argv) > 1 else ""):
        print(f"{op_id:58} {str(ulp):>4} {a:7} {b:7.2f} {c:7.2f} {win:6.0f}")


if __name__ == "__main__":
    main()
