#!/usr/bin/env python3
"""GEMV row chains by layout (a probe, not a benchmark of record): what linear_relu's exact schedule
could reach if its weight rows were read transposed.

linear_relu keeps one serial chain per output row, ``acc = acc + w[r*K + k] * x[k]`` for k in order.
Lanes r, r+1 of a warp then load from rows 16 KB apart: every load touches 32 cache lines. This
times, with GPU timestamps on raw kp (K = N = 4096, f32, medians of --reps):

- ``rows``: that schedule (32 loads issued ahead, as unroll does; also 64 and 128), local sizes 16 to 256,
  the block as a `float v[depth]` array and two loops or written out as scalars (as unroll emits);
- ``transposed``: the same chains reading ``wt[k*N + r]`` (one line per warp load);
- ``transpose``: a 32x32-tiled transpose through workgroup memory, w -> wt (the pre-pass's cost);
- ``stream C,L,T`` (both layouts): C chains per workgroup of L lanes, every lane loading the next
  C x T tile into registers while the first C lanes step through the current one in workgroup
  memory. A chain-per-lane schedule has only its own lanes' loads in flight (4096 chains: about one
  warp per SM), and bytes in flight over latency bound each SM's bandwidth; here all L lanes load.

The bits of ``rows`` and ``transposed`` are compared: the order of each chain's operations is
the same, only the address of each weight differs.

    python3 tools/bench/gemv_layouts.py [--reps 20] [--stream 32,256,128 ...]
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from gpu_timing import dispatch_seconds

CHAIN = """#version 450
layout(local_size_x = {local}) in;
layout(std430, binding = 0) readonly buffer W {{ float w[]; }};
layout(std430, binding = 1) readonly buffer X {{ float x[]; }};
layout(std430, binding = 2) buffer O {{ float o[]; }};
void main() {{
    uint r = gl_GlobalInvocationID.x;
    if (r >= {n}u) return;
    precise float acc = 0.0;
    for (uint k0 = 0u; k0 < {k}u; k0 += {depth}u) {{
        float v[{depth}];
        for (uint j = 0u; j < {depth}u; j++) v[j] = w[{index}];
        for (uint j = 0u; j < {depth}u; j++) {{ precise float p = v[j] * x[k0 + j]; acc = acc + p; }}
    }}
    o[r] = max(acc, 0.0);
}}
"""

def unrolled(src: str, depth: int, index: str) -> str:
    """`src` (CHAIN) with each block's loads and steps written out as scalars (v0, v1, ...) instead of
    a `float v[depth]` array and two loops: whether the driver keeps the array in registers."""
    loads = "".join(f"float v{j} = w[{index.replace('j', f'{j}u')}]; " for j in range(depth))
    steps = "".join(f"{{ precise float p = v{j} * x[k0 + {j}u]; acc = acc + p; }} " for j in range(depth))
    head = src.index("        float v[")
    tail = src.index("    }\n    o[r]")
    return src[:head] + "        " + loads + "\n        " + steps + "\n" + src[tail:]


# The chains of C rows per workgroup, fed through workgroup memory: all L lanes load the next
# C x T tile of w (each lane E = C*T/L elements, coalesced) into registers while the first C lanes
# run T steps of their chains over the current tile; then the registers go to the other half of a
# double buffer and one barrier separates the tiles. The order of each chain's steps is unchanged.
STREAM = """#version 450
layout(local_size_x = {L}) in;
layout(std430, binding = 0) readonly buffer W {{ float w[]; }};
layout(std430, binding = 1) readonly buffer X {{ float x[]; }};
layout(std430, binding = 2) buffer O {{ float o[]; }};
const uint C = {C}u, T = {T}u, L = {L}u, E = C * T / L, K = {k}u, N = {n}u;
shared float sw[2][T][C + 1u];
shared float sx[2][T];
uint at(uint r0, uint k0, uint e) {{ {at} }}
void main() {{
    uint lane = gl_LocalInvocationID.x, r0 = gl_WorkGroupID.x * C;
    float pre[E];
    float px = 0.0;
    for (uint i = 0u; i < E; i++) pre[i] = w[at(r0, 0u, lane + i * L)];
    if (lane < T) px = x[lane];
    for (uint i = 0u; i < E; i++) {{ uint e = lane + i * L; sw[0][{kk}][{c}] = pre[i]; }}
    if (lane < T) sx[0][lane] = px;
    barrier();
    precise float acc = 0.0;
    for (uint t = 0u; t < K / T; t++) {{
        uint cur = t & 1u;
        bool more = t + 1u < K / T;
        if (more) {{
            for (uint i = 0u; i < E; i++) pre[i] = w[at(r0, (t + 1u) * T, lane + i * L)];
            if (lane < T) px = x[(t + 1u) * T + lane];
        }}
        if (lane < C) {{
            for (uint k = 0u; k < T; k++) {{ precise float p = sw[cur][k][lane] * sx[cur][k]; acc = acc + p; }}
        }}
        if (more) {{
            for (uint i = 0u; i < E; i++) {{ uint e = lane + i * L; sw[cur ^ 1u][{kk}][{c}] = pre[i]; }}
            if (lane < T) sx[cur ^ 1u][lane] = px;
        }}
        barrier();
    }}
    if (lane < C) o[r0 + lane] = max(acc, 0.0);
}}
"""
# element e of a tile -> (chain c, step kk), consecutive lanes on consecutive addresses
_STREAM_LAYOUTS = {
    "rows": dict(at="return (r0 + e / T) * K + k0 + e % T;", kk="e % T", c="e / T"),
    "transposed": dict(at="return (k0 + e / C) * N + r0 + e % C;", kk="e / C", c="e % C"),
}


TRANSPOSE = """#version 450
layout(local_size_x = 32, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) buffer T { float t[]; };
shared float tile[32][33];
void main() {
    uint bx = gl_WorkGroupID.x * 32u, by = gl_WorkGroupID.y * 32u;  // tile: rows by.., columns bx..
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    for (uint j = 0u; j < 32u; j += 8u) tile[ty + j][tx] = w[(by + ty + j) * %(k)du + bx + tx];
    barrier();
    for (uint j = 0u; j < 32u; j += 8u) t[(bx + ty + j) * %(n)du + by + tx] = tile[tx][ty + j];
}
"""


def _chains(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each row's ``acc = acc + w[r, k] * x[k]`` in k order, f32 roundings, all rows at once."""
    acc = np.zeros(w.shape[0], np.float32)
    for k in range(w.shape[1]):
        acc = acc + w[:, k] * x[k]
    return acc


