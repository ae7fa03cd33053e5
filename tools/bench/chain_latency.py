#!/usr/bin/env python3
"""Latency of one step of a dependent chain on the GPU: what bounds exact mode's serial folds.

Each variant runs one workgroup of 32 invocations, each doing ``--steps`` dependent steps, and
reports GPU nanoseconds per step (timestamp queries; the empty-loop variant's time subtracted
is not: compare variants with each other). Variants:

  fadd_plain      acc = acc + p (``precise``): the hardware floor
  fadd_branchless vyre_fadd as latency-bound stages spell it (vyre_vk.lower.helpers.BRANCHLESS)
  fadd_branchy    vyre_fadd as other stages spell it (GLSL_HELPERS)
  fadd_alt        a candidate spelling: magnitude compares, NaN select folded with the zero sum
  welford_exact   reduce_variance's step (n += 1; d = x - m1; m1 += d / n; m2 += d * (x - m1)) with the
                  exact helpers of a latency-bound stage (FUSED's division where the device's fma is fused)
  welford_plain   the same step in plain f32 (the fast precision's arithmetic)
  load_chase      idx = buf[idx] over a shuffled 64 MiB ring: one global load's latency

Every variant's result is checked against NumPy (float32 with the reference's canonicalisation)
before it is timed, so a spelling that differs in bits is reported, not timed.

    python3 tools/bench/chain_latency.py [--steps 65536] [--probe bundle/bin/vk_submit_probe]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (tools/bench/run.py: probe, medians)
from gpu_timing import dispatch_seconds  # noqa: E402

ALT = """float vyre_fadd(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    precise float r = a + b;
    uint br = floatBitsToUint(r), m = br & 0x7FFFFFFFu;
    bool special = vyre_fzsum(ua, ub) || m > 0x7F800000u;
    uint other = vyre_fzsum(ua, ub) ? (ua & ub & 0x80000000u) : 0x7FC00000u;
    uint flushed = m < 0x00800000u ? (br & 0x80000000u) : br;
    return uintBitsToFloat(special ? other : flushed);
}"""

KERNEL = """#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B {{ float buf[]; }};
layout(std430, binding = 1) buffer U {{ uint ring[]; }};
{helpers}
void main() {{
    uint l = gl_LocalInvocationID.x;
    float acc = buf[l], m2 = 0.0;
    uint n = 0u;
    float p0 = buf[32u + l], p1 = buf[64u + l], p2 = buf[96u + l], p3 = buf[128u + l];
    uint idx = l;
    for (uint k = 0u; k < {blocks}u; k++) {{
        {body}
    }}
    buf[160u + l] = acc;
    buf[192u + l] = m2;
    ring[{size}u + l] = idx;
}}
"""

STEP = {"fadd_plain": "{{ precise float t = acc + {p}; acc = t; }}",
        "fadd_branchless": "acc = vyre_fadd(acc, {p});", "fadd_branchy": "acc = vyre_fadd(acc, {p});",
        "fadd_alt": "acc = vyre_fadd(acc, {p});",
        "welford_exact": "{{ n++; float d = vyre_fsub({p}, acc); acc = vyre_fadd(acc, vyre_fdiv(d, float(n))); "
                         "m2 = vyre_fadd(m2, vyre_fmul(d, vyre_fsub({p}, acc))); }}",
        "welford_plain": "{{ n++; float d = {p} - acc; acc = acc + d / float(n); m2 = m2 + d * ({p} - acc); }}",
        "load_chase": "idx = ring[idx];"}


def helpers(variant: str, fused: bool) -> str:
    from vyre_vk.lower.base import helper_calls
    from vyre_vk.lower.helpers import BRANCHLESS, GLSL_HELPERS
    from vyre_vk.lower.ieee import FUSED

    if variant in ("fadd_plain", "welford_plain", "load_chase"):
        return ""
    if variant == "welford_exact":
        table = {**GLSL_HELPERS, **(FUSED if fused else {}), **BRANCHLESS}
        order: list = []

        def visit(h: str) -> None:  # each helper after what it calls
            if h not in order:
                for dep in helper_calls(table[h], table):
                    if dep != h:
                        visit(dep)
                order.append(h)
        for h in ("vyre_fsub", "vyre_fadd", "vyre_fmul", "vyre_fdiv"):
            visit(h)
        return "\n".join(table[h] for h in order)
    table = {**GLSL_HELPERS, **(BRANCHLESS if variant == "fadd_branchless" else {})}
    fadd = ALT if variant == "fadd_alt" else table["vyre_fadd"]
    return "\n".join([table["vyre_canon"], table["vyre_fzsum"], fadd])


def expected(variant: str, acc: np.ndarray, ps: list, steps: int) -> np.ndarray:
    from vyre_vk.ir.optable import canon

    acc = acc.copy()
    with np.errstate(all="ignore"):
        if variant.startswith("welford"):  # the exact one's meaning: float32 ops, each result canonical
            c = canon if variant == "welford_exact" else (lambda v: v)
            m2 = np.zeros_like(acc)
            for k in range(steps):
                p = ps[k % 4]
                d = c(p - acc)
                acc = c(acc + c(d / np.float32(k + 1)))
                m2 = c(m2 + c(d * c(p - acc)))
            return np.concatenate([acc, m2])
        for k in range(steps):
            acc = acc + ps[k % 4]
            if variant != "fadd_plain":
                acc = canon(acc)
    return acc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=65536, help="dependent steps per invocation (multiple of 4)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--probe", type=Path)
    ap.add_argument("--ring-log2", type=int, default=24, help="load_chase's ring: 2^N words (24: 64 MiB)")
    args = ap.parse_args(argv)
    from vyre_vk import spirv
    from vyre_vk.runtime import Device, kp_bridge

    steps = args.steps - args.steps % 4
    rng = np.random.default_rng(0)
    start = rng.standard_normal(32).astype(np.float32)
    # p values whose running sums reach subnormals, zeros and cancellations now and then
    ps = [rng.standard_normal(32).astype(np.float32) * np.float32(s) for s in (1.0, -1.0, 1e-38, -1e-38)]
    size = 1 << args.ring_log2
    ring = np.zeros(size + 32, np.uint32)
    ring[:size] = rng.permutation(size).astype(np.uint32)
    with Device() as dev:
        period = float(bench.run_probe(args.probe, dev.index).get("timestamp_period_ns") or 1.0)
        mgr = dev.manager
        bad = 0
        print(f"device {dev.name}; {steps} steps per invocation; timestampPeriod {period} ns")
        for variant, step in STEP.items():
            body = "\n        ".join(step.format(p=f"p{i}") for i in range(4))
            src = KERNEL.format(helpers=helpers(variant, dev.limits.fused_fma), blocks=steps // 4, body=body, size=size)
            data = np.zeros(224, np.float32)
            data[:32] = start
            for i in range(4):
                data[32 * (i + 1):32 * (i + 2)] = ps[i]
            tb, tr = kp_bridge.tensor(mgr, data), kp_bridge.tensor(mgr, ring)
            algo = kp_bridge.algorithm(mgr, [tb, tr], spirv.compile_glsl(src), (1, 1, 1))
            mgr.sequence().record(kp_bridge.sync_device([tb, tr])).record(kp_bridge.dispatch(algo)).record(
                kp_bridge.sync_local([tb])).eval()
            got = tb.data()[160:224 if variant.startswith("welford") else 192].copy()
            note = ""
            if variant != "load_chase":
                want = expected(variant, start, ps, steps)
                if got.view(np.uint32).tolist() != want.view(np.uint32).tolist():
                    note = "  (bits differ from NumPy: not this helper's meaning)"
                    bad += not variant.endswith("plain")  # plain f32 keeps subnormals, rounds as the driver does
            ns = float(np.median(dispatch_seconds(mgr, algo, args.reps, period))) * 1e9 / steps
            print(f"  {variant:16} {ns:7.2f} ns/step{note}")
            for o in (algo, tb, tr):
                o.destroy()
    return bad


if __name__ == "__main__":
    sys.exit(main())
