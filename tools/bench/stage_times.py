"""Per-dispatch GPU time of each op's optimised schedule, to find the slow stage (a probe, not a
benchmark of record: tools/bench/ops.py is that).

    python3 tools/bench/stage_times.py "nn::attention@seq_len=1024,head_dim=64" "nn::softmax@n=1048576"
    python3 tools/bench/stage_times.py --precision fast "nn::softmax@n=1048576"
    python3 tools/bench/stage_times.py --warm-s 2 "nn::softmax@n=1048576"

`--warm-s S` (default 1) profiles each op for S seconds before measuring it: a fresh process
starts at idle clocks (345 MHz on an H200), which made the first op's stages look slow.

Each argument is an op id after ``vyre-libs::``, then ``@`` and integer builder overrides. Inputs
are standard-normal f32 and small u32; times are medians of 5 profiles (timestamp queries around
every dispatch and barrier, ``Kernel.profile(per_op=...)``).
"""
from __future__ import annotations

import sys
import time
from typing import Optional

import numpy as np


def parse(arg: str) -> tuple[str, dict]:
    """``"nn::softmax@n=1024"`` -> ``("vyre-libs::nn::softmax", {"n": 1024})``."""
    op, _, rest = arg.partition("@")
    kw = {k.strip(): int(v) for k, v in (p.split("=", 1) for p in rest.split(",") if p.strip())}
    return "vyre-libs::" + op, kw


def main(argv: Optional[list[str]] = None, repeats: int = 5) -> list[dict]:
    from vyre_vk.ops import get
    from vyre_vk.runtime import Device

    args = list(sys.argv[1:] if argv is None else argv)
    precision = "exact"
    warm_s = 1.0
    while args[:1] in (["--precision"], ["--warm-s"]):
        if args[0] == "--precision":
            precision = args[1]
        else:
            warm_s = float(args[1])
        args = args[2:]
    rows = []
    rng = np.random.default_rng(0)
    with Device() as dev:
        for arg in args:
            op, kw = parse(arg)
            p = get(op).build_with(**kw)
            ins = {b.name: (rng.standard_normal(b.count).astype(np.float32) if b.element.numpy == np.float32
                            else rng.integers(0, 1000, b.count).astype(b.element.numpy))
                   for b in p.buffers if b.is_input}
            k = dev.compile(p, precision=precision)
            k.profile(ins, repeats=2)  # first runs: pipeline creation
            start = time.perf_counter()
            while time.perf_counter() - start < warm_s:  # clocks up before the timed profiles
                k.profile(ins, repeats=5)
            per: list = []
            gpu, _ = k.profile(ins, repeats=repeats, per_op=per)
            med = np.median(np.array(per), axis=0)
            print(f"== {op} {kw} {precision}: total {np.median(gpu) * 1e3:.3f} ms", flush=True)
            for i, t in enumerate(med):
                print(f"   op {i:2d} {k.ops[i]}: {t * 1e3:.4f} ms")
            for st in k.compiled.stages:
                print("   stage", st.local_size, [b.name for b in st.program.buffers if not b.is_workgroup])
            rows.append({"op": op, "params": kw, "total_s": float(np.median(gpu)), "per_op_s": [float(t) for t in med]})
            dev.forget(k)
    return rows


if __name__ == "__main__":
    main()
