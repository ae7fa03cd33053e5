"""What a cached ``vyre_vk.run(program, inputs)`` costs over ``Kernel.run`` on the same program.

    PYTHONPATH=. python tools/bench/run_overhead.py [--op vyre-libs::nn::mlp_backward] [--calls 200]

Both paths are timed call by call, alternating (so a busy machine hurts both alike); prints
the median microseconds per call and the ratio (issue 14's bound: <= 1.2x), and the Python
cost of the lookup alone.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import vyre_vk
import vyre_vk.runtime
from vyre_vk.ops import get


def per_call_us(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def once_us(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e6


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", default="vyre-libs::nn::mlp_backward")
    ap.add_argument("--calls", type=int, default=3000)
    args = ap.parse_args(argv)
    program = get(args.op).build()
    rng = np.random.default_rng(0)
    inputs = {b.name: rng.standard_normal(max(b.count, 1)).astype(b.element.numpy)
              for b in program.buffers if b.is_input and not b.is_workgroup}
    kernel = vyre_vk.runtime.default_device().compile(program)
    paths = {"Kernel.run": lambda: kernel.run(inputs), "vyre_vk.run": lambda: vyre_vk.run(program, inputs)}
    times: dict[str, list] = {name: [] for name in paths}
    for k in range(args.calls):
        for name in (list(paths) if k % 2 else list(paths)[::-1]):
            times[name].append(once_us(paths[name]))
    best = {name: float(np.median(v)) for name, v in times.items()}
    ratio = best["vyre_vk.run"] / best["Kernel.run"]
    lookup = per_call_us(lambda: vyre_vk.runtime.default_device().compile(program), 10 * args.calls)
    print(f"{args.op} on {vyre_vk.runtime.default_device().name}: Kernel.run {best['Kernel.run']:.1f} us, "
          f"vyre_vk.run {best['vyre_vk.run']:.1f} us per call (median of {args.calls}), ratio {ratio:.3f}; "
          f"the cached compile lookup alone {lookup:.2f} us")
    return {**best, "ratio": ratio, "lookup_us": lookup}


if __name__ == "__main__":
    main()
