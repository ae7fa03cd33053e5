#!/usr/bin/env python3
"""What a tiny submit+wait spends on pipeline barriers (a probe, not a benchmark of record).

kp 0.9.0 records one vkCmdPipelineBarrier per tensor: OpAlgoDispatch before every dispatch (a
transfer -> compute barrier for each of the algorithm's tensors) and OpMemoryBarrier for each tensor
it lists. This times, on host-visible tensors, medians of `--evals` evals of:

- an empty sequence;
- OpMemoryBarrier over k tensors (k vkCmdPipelineBarrier calls), k = 1, 2, 4, 8;
- one 64-lane dispatch of an algorithm binding k tensors (k barriers before it);
- the same dispatch recorded bare (kp patch 0011: no barrier), alone and followed by the host-read
  barrier that a run's results need, as buffer barriers or as one global barrier (kp patch 0012).

    python3 tools/bench/barrier_cost.py [--evals 2000]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def glsl(k: int) -> str:
    decl = "".join(f"layout(std430, binding = {b}) buffer B{b} {{ uint b{b}[]; }};\n" for b in range(k))
    return ("#version 450\nlayout(local_size_x = 64) in;\n" + decl +
            "void main() { uint i = gl_GlobalInvocationID.x; b0[i] = b0[i] + 1u; }\n")


def main(argv=None) -> int:
    import kp
    import kp
    from vyre_vk import spirv
    from vyre_vk.runtime import Device, kp_bridge

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=2000)
    args = ap.parse_args(argv)
    dev = Device()  # sets the spin-wait window the runtime uses
    mgr = dev.manager
    tensors = [kp_bridge.tensor(mgr, np.zeros(64, np.uint32), host=True) for _ in range(8)]
    seqs = {"empty": mgr.sequence()}
    algos = []
    for k in (1, 2, 4, 8):
        seqs[f"barrier x{k}"] = mgr.sequence().record(kp_bridge.compute_barrier(tensors[:k]))
        if k == 1:
            seqs["global barrier"] = mgr.sequence().record(kp.OpGlobalBarrier(
                kp.ACCESS_SHADER_WRITE, kp.ACCESS_SHADER_READ | kp.ACCESS_SHADER_WRITE, kp.STAGE_COMPUTE_SHADER,
                kp.STAGE_COMPUTE_SHADER))
        algo = kp_bridge.algorithm(mgr, tensors[:k], spirv.compile_glsl(glsl(k)), (1, 1, 1))
        algos.append(algo)
        seqs[f"dispatch, {k} tensors"] = mgr.sequence().record(kp_bridge.dispatch(algo))
        seqs[f"bare dispatch, {k}"] = mgr.sequence().record(kp_bridge.dispatch(algo, ordered=True))
        seqs[f"bare + host barrier, {k}"] = (mgr.sequence().record(kp_bridge.dispatch(algo, ordered=True))
                                             .record(kp_bridge.host_read_barrier(tensors[:1])))
        seqs[f"bare + global host barrier, {k}"] = (
            mgr.sequence().record(kp_bridge.dispatch(algo, ordered=True))
            .record(kp.OpGlobalBarrier(kp.ACCESS_SHADER_WRITE, kp.ACCESS_HOST_READ, kp.STAGE_COMPUTE_SHADER,
                                       kp.STAGE_HOST)))
    times: dict = {name: [] for name in seqs}
    for s in seqs.values():
        for _ in range(200):
            s.eval()
    for _ in range(max(1, args.evals // 100)):  # interleaved, so clock drift hits all alike
        for name, s in seqs.items():
            for _ in range(100):
                t0 = time.perf_counter()
                s.eval()
                times[name].append(time.perf_counter() - t0)
    res = {name: round(statistics.median(x) * 1e6, 2) for name, x in times.items()}
    print(json.dumps({"device": dev.name, "us": res}))
    for name, us in res.items():
        print(f"  {name:33} {us:8.2f} us")
    for s in list(seqs.values()) + algos + tensors:
        s.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
