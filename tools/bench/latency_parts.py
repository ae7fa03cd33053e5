#!/usr/bin/env python3
"""Where a tiny kernel's submit+wait goes, part by part (run.py's latency section, taken apart).

Times, interleaved, medians of single calls, on run.py's 64-element u32 map (out = a + 1):
- the host-side numpy parts alone (a write into a mapped tensor, a copy out of one, a no-op call);
- run.py's hand-written kernel through kp: the recorded sequence alone (bare dispatch + host-read
  barrier) and the whole round trip (write, eval, copy), with its input in plain host memory and in
  device-local host-visible memory (kp patch 0013);
- Kernel.run with the defaults, with ``VYRE_VK_HOST_DEVICE_LOCAL=0``, without the coarsen pass,
  without coarsen and workgroup_size, and as written; and of small ops with scratch buffers, with the
  knob and without;
- with ``--probe``: the raw Vulkan round trip by memory type (vk_dispatch_probe.c);
- with ``--sweep``: GPU time (timestamps) of the same map at larger sizes, coarsened or not.

    bash tools/device_run.sh python3 tools/bench/latency_parts.py [--probe bundle/bin/vk_dispatch_probe] [--sweep]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import TINY_GLSL, tiny_program  # noqa: E402

from vyre_vk import spirv  # noqa: E402
from vyre_vk.opt import PASS_NAMES  # noqa: E402
from vyre_vk.runtime import default_device, kp_bridge  # noqa: E402

EMPTY_GLSL = "#version 450\nlayout(local_size_x = 64) in;\nvoid main() { }\n"


def once(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def hand_kernel(mgr, a: np.ndarray, local: bool):
    """run.py's hand-written kernel on host tensors (the input device-local if `local`): its sequence,
    its round trip, and the objects to destroy."""
    ha = kp_bridge.tensor(mgr, a, host=True)
    if local:
        ha.prefer_device_local_host()
    ho = kp_bridge.tensor(mgr, np.zeros_like(a), host=True)
    algo = kp_bridge.algorithm(mgr, [ha, ho], spirv.compile_glsl(TINY_GLSL), (1, 1, 1))
    seq = mgr.sequence().record(kp_bridge.dispatch(algo, ordered=True)).record(kp_bridge.host_read_barrier([ho]))
    hav, hov = ha.data(), ho.data()

    def round_trip():
        hav[...] = a
        seq.eval()
        return hov.copy()

    assert np.array_equal(round_trip(), a + 1)
    return seq, round_trip, (seq, algo, ha, ho), hov


def kernels(dev, n: int) -> dict:
    """Kernel variants of the map at n elements (distinct compile options: distinct kernels)."""
    every = set(PASS_NAMES)
    return {"defaults": dev.compile(tiny_program(n)),
            "no coarsen": dev.compile(tiny_program(n), optimize=every - {"coarsen"}),
            "no coarsen, no workgroup_size": dev.compile(tiny_program(n), optimize=every - {"coarsen", "workgroup_size"}),
            "as written": dev.compile(tiny_program(n), optimize=False)}


def host_memory_kernel(dev, program, inputs: dict):
    """`program` compiled as a kernel apart from the default one (the same passes named as a set), its
    one plan built with VYRE_VK_HOST_DEVICE_LOCAL=0 (read when a plan is built): every buffer in host
    memory. Returns the kernel and that first run's results."""
    before = os.environ.get("VYRE_VK_HOST_DEVICE_LOCAL")
    os.environ["VYRE_VK_HOST_DEVICE_LOCAL"] = "0"
    try:
        k = dev.compile(program, optimize=set(PASS_NAMES))
        return k, k.run(inputs)
    finally:
        if before is None:
            del os.environ["VYRE_VK_HOST_DEVICE_LOCAL"]
        else:
            os.environ["VYRE_VK_HOST_DEVICE_LOCAL"] = before


SMALL_OPS = [("vyre-libs::nn::mlp_backward", dict(model_dim=4, hidden_dim=8)), ("vyre-libs::nn::softmax", {}),
             ("vyre-libs::nn::layer_norm", {})]


