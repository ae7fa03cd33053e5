#!/usr/bin/env python3
"""exp and tanh: vyre-vk's float-float lowering against the driver's builtins and PyTorch.

For out[i] = f(a[i]) at each size, in one run on one device:
  accuracy  bit-ULP distance to the reference (float64 libm rounded once), worst and the share
            of elements that differ: ours (vyre_vk/lower/ffmath64.py where the device has
            shaderFloat64, and ffmath.py's float-float as ours_ff), the driver's GLSL builtin
            (hand-written shader through raw kp), PyTorch where CUDA is there
  speed     GPU time from timestamp queries (ours, builtin) and CUDA events (PyTorch);
            12 B/element would be the add kernel's traffic, this one moves 8
Inputs cover the range where each function is not saturated: exp on [-87, 88], tanh on [-10, 10].

    python tools/bench/transcendental.py [--smoke] [--sizes 20,26] [--reps 20] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (tools/bench/run.py: timing helpers, probe, torch)
from gpu_timing import dispatch_seconds  # noqa: E402

RANGES = {"exp": (-87.0, 88.0), "tanh": (-10.0, 10.0)}

BUILTIN_GLSL = """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A {{ float a[]; }};
layout(std430, binding = 1) buffer O {{ float o[]; }};
void main() {{ uint i = gl_GlobalInvocationID.x; if (i < uint(o.length())) {{ o[i] = {fn}(a[i]); }} }}
"""


def program(fn: str, n: int):
    from vyre_vk.ir import DataType, Expr, UnOp

    return bench.map_program(DataType.F32, n, lambda a: Expr.unop(getattr(UnOp, fn.capitalize()), a))


def accuracy(ref: np.ndarray, got: np.ndarray) -> dict:
    from vyre_vk.testing.parity import ulp_distance

    d = ulp_distance(ref, got)
    return {"max_ulp": int(d.max()), "differ_share": float((d != 0).mean())}


def builtin(dev, fn: str, a: np.ndarray, reps: int, period_ns: float) -> tuple[np.ndarray, list[float]]:
    """The driver's builtin through raw kp: result and GPU seconds per dispatch."""
    from vyre_vk import spirv
    from vyre_vk.runtime import kp_bridge

    mgr = dev.manager
    ta, to = kp_bridge.tensor(mgr, a), kp_bridge.tensor(mgr, np.zeros_like(a))
    groups = (-(-a.size // 256), 1, 1)
    algo = kp_bridge.algorithm(mgr, [ta, to], spirv.compile_glsl(BUILTIN_GLSL.format(fn=fn)), groups)
    mgr.sequence().record(kp_bridge.sync_device([ta, to])).record(kp_bridge.dispatch(algo)).record(
        kp_bridge.sync_local([to])).eval()
    out = to.data().copy()
    gpu = dispatch_seconds(mgr, algo, reps, period_ns)
    for o in (algo, ta, to):
        o.destroy()
    return out, gpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one small size, seconds on lavapipe (used by a test)")
    ap.add_argument("--sizes", default=None, help="powers of two, e.g. 20,26")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--probe", type=Path, help="prebuilt tools/bench/vk_submit_probe (for timestampPeriod)")
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    args = ap.parse_args(argv)
    from vyre_vk import reference
    from vyre_vk.runtime import Device

    sizes = [1 << int(p) for p in (args.sizes or ("12" if args.smoke else "20,26")).split(",")]
    reps = args.reps or (3 if args.smoke else 20)
    torch = bench.torch_cuda()
    rows = []
    with Device() as dev:
        probe = bench.run_probe(args.probe, dev.index)
        period = float(probe.get("timestamp_period_ns") or 1.0)
        for fn, (lo, hi) in RANGES.items():
            for n in sizes:
                a = np.random.default_rng(n).uniform(lo, hi, n).astype(np.float32)
                p = program(fn, n)
                ref = reference.run(p, {"a": a})["out"]
                row = {"fn": fn, "n": n}
                limits = dev.limits
                # ffmath64 where the device has it, then ffmath's float-float beside it
                for key, f64 in [("ours", limits.float64)] + ([("ours_ff", False)] if limits.float64 else []):
                    dev.limits = replace(limits, float64=f64)
                    kernel = dev.compile(p)
                    ours = kernel.run({"a": a})["out"]
                    gpu, _ = kernel.profile({"a": a}, repeats=reps, timestamp_period_ns=period)
                    kernel.release()
                    row.update({key: accuracy(ref, ours), f"{key}_gpu_ms": bench.med(gpu) * 1e3})
                dev.limits = limits
                got, bgpu = builtin(dev, fn, a, reps, period)
                row.update(builtin=accuracy(ref, got), builtin_gpu_ms=bench.med(bgpu) * 1e3)
                if torch is not None:
                    ta = torch.from_numpy(a).cuda()
                    tf = getattr(torch, fn)
                    tout = torch.empty_like(ta)
                    tf(ta, out=tout)
                    row.update(torch=accuracy(ref, tout.cpu().numpy()),
                               torch_gpu_ms=bench.med(bench.torch_time(torch, lambda: tf(ta, out=tout), reps)) * 1e3)
                    del ta, tout
                rows.append(row)
                bench.log(f"{fn} n={n}: {row}")
        result = {"device": dev.name, "timestamp_period_ns": period, "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "transcendental.json").write_text(json.dumps(result, indent=2))
    print(f"device: {result['device']}")
    for r in rows:
        cells = "  ".join(f"{k} {r[k]['max_ulp']:>9} ULP max, {100 * r[k]['differ_share']:6.3f}% differ, "
                          f"{r[k + '_gpu_ms']:8.3f} ms" for k in ("ours", "ours_ff", "builtin", "torch") if k in r)
        print(f"  {r['fn']:4} 2^{int(np.log2(r['n']))}: {cells}")
    print(f"wrote {args.out / 'transcendental.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
