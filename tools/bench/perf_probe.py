"""GPU time (Kernel.profile timestamps) of the elementwise add and the seed op, passes on.

    PYTHONPATH=. python tools/bench/perf_probe.py [--n 22] [--seed 512x2048] [--repeats 5]

For A/B work on the optimiser and lowering (the full comparison is tools/bench/run.py).
Each result is checked bit-exact against the reference before it is timed.
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from vyre_vk import reference
from vyre_vk.ops import get
from vyre_vk.runtime import Device


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=22)
    ap.add_argument("--seed", default="512x2048")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--period-ns", type=float, default=1.0)
    ap.add_argument("--skip", default="")
    ap.add_argument("--device-class", default=None, help="optimise as for this class (nvidia, amd, ...)")
    args = ap.parse_args()
    import sys
    sys.path.insert(0, "tools/bench")
    from run import elementwise_program
    with Device() as dev:
        if "ew" not in args.skip:
            n = 1 << args.n
            p = elementwise_program(n)
            rng = np.random.default_rng(0)
            ins = {"a": rng.standard_normal(n, dtype=np.float32), "b": rng.standard_normal(n, dtype=np.float32)}
            for opt in (False, True):
                k = dev.compile(p, optimize=opt)
                got = k.run(ins)["out"]
                assert got.tobytes() == reference.run(p, ins)["out"].tobytes()
                gpu, _ = k.profile(ins, repeats=args.repeats, timestamp_period_ns=args.period_ns)
                t = statistics.median(gpu)
                print(f"elementwise 2^{args.n} optimize={opt}: {t * 1e3:8.3f} ms  {12 * n / t / 1e9:7.2f} GB/s")
        if "seed" not in args.skip:
            d, h = (int(v) for v in args.seed.split("x"))
            p = get("vyre-libs::nn::mlp_backward").build_with(model_dim=d, hidden_dim=h)
            rng = np.random.default_rng(1)
            ins = {"x": rng.standard_normal(d, dtype=np.float32),
                   "w1": rng.standard_normal(d * h, dtype=np.float32) / np.float32(np.sqrt(d)),
                   "b1": rng.standard_normal(h, dtype=np.float32),
                   "w2": rng.standard_normal(h * d, dtype=np.float32) / np.float32(np.sqrt(h)),
                   "grad_out": rng.standard_normal(d, dtype=np.float32)}
            want = reference.run(p, ins)["grad_x"]
            if args.device_class:
                from vyre_vk.compile import Options, compile_program
                from vyre_vk.runtime.kernel import Kernel
                k = Kernel(dev, compile_program(p, Options(device_class=args.device_class, limits=dev.limits)))
            else:
                k = dev.compile(p, optimize=True)
            got = k.run(ins)["grad_x"]
            assert got.tobytes() == want.tobytes(), "seed op not bit-exact"
            gpu, _ = k.profile(ins, repeats=args.repeats, timestamp_period_ns=args.period_ns)
            print(f"seed {d}x{h} optimize=True: {statistics.median(gpu) * 1e3:8.3f} ms GPU "
                  f"(stages: {[s.program.workgroup_size[0] for s in k.stages]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