def main(argv=None) -> int:
    from vyre_vk import spirv
    from vyre_vk.runtime import Device, kp_bridge

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096, help="K = N (a multiple of 32)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--period-ns", type=float, default=1.0, help="timestampPeriod (1.0 on H100/H200)")
    ap.add_argument("--warm-s", type=float, default=1.0, help="seconds of dispatches first (idle clocks)")
    ap.add_argument("--stream", type=lambda v: tuple(int(t) for t in v.split(",")), action="append",
                    help="C,L,T: a streamed variant (C chains and L lanes per workgroup, T-step tiles); "
                         "default a sweep")
    args = ap.parse_args(argv)
    args.stream = args.stream or [(32, 256, 128), (16, 256, 256), (16, 128, 128), (32, 128, 64), (64, 256, 64),
                                  (16, 256, 128), (32, 256, 64), (8, 256, 256)]
    K = N = args.n
    dev = Device()
    mgr = dev.manager
    rng = np.random.default_rng(0)
    w = rng.standard_normal(N * K).astype(np.float32)
    x = rng.standard_normal(K).astype(np.float32)
    tw, tx = kp_bridge.tensor(mgr, w), kp_bridge.tensor(mgr, x)
    twt = kp_bridge.tensor(mgr, np.ascontiguousarray(w.reshape(N, K).T).reshape(-1))
    tmp = kp_bridge.tensor(mgr, np.zeros(N * K, np.float32))
    mgr.sequence().record(kp_bridge.sync_device([tw, tx, twt, tmp])).eval()  # kp uploads on a sync only
    outs = {}

    def timed(algo) -> float:
        return statistics.median(dispatch_seconds(mgr, algo, args.reps, args.period_ns, args.warm_s,
                                                  ordered=True)) * 1e6

    rows = {}
    for name, index, wt in (("rows", "r * %du + k0 + j" % K, tw), ("transposed", "(k0 + j) * %du + r" % N, twt)):
        for local, depth, scalars in ((16, 32, False), (64, 32, False), (256, 32, False), (16, 64, False),
                                      (16, 128, False), (32, 128, False), (16, 32, True), (16, 128, True)):
            if name == "transposed" and (depth > 32 or scalars):
                continue
            to = kp_bridge.tensor(mgr, np.zeros(N, np.float32))
            src = CHAIN.format(local=local, depth=depth, n=N, k=K, index=index)
            words = spirv.compile_glsl(unrolled(src, depth, index) if scalars else src)
            algo = kp_bridge.algorithm(mgr, [wt, tx, to], words, (-(-N // local), 1, 1))
            us = timed(algo)
            mgr.sequence().record(kp_bridge.sync_local([to])).eval()
            outs[(name, local, depth, scalars)] = to.data().copy()
            rows[f"{name}, local {local}, {depth} ahead{', scalars' if scalars else ''}"] = us
            for o in (algo, to):
                o.destroy()
    for name, wt in (("rows", tw), ("transposed", twt)):
        for C, L, T in args.stream:
            if N % C or K % T or (C * T) % L or T > L or C > L:
                continue
            to = kp_bridge.tensor(mgr, np.zeros(N, np.float32))
            src = STREAM.format(L=L, C=C, T=T, k=K, n=N, **_STREAM_LAYOUTS[name])
            algo = kp_bridge.algorithm(mgr, [wt, tx, to], spirv.compile_glsl(src), (N // C, 1, 1))
            us = timed(algo)
            mgr.sequence().record(kp_bridge.sync_local([to])).eval()
            outs[(name, "stream", C, L, T)] = to.data().copy()
            rows[f"{name}, stream C={C} L={L} T={T}"] = us
            for o in (algo, to):
                o.destroy()
    algo = kp_bridge.algorithm(mgr, [tw, tmp], spirv.compile_glsl(TRANSPOSE % {"k": K, "n": N}), (K // 32, N // 32, 1))
    rows["transpose 32x32 tiles"] = timed(algo)
    mgr.sequence().record(kp_bridge.sync_local([tmp])).eval()
    same_t = np.array_equal(tmp.data(), np.ascontiguousarray(w.reshape(N, K).T).reshape(-1))
    want = np.maximum(np.float32(0), _chains(w.reshape(N, K), x))
    same = all(np.array_equal(v.view(np.uint32), want.view(np.uint32)) for v in outs.values())
    print(f"device: {dev.name}; K = N = {K}; every layout gives the chains' bits (NumPy, in order): {same}; transpose exact: {same_t}")
    for k, us in rows.items():
        print(f"  {k:28} {us:9.1f} us")
    for o in (algo, tw, tx, twt, tmp):
        o.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
