#!/usr/bin/env python3
"""Seed op at a small size: vyre-vk's cold compile and warm run against raw kp, one run.

- cold compile: validate + lower + shaderc (IR -> SPIR-V) with empty memory and disk
  caches, and Device.compile (adds the Kernel); warm compile: the same with the disk
  cache filled.
- warm run: Kernel.run(inputs) (check inputs, write staging, replay the recorded
  sequence, copy outputs) against raw kp with hand-written GLSL doing the same work
  (write staging, replay upload+dispatch+download, copy the output).
Both results are checked against the reference before timing.

    .venv/bin/python tools/bench/kernel_latency.py [--model-dim 2 --hidden-dim 2 --runs 2000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import kp
from vyre_vk import reference, spirv
from vyre_vk.compile import Options, clear_cache, compile_program
from vyre_vk.ops import get
from vyre_vk.runtime import Device, kp_bridge

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import timed  # noqa: E402  (tools/bench/run.py: the benchmark's shared timing loop)

HAND_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W1 { float w1[]; };
layout(std430, set = 0, binding = 2) readonly buffer B1 { float b1[]; };
layout(std430, set = 0, binding = 3) readonly buffer W2 { float w2[]; };
layout(std430, set = 0, binding = 4) readonly buffer GO { float grad_out[]; };
layout(std430, set = 0, binding = 5) buffer GX { float grad_x[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint M = uint(x.length()), H = uint(b1.length());
  if (i < M) {
    float gx = 0.0;
    for (uint j = 0u; j < H; ++j) {
      float h = b1[j];
      for (uint m = 0u; m < M; ++m) h = h + x[m] * w1[m * H + j];
      float d = max(0.5 * h, 2.0 * h);
      float ga = 0.0;
      for (uint k = 0u; k < M; ++k) ga = ga + grad_out[k] * w2[j * M + k];
      gx = gx + (ga * d) * w1[i * H + j];
    }
    grad_x[i] = gx;
  }
}
"""


def us(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1e6:9.1f} us   min {min(xs) * 1e6:9.1f} us"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dim", type=int, default=2)
    ap.add_argument("--hidden-dim", type=int, default=2)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--cold", type=int, default=5)
    args = ap.parse_args()
    d, h = args.model_dim, args.hidden_dim
    program = get("vyre-libs::nn::mlp_backward").build_with(model_dim=d, hidden_dim=h)
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal(d, dtype=np.float32), "w1": rng.standard_normal(d * h, dtype=np.float32),
              "b1": rng.standard_normal(h, dtype=np.float32), "w2": rng.standard_normal(h * d, dtype=np.float32),
              "grad_out": rng.standard_normal(d, dtype=np.float32)}
    want = reference.run(program, inputs)["grad_x"]

    def ir_to_spirv():  # through the compile front door, its own cache cleared: the stages, not a lookup
        clear_cache()
        compile_program(program, Options(passes=False))

    cold, cold_dev, warm = [], [], []
    with Device() as dev:
        for _ in range(args.cold):
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["VYRE_VK_CACHE_DIR"] = tmp
                spirv.clear_memory_cache()
                cold += timed(ir_to_spirv, 1)
                spirv.clear_memory_cache()
                warm += timed(ir_to_spirv, 1)  # disk hit
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["VYRE_VK_CACHE_DIR"] = tmp
            spirv.clear_memory_cache()
            t = time.perf_counter()
            kernel = dev.compile(program)
            cold_dev.append(time.perf_counter() - t)
        got = kernel.run(inputs)["grad_x"]
        assert np.array_equal(got, want), (got, want)

        mgr = dev.manager
        names = ["x", "w1", "b1", "w2", "grad_out"]
        tensors = [kp_bridge.tensor(mgr, inputs[n]) for n in names] + [kp_bridge.tensor(mgr, np.zeros(d, np.float32))]
        algo = kp_bridge.algorithm(mgr, tensors, spirv.compile_glsl(HAND_GLSL), (-(-d // 64), 1, 1))
        seq = (mgr.sequence().record(kp.OpTensorSyncDevice(tensors)).record(kp_bridge.dispatch(algo))
               .record(kp.OpTensorSyncLocal([tensors[-1]])))

        def raw_run():
            for t_, n in zip(tensors, names):
                t_.data()[:] = inputs[n]
            seq.eval()
            return tensors[-1].data().copy()

        raw = raw_run()
        scale = float(np.max(np.abs(want))) or 1.0
        assert np.max(np.abs(raw - want)) <= 4 * float(np.spacing(np.float32(scale))), (raw, want)
        ours_t, raw_t = [], []
        for _ in range(args.runs // 100):  # interleave so drift hits both equally
            ours_t += timed(lambda: kernel.run(inputs), 100)
            raw_t += timed(raw_run, 100)
        print(f"device: {dev.name}; seed op mlp_backward at {d}x{h}")
        print(f"cold compile IR->SPIR-V (validate+lower+shaderc): {us(cold)}")
        print(f"warm compile IR->SPIR-V (disk cache hit):         {us(warm)}")
        print(f"Device.compile cold (IR->SPIR-V + Kernel):       {us(cold_dev)}")
        print(f"warm run, vyre-vk Kernel.run:                     {us(ours_t)}")
        print(f"warm run, raw kp + hand-written GLSL:             {us(raw_t)}")
        print(f"ratio ours/raw (medians): {statistics.median(ours_t) / statistics.median(raw_t):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
