#!/usr/bin/env python3
"""The Python a tiny Kernel.run costs on the repeat path (a probe, not a benchmark of record): run.py's
tiny kernel (64 u32, out = a + 1) through ``Kernel.run`` and raw kp's host-tensor loop (write the
input view, eval, copy the output), each timed with the real ``eval`` and with the recorded
sequence's ``eval`` replaced by a no-op, so the second pair is the host work around the submission.
Best of --rounds rounds of --calls calls each, in microseconds per call.

    PYTHONPATH=. .venv/bin/python tools/bench/rerun_python.py [--calls 20000]

For an A/B of two trees, run it once with each on PYTHONPATH (``git archive REV vyre_vk | tar -x -C
/tmp/base``), on the same machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (tools/bench/run.py: the tiny program and its GLSL)


class _NoEval:
    def eval(self) -> None:
        return None


def best_us(fn, calls: int, rounds: int) -> float:
    for _ in range(min(calls, 200)):
        fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return min(out)


def main(argv=None) -> int:
    from vyre_vk import spirv
    from vyre_vk.runtime import Device, kp_bridge

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    n = 64
    a = np.arange(n, dtype=np.uint32)
    with Device() as dev:
        kernel = dev.compile(bench.tiny_program(n))
        assert np.array_equal(kernel.run({"a": a})["out"], a + 1)
        mgr = dev.manager
        ha, ho = kp_bridge.tensor(mgr, a, host=True), kp_bridge.tensor(mgr, np.zeros(n, np.uint32), host=True)
        algo = kp_bridge.algorithm(mgr, [ha, ho], spirv.compile_glsl(bench.TINY_GLSL), (1, 1, 1))
        seq = mgr.sequence().record(kp_bridge.dispatch(algo)).record(kp_bridge.host_read_barrier([ho]))
        views = {"a": ha.data(), "o": ho.data(), "seq": seq}
        inputs = {"a": a}

        def raw() -> np.ndarray:
            views["a"][:] = a
            views["seq"].eval()
            return views["o"].copy()

        assert np.array_equal(raw(), a + 1)
        rows = {"Kernel.run": best_us(lambda: kernel.run(inputs), args.calls // 10, args.rounds),
                "raw kp host tensors": best_us(raw, args.calls // 10, args.rounds)}
        plans = list(kernel._plans.values())
        assert len(plans) == 1 and kernel._repeat is not None, "the tiny kernel should replay one plan"
        real, plans[0].sequence = plans[0].sequence, _NoEval()
        views["seq"] = _NoEval()
        try:
            rows["Kernel.run, eval a no-op"] = best_us(lambda: kernel.run(inputs), args.calls, args.rounds)
            rows["raw kp host tensors, eval a no-op"] = best_us(raw, args.calls, args.rounds)
        finally:
            plans[0].sequence = real
        print(f"device: {dev.name}; best of {args.rounds} rounds, us per call")
        for k, us in rows.items():
            print(f"  {k:36} {us:8.2f}")
        for o in (seq, algo, ha, ho):
            o.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
