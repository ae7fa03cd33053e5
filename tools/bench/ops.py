#!/usr/bin/env python3
"""Op-level benchmark: every registered op at its declared benchmark size, against PyTorch.

For each op (``register_op(..., bench=dict(...))``; the registered size where it declares none,
or with ``--smoke``), in one run:
  check   ours against the reference (vyre_vk.reference) at the registered size, and at the
          bench size where that is cheap; then PyTorch against ours (loose: reported, not fatal)
  ours    GPU time (Kernel.profile: timestamp queries, inputs resident) and end to end
          (kernel.run: NumPy in, NumPy out)
  torch   GPU time (CUDA events) and end to end (NumPy -> CUDA -> op -> NumPy), where the op has
          an equivalent (tools/bench/torch_equivalents.py) and torch sees a CUDA device
  bound   the critical path (vyre_vk.opt.critical_path: the longest dependent chain of the
          program as dispatched, times per-device latencies) and the memory bound (bytes over
          bandwidth); the larger is the bound, ours / bound the distance to it
Medians of --repeats runs after a warm-up. Writes ops.json and ops.png (with matplotlib) to --out
and prints a table and the geomean GPU-time ratio to PyTorch. Exit status 1 if a check fails.

    python tools/bench/ops.py [--smoke] [--only PATTERN ...] [--equivalents-only] [--repeats N] [--out DIR]
                              [--probe EXE]
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import math
import platform
import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op_inputs import make_inputs  # noqa: E402  (tools/bench/op_inputs.py)
from ops_report import plot, print_table, size_label  # noqa: E402
from run import med, run_probe, timed, torch_cuda, torch_time  # noqa: E402  (tools/bench/run.py)
from torch_equivalents import EQUIVALENTS, relative_error  # noqa: E402

#: Reference check at the bench size only below this many buffer elements (it interprets the IR).
REF_MAX_ELEMENTS = 1 << 16
#: PyTorch agrees when max |ours - torch| <= this times max |torch| (another order of rounding, TF32 convs).
TORCH_TOLERANCE = 2e-2


def log(msg: str) -> None:
    print(f"[ops] {msg}", file=sys.stderr, flush=True)


def select(entries: list, patterns: list[str]) -> list:
    """Entries whose id contains a pattern (or matches it as a glob: `*`, `?`, `[`)."""
    if not patterns:
        return entries
    def hit(op_id: str, pat: str) -> bool:
        return fnmatch.fnmatchcase(op_id, pat) if any(c in pat for c in "*?[") else pat in op_id
    return [e for e in entries if any(hit(e.id, p) for p in patterns)]


def reference_check(dev, entry, program, inputs, grid) -> dict:
    """Ours vs the reference: ok, the worst f32 distance in ULPs and the first mismatch."""
    from vyre_vk import reference
    from vyre_vk.testing.parity import compare

    want = reference.run(program, inputs, grid=grid)
    got = dev.compile(program).run(inputs, grid=grid)
    report = compare(program, want, got, entry.ulp)
    return {"ok": report.ok, "worst_ulps": report.worst_ulps,
            "mismatch": str(report.mismatches[0]) if report.mismatches else None}


def bench_torch(torch, entry, params: dict, inputs: dict, ours: dict, repeats: int) -> dict:
    fn = EQUIVALENTS[entry.id]

    def upload() -> dict:
        # u32 -> int64 on the host: torch indexes with int64 and lacks most uint32 kernels
        return {k: torch.from_numpy(v.astype(np.int64) if v.dtype == np.uint32 else v).cuda()
                for k, v in inputs.items()}

    tensors = upload()
    theirs = fn(torch, tensors, params)
    errors = {k: relative_error(torch, ours[k], v) for k, v in theirs.items()}
    worst = max(errors.values(), default=0.0)

    def e2e() -> list:
        return [v.cpu().numpy() for v in fn(torch, upload(), params).values()]

    e2e()
    torch.cuda.synchronize()
    gpu = torch_time(torch, lambda: fn(torch, tensors, params), repeats)
    host = timed(e2e, repeats)
    del tensors, theirs
    return {"torch_gpu_ms": med(gpu) * 1e3, "torch_e2e_ms": med(host) * 1e3, "torch_rel_err": worst,
            "torch_agrees": bool(worst <= TORCH_TOLERANCE)}


#: Seconds each op's own dispatches run untimed before its GPU time is taken. After the reference
#: checks, the compile and the host-bound end-to-end runs the GPU has idled; on the H200 the first
#: op of a process then read 2-5x slow even after the 20 s warm-up (docs/bench, 2026-12-04).
OP_WARM_UP_S = 0.3


def normwise_ulps(exact: dict, got: dict) -> float:
    """Largest |fast - exact| of an f32 result in ULPs of its buffer's largest finite |exact| (NaNs
    must match); other results must be equal (inf where they are not). A per-element ULP of a value
    that cancels (a GEMV output near 0, gelu of a large negative x) says nothing about a regrouped
    sum's error; the float64 contract of tests/ops/precision.py measures per element in ULPs of each
    output's scale, and this is the benchmark's quick stand-in for it.

    >>> normwise_ulps({"o": np.float32([1.0, 1e-6])}, {"o": np.float32([1.0, 1e-6 + 2 ** -23])})
    1.0
    """
    worst = 0.0
    for name, e in exact.items():
        e, g = np.asarray(e), np.asarray(got[name])
        if e.dtype != np.float32:
            if not np.array_equal(e, g):
                return math.inf
            continue
        nan = np.isnan(e)
        if not np.array_equal(nan, np.isnan(g)):
            return math.inf
        fin = e[~nan & np.isfinite(e)]
        scale = float(np.spacing(np.float32(np.abs(fin).max()))) if fin.size else 1.0
        d = np.abs(g[~nan].astype(np.float64) - e[~nan].astype(np.float64))
        d = d[np.isfinite(d)]
        worst = max(worst, float(d.max()) / max(scale, 1e-45) if d.size else 0.0)
    return worst


def bench_fast(dev, program, inputs, grid, ours: dict, repeats: int, period_ns: float, smoke: bool) -> dict:
    """The fast precision's GPU time, its results checked against the exact ones normwise by its
    window (:func:`normwise_ulps`; the per-element distance is reported beside it)."""
    from vyre_vk.testing.parity import compare

    kernel = dev.compile(program, precision="fast")
    got = kernel.run(inputs, grid=grid)
    report = compare(program, ours, got, precision="fast")
    normwise = normwise_ulps(ours, got)
    if not smoke:
        end = time.perf_counter() + OP_WARM_UP_S
        while time.perf_counter() < end:
            kernel.profile(inputs, repeats=5, grid=grid)
    gpu, _ = kernel.profile(inputs, repeats=repeats, timestamp_period_ns=period_ns, grid=grid)
    kernel.release()
    dev.forget(kernel)
    return {"fast_gpu_ms": med(gpu) * 1e3, "fast_check": {"ok": normwise <= report.ulp, "normwise_ulps": normwise,
                                                          "worst_ulps": report.worst_ulps, "window": report.ulp}}


def bench_op(dev, entry, smoke: bool, repeats: int, period_ns: float, torch, fast: bool = False) -> dict:
    from vyre_vk.opt.critical_path import program_bound

    params = dict(entry.params) if smoke else {**entry.params, **(entry.bench or {})}
    row: dict[str, Any] = {"op": entry.id, "size": size_label(entry, params), "params": params,
                           "bench_declared": entry.bench is not None}
    # results checked before anything is timed: always at the registered size
    p0 = entry.build()
    ins0, grid0 = make_inputs(entry, entry.params, p0, seed=1)
    row["check_registered"] = reference_check(dev, entry, p0, ins0, grid0)
    program = entry.build_with(**params) if params != dict(entry.params) else p0
    inputs, grid = make_inputs(entry, params, program, seed=0)
    elements = sum(a.size for a in inputs.values()) + sum(b.count for b in program.buffers if b.is_result)
    row["check_bench"] = (reference_check(dev, entry, program, inputs, grid)
                          if program is not p0 and elements <= REF_MAX_ELEMENTS else None)
    kernel = dev.compile(program)
    ours = kernel.run(inputs, grid=grid)
    timed(lambda: kernel.run(inputs, grid=grid), 2)  # warm-up
    row["ours_e2e_ms"] = med(timed(lambda: kernel.run(inputs, grid=grid), repeats)) * 1e3
    if not smoke:  # the host-bound runs above let the GPU idle down: bring its clocks back with this op
        end = time.perf_counter() + OP_WARM_UP_S
        while time.perf_counter() < end:
            kernel.profile(inputs, repeats=5, grid=grid)
    gpu, _ = kernel.profile(inputs, repeats=repeats, timestamp_period_ns=period_ns, grid=grid)
    row["ours_gpu_ms"] = med(gpu) * 1e3
    bound = program_bound(program, dev.device_class, {k: v.size for k, v in inputs.items()}, limits=dev.limits)
    row.update(critical_path_ms=bound.critical_path_s * 1e3, memory_bound_ms=bound.memory_s * 1e3,
               bound_ms=bound.bound_s * 1e3, stages=len(bound.stage_cycles), stage_cycles=list(bound.stage_cycles),
               bytes_moved=bound.bytes_moved, bound_notes=list(bound.notes))
    row["distance_to_bound"] = row["ours_gpu_ms"] / row["bound_ms"] if row["bound_ms"] > 0 else None
    if fast:
        row.update(bench_fast(dev, program, inputs, grid, ours, repeats, period_ns, smoke))
    if torch is not None and entry.id in EQUIVALENTS:
        try:
            row.update(bench_torch(torch, entry, params, inputs, ours, repeats))
            row["ratio_gpu"] = row["ours_gpu_ms"] / row["torch_gpu_ms"] if row["torch_gpu_ms"] > 0 else None
            if fast and row["torch_gpu_ms"] > 0:
                row["ratio_fast"] = row["fast_gpu_ms"] / row["torch_gpu_ms"]
        except Exception as e:  # the equivalent's bug, not the op's: reported, not a failed check
            row.update(torch_error=f"{type(e).__name__}: {e}"[:300], torch_agrees=False, torch_rel_err=float("nan"))
    kernel.release()
    dev.forget(kernel)
    return row


def warm_up(dev, seconds: float) -> None:
    """Keep the GPU busy for `seconds` before anything is timed: a machine just started runs its
    first kernels at idle clocks (the first op measured on a fresh H200 read 4-6x slow)."""
    from vyre_vk.ops import get

    entry = get("vyre-libs::math::square")
    program = entry.build_with(n=1 << 24)
    inputs, _ = make_inputs(entry, {**entry.params, "n": 1 << 24}, program)
    kernel = dev.compile(program)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        kernel.profile(inputs, repeats=10)
    kernel.release()
    dev.forget(kernel)


def checks_ok(row: dict) -> bool:
    return ("error" not in row and row["check_registered"]["ok"] and (row["check_bench"] or {"ok": True})["ok"]
            and row.get("fast_check", {"ok": True})["ok"])


def geomean(values: list[float]) -> Optional[float]:
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summary(meta: dict, rows: list[dict]) -> dict:
    ratios = [r["ratio_gpu"] for r in rows if r.get("ratio_gpu")]
    fast = [r["ratio_fast"] for r in rows if r.get("ratio_fast")]
    return {**meta, "ops": rows, "geomean_gpu_ratio_vs_torch": geomean(ratios), "ops_with_torch": len(ratios),
            "geomean_fast_ratio_vs_torch": geomean(fast),
            "failures": [r["op"] for r in rows if not checks_ok(r)],
            "torch_disagrees": [r["op"] for r in rows if r.get("torch_agrees") is False]}


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    ap.add_argument("--only", action="append", default=[], metavar="PATTERN",
                    help="op ids containing PATTERN (or matching it as a glob); repeatable")
    ap.add_argument("--equivalents-only", action="store_true",
                    help="only ops with a PyTorch equivalent (the geomean's ops)")
    ap.add_argument("--smoke", action="store_true", help="registered sizes, 3 repeats: seconds on lavapipe")
    ap.add_argument("--repeats", type=int, default=None, help="timed runs per measurement (default 20; smoke 3)")
    ap.add_argument("--probe", type=Path, help="prebuilt tools/bench/vk_submit_probe (timestampPeriod; else gcc)")
    ap.add_argument("--warm-up", type=float, default=2.0, metavar="SECONDS",
                    help="busy the GPU this long first (an H200 reads 2-5x slow for ~20 s after idling)")
    ap.add_argument("--fast", action="store_true",
                    help="also time the fast precision (results checked by its bound, docs/PRECISION.md)")
    args = ap.parse_args(argv)
    from vyre_vk.ops import all_ops
    from vyre_vk.opt.critical_path import model_for
    from vyre_vk.runtime import Device

    repeats = args.repeats or (3 if args.smoke else 20)
    entries = [e for e in select(all_ops(), args.only) if not args.equivalents_only or e.id in EQUIVALENTS]
    if not entries:
        ap.error(f"no registered op matches {args.only}")
    args.out.mkdir(parents=True, exist_ok=True)
    torch = torch_cuda()
    rows = []
    with Device() as dev:
        probe = run_probe(args.probe, dev.index)
        period = float(probe.get("timestamp_period_ns") or 1.0)
        if not probe:
            log("no raw Vulkan probe (gcc?): timestampPeriod taken as 1 ns")
        model = model_for(dev.device_class)
        log(f"device {dev.name} ({dev.device_class}); timestampPeriod {period} ns; bound model {model.name}; "
            f"torch {'CUDA' if torch else 'not available'}; {len(entries)} op(s), {repeats} repeats")
        meta = {"device": {"name": dev.name, "class": dev.device_class}, "timestamp_period_ns": period,
                "python": platform.python_version(), "numpy": np.__version__,
                "torch": getattr(torch, "__version__", None), "smoke": args.smoke, "repeats": repeats,
                "model": {"name": model.name, "clock_ghz": model.clock_ghz, "bandwidth_gbps": model.bandwidth_gbps}}
        if not args.smoke:
            warm_up(dev, args.warm_up)
        for k, entry in enumerate(entries, 1):
            t0 = time.perf_counter()
            try:
                row = bench_op(dev, entry, args.smoke, repeats, period, torch, args.fast)
            except Exception as e:  # one broken op must not hide the others' numbers
                row = {"op": entry.id, "size": "?", "error": f"{type(e).__name__}: {e}"[:500],
                       "check_registered": {"ok": False}, "check_bench": None}
            rows.append(row)
            status = "ok" if checks_ok(row) else f"FAILED {row.get('error') or row['check_registered']}"
            log(f"[{k}/{len(entries)}] {entry.id} {row['size']}: {status} ({time.perf_counter() - t0:.1f} s)")
            result = summary(meta, rows)
            # after every op, so a run cut short (a time limit) still leaves its numbers
            (args.out / "ops.json").write_text(json.dumps(_jsonable(result), indent=2))
    plotted = plot(result, args.out / "ops.png")
    print_table(result)
    print(f"wrote {args.out / 'ops.json'}" + (f" and {args.out / 'ops.png'}" if plotted
                                              else " (no matplotlib: no plot)"))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
