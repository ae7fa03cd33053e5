#!/usr/bin/env python3
"""Where the optimised seed op's time goes: GPU time per recorded op (timestamps) and end to end.

    python tools/bench/seed_stages.py [--size 2048x8192] [--period-ns 1.0] [--repeats 10]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from vyre_vk.ops import get
from vyre_vk.runtime import Device


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="512x2048")
    ap.add_argument("--period-ns", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    d, h = (int(v) for v in args.size.split("x"))
    rng = np.random.default_rng(0)
    ins = {"x": rng.standard_normal(d, dtype=np.float32), "b1": rng.standard_normal(h, dtype=np.float32),
           "grad_out": rng.standard_normal(d, dtype=np.float32)}
    w1 = rng.standard_normal(d * h, dtype=np.float32) / np.float32(np.sqrt(d))
    w2 = rng.standard_normal(h * d, dtype=np.float32) / np.float32(np.sqrt(h))
    with Device() as dev:
        k = dev.compile(get("vyre-libs::nn::mlp_backward").build_with(model_dim=d, hidden_dim=h))
        ins.update(w1=dev.array(w1), w2=dev.array(w2))
        for st in k.stages:
            print(f"stage workgroup {st.program.workgroup_size}, factor {st.factor}")
        per_op: list = []
        gpu, host = k.profile(ins, repeats=args.repeats, timestamp_period_ns=args.period_ns, per_op=per_op)
        e2e = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            k.run(ins)
            e2e.append(time.perf_counter() - t)
        print(f"{dev.name}, seed op {d}x{h}")
        for j, (op, arg) in enumerate(k.ops):
            print(f"  {op:8} {str(arg):30} {statistics.median(r[j] for r in per_op) * 1e3:8.3f} ms GPU")
        print(f"  all dispatches {statistics.median(gpu) * 1e3:.3f} ms GPU, {statistics.median(host) * 1e3:.3f} ms host")
        print(f"  end to end (Kernel.run, weights resident) {statistics.median(e2e) * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
