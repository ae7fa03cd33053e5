#!/usr/bin/env python3
"""Where reduce_variance's time goes (a probe, not a benchmark of record): its exact schedule runs
256 serial Welford chains (``n += 1; d = x - m1; m1 += d / n; m2 += d * (x - m1)``) of n / 256
steps each, with the division correctly rounded (Markstein's correction from RN(1/n)) and every
result's exponent checked (the speculation's state). This times hand-written variants of that
chain on raw kp with GPU timestamps, each checked against NumPy's f32 chains bit for bit (where
the device's fma is fused, as Markstein's step needs: not on lavapipe):

- ``track``: the speculation state (exponent-field minimum, division window) on or off;
- ``table``: RN(1/n) read from a table instead of computed in the chain;
- ``depth``: loads issued ahead per block of steps; ``local``: lanes per workgroup; ``scalars``: the
  block written out as scalars (as unroll emits) instead of an array and two loops;
- ``canon loads``: every load canonicalised as the generated chain does (its cost); ``narrow window``:
  the division's window check for a divisor known to be float(n), n in [1, 2^24] (fewer instructions);
- ``ymode``: RN(1/n) loaded from the table with the block's inputs (2), or computed by the workgroup's
  lanes for the block, one share each, through workgroup memory (3: n is the same in every lane);
- ``fmin``: the state as a float minimum of |result| (one FMNMX with an abs operand on NVIDIA);
- ``plain a/b``: the device's own division (correctly rounded on lavapipe, so there it checks the
  chain's logic; not on NVIDIA).

    python3 tools/bench/welford_chain.py [--steps 65536] [--reps 10]
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from gpu_timing import dispatch_seconds

CHAINS = 256
SHADER = """#version 450
layout(local_size_x = {local}) in;
layout(std430, binding = 0) readonly buffer I {{ float inp[]; }};
layout(std430, binding = 1) readonly buffer Y {{ float ytab[]; }};
layout(std430, binding = 2) buffer O {{ float o[]; }};
layout(std430, binding = 3) buffer R {{ float trail[]; }};
uint state;
float rcp_rn(float d) {{
    precise float y0 = 1.0 / d;
    precise float y1 = fma(fma(-d, y0, 1.0), y0, y0);
    precise float e1 = fma(-d, y1, 1.0);
    uint uy = floatBitsToUint(y1);
    uint un = e1 > 0.0 ? uy + 1u : uy - 1u;
    precise float e2 = fma(-uintBitsToFloat(un), d, 1.0);
    return uintBitsToFloat((e1 != 0.0 && abs(e2) < abs(e1)) ? un : uy);
}}
bool window(uint ua, uint ub) {{
    // narrow: b = float(n), n in [1, 2^24], so eb in [127, 151] and 50 <= ea <= 252 implies the rest
    if ({narrow}) return ((ua >> 23) & 0xFFu) - 50u <= 202u;
    uint ea = (ua >> 23) & 0xFFu, eb = (ub >> 23) & 0xFFu;
    int de = int(ea) - int(eb);
    return ea >= 50u && ea <= 254u && eb >= 2u && eb <= 252u && de >= -124 && de <= 125;
}}
float canon(float x) {{  // what the generated chain does to every load (subnormals to zero, one NaN)
    if (!{canon}) return x;
    uint b = floatBitsToUint(x);
    uint e = b & 0x7F800000u;
    uint nan = (e == 0x7F800000u && (b & 0x007FFFFFu) != 0u) ? 0x7FC00000u : b;
    return uintBitsToFloat(e == 0u ? (b & 0x80000000u) : nan);
}}
uint st0 = 0x7F800000u, st1 = 0x7F800000u, st2 = 0x7F800000u, st3 = 0x7F800000u, st4 = 0x7F800000u;
float fstate = 3.0e38;  // fmin: the smallest |result| (NVIDIA's FMNMX takes |r| as an operand: one instruction)
float track(float r) {{
    if ({fmin}) fstate = min(fstate, abs(r));
    else if ({track}) state = min(state, floatBitsToUint(r) & 0x7F800000u);
    return r;
}}
// states: each site its own running minimum (no serial chain through one variable), combined at the end
#define TRACK(r, s) ({states} ? trackk(r, s) : track(r))
float trackk(float r, uint s) {{
    uint e = floatBitsToUint(r) & 0x7F800000u;
    if (s == 0u) st0 = min(st0, e); else if (s == 1u) st1 = min(st1, e); else if (s == 2u) st2 = min(st2, e);
    else if (s == 3u) st3 = min(st3, e); else st4 = min(st4, e);
    return r;
}}
shared float ys[{depth}];  // ymode 3: the block's RN(1/n), each lane computing its share
float qdiv(float a, float b, uint n, float yk) {{
    if ({plain}) {{ precise float q = a / b; return q; }}  // the device's division (exact on lavapipe)
    float y = {ymode} >= 2 ? yk : ({table} ? ytab[n - 1u] : rcp_rn(b));
    precise float q0 = a * y;
    precise float q1 = fma(fma(-q0, b, a), y, q0);
    if ({fmin}) fstate = window(floatBitsToUint(a), floatBitsToUint(b)) ? fstate : 0.0;
    else if ({track}) {{ if ({states}) st4 = window(floatBitsToUint(a), floatBitsToUint(b)) ? st4 : 0u;
                   else state = window(floatBitsToUint(a), floatBitsToUint(b)) ? state : 0u; }}
    return q1;
}}
void main() {{
    uint lane = gl_GlobalInvocationID.x;
    if (lane >= {chains}u) return;
    state = 0x7F800000u;
    uint n = 1u;  // the first step, exactly: m1 = 0 + x0 / 1 = x0, m2 = 0 + x0 * (x0 - x0) = +0
    float m1 = inp[lane], m2 = 0.0;
    for (uint c0 = 0u; c0 < {steps}u; c0 += {depth}u) {{
        float v[{depth}], yv[{depth}];
        for (uint j = 0u; j < {depth}u; j++) v[j] = canon(inp[(1u + c0 + j) * {chains}u + lane]);
        if ({ymode} == 2) for (uint j = 0u; j < {depth}u; j++) yv[j] = ytab[n + j];  // RN(1/(n + 1 + j)), loaded ahead
        if ({ymode} == 3) {{
            barrier();
            for (uint j = gl_LocalInvocationID.x; j < {depth}u; j += {local}u) ys[j] = rcp_rn(float(n + 1u + j));
            barrier();
            for (uint j = 0u; j < {depth}u; j++) yv[j] = ys[j];
        }}
        for (uint j = 0u; j < {depth}u; j++) {{
            float x = v[j];
            n += 1u;
            precise float d = x - m1;
            d = TRACK(d, 0u);
            precise float m = m1 + qdiv(d, float(n), n, {ymode} >= 2 ? yv[j] : 0.0);
            m1 = TRACK(m, 1u);
            if ({m1only}) {{ trail[(c0 + j) * {chains}u + lane] = m1; continue; }}  // the M1 chain alone, its values kept
            precise float d2 = x - m1;
            d2 = TRACK(d2, 2u);
            precise float p = d * d2;
            p = TRACK(p, 3u);
            precise float s = m2 + p;
            m2 = TRACK(s, 0u);
        }}
    }}
    o[lane * 3u] = m1;
    o[lane * 3u + 1u] = m2;
    uint fs = {fmin} ? (fstate >= 1.17549435e-38 ? 0x7F800000u : 0u) : 0x7F800000u;
    o[lane * 3u + 2u] = uintBitsToFloat(min(fs, min(state, min(min(st0, st1), min(min(st2, st3), st4)))));
}}
"""


# The M2 chain once the M1 chain's values are kept (m1only): every product d * d2 is independent of
# the chain (a parallel pass, not timed here), so M2 is a plain running sum of them, tracked.
SUM = """#version 450
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer P {{ float p[]; }};
layout(std430, binding = 1) buffer O {{ float o[]; }};
uint state = 0x7F800000u;
void main() {{
    uint lane = gl_GlobalInvocationID.x;
    if (lane >= {chains}u) return;
    float m2 = 0.0;
    for (uint c0 = 0u; c0 < {steps}u; c0 += 32u) {{
        float v[32];
        for (uint j = 0u; j < 32u; j++) v[j] = p[(c0 + j) * {chains}u + lane];
        for (uint j = 0u; j < 32u; j++) {{
            precise float s = m2 + v[j];
            state = min(state, floatBitsToUint(s) & 0x7F800000u);
            m2 = s;
        }}
    }}
    o[lane * 3u + 1u] = m2;
    o[lane * 3u + 2u] = uintBitsToFloat(state);
}}
"""


STEP = ("{{ float x = v{j}; n += 1u; precise float d = x - m1; d = TRACK(d, 0u); "
        "precise float m = m1 + qdiv(d, float(n), n, 0.0); m1 = TRACK(m, 1u); precise float d2 = x - m1; "
        "d2 = TRACK(d2, 2u); precise float p = d * d2; p = TRACK(p, 3u); precise float s = m2 + p; m2 = TRACK(s, 0u); }}\n")


def unrolled(src: str, depth: int, chains: int) -> str:
    """`src` (SHADER, formatted) with each block written out as scalars v0, v1, ... and `depth` steps
    instead of a `float v[depth]` array and two loops: whether the driver keeps the array in registers."""
    loads = "".join(f"float v{j} = canon(inp[(1u + c0 + {j}u) * {chains}u + lane]); " for j in range(depth))
    steps = "".join(STEP.format(j=j) for j in range(depth))
    head = src.index("        float v[")
    tail = src.index("    }\n    o[lane * 3u]")
    return src[:head] + "        " + loads + "\n" + steps + src[tail:]


def chains_numpy(x: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Every chain's (m1, m2) in f32 after its first step and `steps` more, in order (NumPy's f32
    division is correctly rounded)."""
    rows = x.reshape(steps + 1, CHAINS)
    m1, m2 = rows[0].copy(), np.zeros(CHAINS, np.float32)
    for i in range(1, steps + 1):
        d = rows[i] - m1
        m1 = m1 + d / np.float32(i + 1)
        m2 = m2 + d * (rows[i] - m1)
    return m1, m2