def small_ops(dev, reps: int) -> None:
    """Kernel.run of small registered ops with scratch buffers (host-tensor plans), their inputs and
    scratch in device-local memory (the default) or not (VYRE_VK_HOST_DEVICE_LOCAL=0)."""
    from vyre_vk.ops import get

    timers = {}
    for op, kw in SMALL_OPS:
        program = get(op).build_with(**kw) if kw else get(op).build()
        rng = np.random.default_rng(0)
        inputs = {b.name: rng.standard_normal(max(b.count, 1)).astype(b.element.numpy)
                  for b in program.buffers if b.is_input and not b.is_workgroup}
        on = dev.compile(program)
        off, want = host_memory_kernel(dev, program, inputs)
        got = on.run(inputs)
        assert all(np.array_equal(got[n].view(np.uint8), want[n].view(np.uint8)) for n in want), op
        timers[f"{op} device-local"] = lambda k=on, x=inputs: k.run(x)
        timers[f"{op} host memory"] = lambda k=off, x=inputs: k.run(x)
    times: dict[str, list] = {k: [] for k in timers}
    for _ in range(reps):
        for k, fn in timers.items():
            times[k].append(once(fn))
    for k, v in times.items():
        print(f"  Kernel.run {k:56} {statistics.median(v) * 1e6:7.2f} us")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--probe", default="")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--period-ns", type=float, default=1.0, help="the device's timestampPeriod")
    args = ap.parse_args()
    dev = default_device()
    n = 64
    a = np.arange(n, dtype=np.uint32)
    inputs = {"a": a}
    mgr = dev.manager
    seq, host_run, owned, hov = hand_kernel(mgr, a, False)
    lseq, local_run, lowned, _ = hand_kernel(mgr, a, True)
    ks = kernels(dev, n)
    plain, first = host_memory_kernel(dev, tiny_program(n), inputs)
    assert np.array_equal(first["out"], a + 1)
    for k in ks.values():
        assert np.array_equal(k.run(inputs)["out"], a + 1)
    parts = {"no-op call": lambda: None, "numpy write 64 u32 into a mapped tensor": lambda: hov.__setitem__(Ellipsis, a),
             "numpy copy 64 u32 out of a mapped tensor": hov.copy,
             "hand kernel: kp eval alone": seq.eval, "hand kernel: round trip": host_run,
             "hand kernel, input device-local: kp eval alone": lseq.eval,
             "hand kernel, input device-local: round trip": local_run,
             "Kernel.run, VYRE_VK_HOST_DEVICE_LOCAL=0": lambda: plain.run(inputs)}
    parts.update({f"Kernel.run, {name}": (lambda k=k: k.run(inputs)) for name, k in ks.items()})
    times: dict[str, list] = {k: [] for k in parts}
    for _ in range(args.reps):
        for k, fn in parts.items():
            times[k].append(once(fn))
    print(f"device {dev.name}, medians of {args.reps} single calls, interleaved")
    for k, v in times.items():
        print(f"  {k:56} {statistics.median(v) * 1e6:7.2f} us")
    small_ops(dev, args.reps // 4)
    for objs in (owned, lowned):
        for o in objs:
            o.destroy()
    if args.probe:
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, f"{x}.spv") for x in ("tiny", "empty")]
            for p, src in zip(paths, (TINY_GLSL, EMPTY_GLSL)):
                with open(p, "wb") as f:
                    f.write(spirv.compile_glsl(src, cache=False))
            got = json.loads(subprocess.run([args.probe, *paths, "0", str(args.reps)], check=True,
                                            capture_output=True, text=True).stdout)
        print(f"  raw Vulkan (C): memory types {json.dumps(got['memory_types'])}")
        for k, v in got["round_trip_us"].items():
            print(f"  raw Vulkan (C): {k:56} {v:7.2f} us")
        print(f"  raw Vulkan (C): vkQueueSubmit call {got['submit_call_us']:.2f} us, vkResetFences call "
              f"{got['reset_fence_call_us']:.2f} us (plain host memory)")
        for k, v in got["read_4mib_gbps"].items():
            print(f"  raw Vulkan (C): host read of 4 MiB from {k:8} memory {v:7.2f} GB/s")
    if args.sweep:
        print("GPU us (timestamps, median of 50) of the map by size")
        for log2 in (10, 12, 14, 16, 18, 20, 22):
            m = 1 << log2
            x = {"a": np.arange(m, dtype=np.uint32)}
            row = []
            for name, k in kernels(dev, m).items():
                gpu, _ = k.profile(x, repeats=50, timestamp_period_ns=args.period_ns)
                row.append(f"{name} {statistics.median(gpu) * 1e6:8.2f}")
                k.release()
            print(f"  n=2^{log2:<3} " + "  ".join(row))


if __name__ == "__main__":
    main()