def main(argv=None) -> int:
    from vyre_vk import spirv
    from vyre_vk.runtime import Device, kp_bridge

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=65536, help="steps per chain (a multiple of 64)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warm-s", type=float, default=1.0)
    ap.add_argument("--period-ns", type=float, default=1.0)
    args = ap.parse_args(argv)
    steps = args.steps
    rng = np.random.default_rng(1)
    x = rng.standard_normal((steps + 1) * CHAINS).astype(np.float32)
    want1, want2 = chains_numpy(x, steps)
    y = (np.float32(1) / np.arange(1, steps + 2, dtype=np.float32)).astype(np.float32)  # RN(1/n)
    dev = Device()
    mgr = dev.manager
    ti, ty = kp_bridge.tensor(mgr, x), kp_bridge.tensor(mgr, y)
    ttrail = kp_bridge.tensor(mgr, np.zeros(steps * CHAINS, np.float32))
    mgr.sequence().record(kp_bridge.sync_device([ti, ty, ttrail])).eval()
    variants = [dict(track=1, table=0, depth=32, local=16), dict(track=0, table=0, depth=32, local=16),
                dict(track=1, table=1, depth=32, local=16), dict(track=0, table=1, depth=32, local=16),
                dict(track=1, table=0, depth=8, local=16), dict(track=1, table=0, depth=64, local=16),
                dict(track=1, table=0, depth=32, local=1), dict(track=1, table=0, depth=32, local=64),
                dict(track=0, table=0, depth=32, local=16, plain=1),
                dict(track=1, table=0, depth=32, local=16, scalars=1), dict(track=0, table=0, depth=32, local=16, scalars=1),
                dict(track=0, table=0, depth=32, local=16, plain=1, scalars=1),
                dict(track=1, table=0, depth=32, local=16, canon=1), dict(track=1, table=0, depth=32, local=16, narrow=1),
                dict(track=1, table=0, depth=32, local=16, canon=1, narrow=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, states=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, states=1, scalars=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, m1only=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, m1only=1, states=1),
                dict(track=1, table=1, depth=32, local=16, narrow=1, m1only=1, states=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, fmin=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, fmin=1, m1only=1),
                dict(track=1, table=0, depth=32, local=16, narrow=1, ymode=2),
                dict(track=1, table=0, depth=32, local=16, narrow=1, ymode=3)]
    print(f"device: {dev.name}; {CHAINS} chains x {steps} steps")
    for v in variants:
        src = SHADER.format(chains=CHAINS, steps=steps, track="true" if v["track"] else "false",
                            table="true" if v["table"] else "false", plain="true" if v.get("plain") else "false",
                            canon="true" if v.get("canon") else "false", narrow="true" if v.get("narrow") else "false",
                            states="true" if v.get("states") else "false", fmin="true" if v.get("fmin") else "false", ymode=v.get("ymode", 0), m1only="true" if v.get("m1only") else "false",
                            depth=v["depth"], local=v["local"])
        if v.get("scalars"):
            src = unrolled(src, v["depth"], CHAINS)
        to = kp_bridge.tensor(mgr, np.zeros(CHAINS * 3, np.float32))
        algo = kp_bridge.algorithm(mgr, [ti, ty, to, ttrail], spirv.compile_glsl(src), (-(-CHAINS // v["local"]), 1, 1))
        ts = [t * 1e3 for t in dispatch_seconds(mgr, algo, args.reps, args.period_ns, args.warm_s, ordered=True)]
        mgr.sequence().record(kp_bridge.sync_local([to])).eval()
        out = to.data().reshape(CHAINS, 3)
        exact = (np.array_equal(out[:, 0].view(np.uint32), want1.view(np.uint32))
                 and (v.get("m1only") or np.array_equal(out[:, 1].view(np.uint32), want2.view(np.uint32))))
        state = "" if not v["track"] else f", state {'clean' if out[0, 2].view(np.uint32) != 0 else 'set'}"
        print(f"  {'plain a/b' if v.get('plain') else 'Markstein'} track {v['track']} table {v['table']} depth {v['depth']:3} local {v['local']:3}"
              f"{', scalars' if v.get('scalars') else ''}{', canon loads' if v.get('canon') else ''}"
              f"{', narrow window' if v.get('narrow') else ''}{', states apart' if v.get('states') else ''}"
              f"{', float min of |r|' if v.get('fmin') else ''}"
              f"{', RN(1/n) loaded ahead' if v.get('ymode') == 2 else ''}{', RN(1/n) shared, lanes share the block' if v.get('ymode') == 3 else ''}"
              f"{', M1 chain alone (values stored)' if v.get('m1only') else ''}: {statistics.median(ts):8.3f} ms, bits {'equal' if exact else 'DIFFER'}{state}")
        for o in (algo, to):
            o.destroy()
    # the M2 chain as a running sum of precomputed products (what splitting M1 off leaves serial)
    to = kp_bridge.tensor(mgr, np.zeros(CHAINS * 3, np.float32))
    algo = kp_bridge.algorithm(mgr, [ti, to], spirv.compile_glsl(SUM.format(chains=CHAINS, steps=steps)), (CHAINS // 16, 1, 1))
    ts = [t * 1e3 for t in dispatch_seconds(mgr, algo, args.reps, args.period_ns, args.warm_s, ordered=True)]
    print(f"  M2 as a tracked running sum of {steps} precomputed terms: {statistics.median(ts):8.3f} ms")
    for o in (algo, to, ti, ty, ttrail):
        o.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
