#!/usr/bin/env python3
"""vyre-vk benchmark: ours against raw kp, raw Vulkan, NumPy and PyTorch, side by side in one run.

Sections (each result is checked before it is timed):
  latency      submit+wait of a tiny cached kernel: vyre-vk Kernel.run, raw kp with
               hand-written GLSL, an empty kp sequence, raw Vulkan (fence wait / spin)
  elementwise  out[i] = a[i] + b[i] (vyre's binary-op shape) at 2^20 and 2^26 f32:
               GPU time from timestamp queries, bandwidth at 12 B/element; PyTorch same run
  seed         nn::mlp_backward as written, end to end (weights resident, grad_x read back),
               optimiser off/on; NumPy and PyTorch
  compile      cold (empty caches) and warm (disk cache) IR -> SPIR-V
Peers in the same run where they apply: PyTorch (CUDA) for elementwise and seed, wgpu-py
(hand-written WGSL, tools/bench/peer_wgpu.py) for latency, elementwise and seed.
Writes a JSON file and, where matplotlib exists, a PNG plot.

    python tools/bench/run.py [--smoke] [--out bench-out] [--probe path/to/vk_submit_probe]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_wgpu  # noqa: E402  (tools/bench/peer_wgpu.py)

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- peers
def torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def torch_time(torch, fn, reps):
    """Median seconds of fn() on the GPU from CUDA events (after warm-up)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) * 1e-3)
    return out


def run_probe(probe: Path | None, index: int) -> dict:
    exe = probe if probe and probe.exists() else None
    if exe is None and shutil.which("gcc"):
        exe = Path(tempfile.mkdtemp()) / "vk_submit_probe"
        r = subprocess.run(["gcc", "-O2", "-o", str(exe), str(ROOT / "tools/bench/vk_submit_probe.c"), "-lvulkan"],
                           capture_output=True, text=True)
        if r.returncode:
            log(f"could not build the raw Vulkan probe: {r.stderr.strip()[:200]}")
            exe = None
    if exe is None:
        return {}
    out = subprocess.run([str(exe), str(index), "2000"], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {}


# ----------------------------------------------------------------------------- programs
def elementwise_program(n: int):
    from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program

    i = Expr.var("i")
    return Program.wrapped(
        [BufferDecl.read("a", 0, DataType.F32).with_count(n), BufferDecl.read("b", 1, DataType.F32).with_count(n),
         BufferDecl.output("out", 2, DataType.F32).with_count(n)], (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.lt(i, Expr.buf_len("out")),
                      [Node.store("out", i, Expr.add(Expr.load("a", i), Expr.load("b", i)))])])


def map_program(dtype, n: int, fn):
    """out[i] = fn(a[i]) over n elements of `dtype`, guarded by the output length."""
    from vyre_vk.ir import BufferDecl, Expr, Node, Program

    i = Expr.var("i")
    return Program.wrapped(
        [BufferDecl.read("a", 0, dtype).with_count(n), BufferDecl.output("out", 1, dtype).with_count(n)],
        (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.lt(i, Expr.buf_len("out")), [Node.store("out", i, fn(Expr.load("a", i)))])])


def tiny_program(n: int):
    from vyre_vk.ir import DataType, Expr

    return map_program(DataType.U32, n, lambda a: Expr.add(a, Expr.u32(1)))


TINY_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(o.length())) { o[i] = a[i] + 1u; } }
"""


# ----------------------------------------------------------------------------- sections
def bench_latency(dev, probe: dict, reps: int) -> dict:
    import kp
    from vyre_vk import spirv
    from vyre_vk.runtime import kp_bridge

    n = 64
    a = np.arange(n, dtype=np.uint32)
    kernel = dev.compile(tiny_program(n))
    assert np.array_equal(kernel.run({"a": a})["out"], a + 1)
    mgr = dev.manager
    ta, to = kp_bridge.tensor(mgr, a), kp_bridge.tensor(mgr, np.zeros(n, np.uint32))
    tiny = spirv.compile_glsl(TINY_GLSL)
    algo = kp_bridge.algorithm(mgr, [ta, to], tiny, (1, 1, 1))
    seq = (mgr.sequence().record(kp.OpTensorSyncDevice([ta, to])).record(kp_bridge.dispatch(algo))
           .record(kp.OpTensorSyncLocal([to])))
    dispatch_only = mgr.sequence().record(kp_bridge.dispatch(algo))
    # the same work on host-visible tensors used in place: no staging copies, one host barrier
    ha, ho = kp_bridge.tensor(mgr, a, host=True), kp_bridge.tensor(mgr, np.zeros(n, np.uint32), host=True)
    halgo = kp_bridge.algorithm(mgr, [ha, ho], tiny, (1, 1, 1))
    hseq = mgr.sequence().record(kp_bridge.dispatch(halgo)).record(kp_bridge.host_read_barrier([ho]))
    ha_view, ho_view = ha.data(), ho.data()

    def host_run():
        ha_view[:] = a
        hseq.eval()
        return ho_view.copy()
    empty = mgr.sequence()

    def raw_run():
        ta.data()[:] = a
        seq.eval()
        return to.data().copy()

    assert np.array_equal(raw_run(), a + 1) and np.array_equal(host_run(), a + 1)
    ours, raw, hraw, disp, emp = [], [], [], [], []
    for _ in range(max(1, reps // 100)):  # interleaved, so drift hits all equally
        ours += timed(lambda: kernel.run({"a": a}), 100)
        raw += timed(raw_run, 100)
        hraw += timed(host_run, 100)
        disp += timed(dispatch_only.eval, 100)
        emp += timed(empty.eval, 100)
    res = {"vyre_vk_kernel_run_us": med(ours) * 1e6, "raw_kp_same_work_us": med(raw) * 1e6,
           "raw_kp_host_tensors_same_work_us": med(hraw) * 1e6,
           "raw_kp_dispatch_only_us": med(disp) * 1e6, "raw_kp_empty_us": med(emp) * 1e6,
           "raw_vulkan_fence_us": probe.get("submit_wait_fence_us"),
           "raw_vulkan_spin_us": probe.get("submit_wait_spin_us")}
    for s in (seq, dispatch_only, empty, algo, ta, to, hseq, halgo, ha, ho):
        s.destroy()
    return res


def bench_elementwise(dev, sizes, reps, period_ns, torch, peer=None) -> list[dict]:
    rows = []
    for n in sizes:
        kernel = dev.compile(elementwise_program(n))
        rng = np.random.default_rng(n)
        a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
        got = kernel.run({"a": a, "b": b})["out"]
        assert np.array_equal(got, a + b), "elementwise result differs from NumPy"
        gpu, host = kernel.profile({"a": a, "b": b}, repeats=reps, timestamp_period_ns=period_ns)
        row = {"n": n, "ours_gpu_ms": med(gpu) * 1e3, "ours_host_ms": med(host) * 1e3,
               "ours_gbps": 12 * n / med(gpu) / 1e9}
        kernel.release()  # free this size's buffers before the next
        if torch is not None:
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            tc = torch.empty_like(ta)
            torch.add(ta, tb, out=tc)
            assert np.array_equal(tc.cpu().numpy(), a + b)
            tt = torch_time(torch, lambda: torch.add(ta, tb, out=tc), reps)
            row.update(torch_gpu_ms=med(tt) * 1e3, torch_gbps=12 * n / med(tt) / 1e9,
                       ratio_ours_over_torch_bw=row["ours_gbps"] / (12 * n / med(tt) / 1e9))
            del ta, tb, tc
        if peer is not None:
            row.update(peer_wgpu.elementwise(peer, n, reps))
        rows.append(row)
        log(f"elementwise n={n}: {row}")
    return rows


def seed_numpy(x, w1, b1, w2, go, d, h):
    W1, W2 = w1.reshape(d, h), w2.reshape(h, d)
    hid = b1 + x @ W1
    act = np.maximum(np.float32(0.5) * hid, np.float32(2) * hid)
    return W1 @ ((W2 @ go) * act)


def bench_seed(dev, sizes, reps, torch, optimize_modes, peer=None) -> list[dict]:
    from vyre_vk.ops import get

    entry = get("vyre-libs::nn::mlp_backward")
    rows = []
    for d, h in sizes:
        rng = np.random.default_rng(d * h)
        x = rng.standard_normal(d, dtype=np.float32)
        w1 = (rng.standard_normal(d * h, dtype=np.float32) / np.float32(np.sqrt(d)))
        b1 = rng.standard_normal(h, dtype=np.float32) * np.float32(0.1)
        w2 = (rng.standard_normal(h * d, dtype=np.float32) / np.float32(np.sqrt(h)))
        go = rng.standard_normal(d, dtype=np.float32)
        want = seed_numpy(*(v.astype(np.float64) for v in (x, w1, b1, w2, go)), d, h)
        scale = float(np.max(np.abs(want)))
        row = {"model_dim": d, "hidden_dim": h}
        npt = timed(lambda: seed_numpy(x, w1, b1, w2, go, d, h), max(3, reps))
        row["numpy_ms"] = med(npt) * 1e3
        program = entry.build_with(model_dim=d, hidden_dim=h)
        resident = {"x": x, "b1": b1, "grad_out": go, "w1": dev.array(w1), "w2": dev.array(w2)}
        for mode in optimize_modes:
            kernel = dev.compile(program, **({} if mode is None else {"optimize": mode}))
            got = kernel.run(resident)["grad_x"]
            err = float(np.max(np.abs(got - want))) / scale
            assert err < 1e-3, f"seed op {d}x{h} optimize={mode}: relative error {err}"
            n = 1 if d * d * h > 2**31 and mode is False else reps  # the naive O(M^2 H) kernel is slow
            t = timed(lambda: kernel.run(resident), n)
            key = "ours" if mode is None else f"ours_opt_{'on' if mode else 'off'}"
            row[f"{key}_ms"] = med(t) * 1e3
            row[f"{key}_rel_err"] = err
            if hasattr(kernel, "release"):
                kernel.release()
        if torch is not None:
            tx, tw1, tb1, tw2, tgo = (torch.from_numpy(v).cuda() for v in (x, w1, b1, w2, go))
            W1, W2 = tw1.view(d, h), tw2.view(h, d)

            def tfn():
                hid = tb1 + tx @ W1
                act = torch.maximum(0.5 * hid, 2.0 * hid)
                return W1 @ ((W2 @ tgo) * act)

            err = float(np.max(np.abs(tfn().cpu().numpy() - want))) / scale
            assert err < 1e-3, f"torch seed op relative error {err}"
            row["torch_ms"] = med(torch_time(torch, tfn, max(3, reps))) * 1e3
        if peer is not None:
            row.update(peer_wgpu.seed(peer, x, w1, b1, w2, go, want, max(3, reps)))
        rows.append(row)
        log(f"seed {d}x{h}: {row}")
    return rows


def bench_compile(reps) -> dict:
    from vyre_vk import spirv
    from vyre_vk.compile import Options, clear_cache, compile_program
    from vyre_vk.ops import get

    program = get("vyre-libs::nn::mlp_backward").build()

    def ir_to_spirv():  # through the compile front door, its own cache cleared: the stages, not a lookup
        clear_cache()
        compile_program(program, Options(passes=False))

    cold, warm = [], []
    old = os.environ.get("VYRE_VK_CACHE_DIR")
    try:
        for _ in range(reps):
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["VYRE_VK_CACHE_DIR"] = tmp
                spirv.clear_memory_cache()
                cold += timed(ir_to_spirv, 1)
                spirv.clear_memory_cache()
                warm += timed(ir_to_spirv, 1)
    finally:
        if old is None:
            os.environ.pop("VYRE_VK_CACHE_DIR", None)
        else:
            os.environ["VYRE_VK_CACHE_DIR"] = old
        spirv.clear_memory_cache()
    return {"cold_ms": med(cold) * 1e3, "warm_disk_ms": med(warm) * 1e3}


def supports_optimize(dev) -> bool:
    import inspect

    return "optimize" in inspect.signature(dev.compile).parameters


def plot(result: dict, path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    lat = result["latency"]
    names = [k for k, v in lat.items() if v is not None]
    axes[0].barh(names, [lat[k] for k in names])
    axes[0].set_xlabel("us (median)")
    axes[0].set_title("submit + wait")
    ew = result["elementwise"]
    xs = [r["n"] for r in ew]
    axes[1].plot(xs, [r["ours_gbps"] for r in ew], "o-", label="vyre-vk")
    if ew and "torch_gbps" in ew[0]:
        axes[1].plot(xs, [r["torch_gbps"] for r in ew], "s-", label="PyTorch")
    axes[1].set_xscale("log", base=2)
    axes[1].set_ylabel("GB/s")
    axes[1].set_title("elementwise f32 add")
    axes[1].legend()
    seed = result["seed"]
    labels = [f"{r['model_dim']}x{r['hidden_dim']}" for r in seed]
    keys = [k for k in ("ours_opt_off_ms", "ours_opt_on_ms", "ours_ms", "numpy_ms", "torch_ms")
            if seed and k in seed[0]]
    for j, k in enumerate(keys):
        axes[2].bar(np.arange(len(seed)) + j * 0.8 / len(keys), [r[k] for r in seed], 0.8 / len(keys), label=k)
    axes[2].set_xticks(np.arange(len(seed)) + 0.4 - 0.4 / max(1, len(keys)), labels)
    axes[2].set_yscale("log")
    axes[2].set_ylabel("ms")
    axes[2].set_title("seed op mlp_backward")
    axes[2].legend(fontsize=7)
    fig.suptitle(f"vyre-vk on {result['device']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds on lavapipe (used by a test)")
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    ap.add_argument("--probe", type=Path, help="prebuilt tools/bench/vk_submit_probe (else built with gcc)")
    ap.add_argument("--seed-sizes", default=None, help="e.g. 256x1024,1024x4096,2048x8192")
    ap.add_argument("--elementwise-sizes", default=None, help="e.g. 20,26 (powers of two)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--skip", default="", help="comma list of sections to skip")
    ap.add_argument("--seed-modes", default="off,on",
                    help="the seed op's optimiser settings to time: off,on (default) or on alone (off takes seconds a run "
                         "at 2048x8192)")
    args = ap.parse_args(argv)
    from vyre_vk.runtime import Device

    smoke = args.smoke
    reps = args.reps or (3 if smoke else 20)
    ew_sizes = [1 << int(p) for p in (args.elementwise_sizes or ("12" if smoke else "20,26")).split(",")]
    seed_sizes = [tuple(int(v) for v in s.split("x")) for s in
                  (args.seed_sizes or ("16x64" if smoke else "256x1024,1024x4096,2048x8192")).split(",")]
    skip = set(filter(None, args.skip.split(",")))
    args.out.mkdir(parents=True, exist_ok=True)
    torch = torch_cuda()
    result: dict = {"python": platform.python_version(), "numpy": np.__version__,
                    "torch": getattr(torch, "__version__", None), "smoke": smoke}
    with Device() as dev:
        probe = run_probe(args.probe, dev.index)
        period = float(probe.get("timestamp_period_ns") or 1.0)
        result.update(device=dev.name, probe=probe, timestamp_period_ns=period)
        log(f"device {dev.name}; timestampPeriod {period} ns; torch {'yes' if torch else 'no'}")
        wanted = set(filter(None, args.seed_modes.split(",")))
        if not wanted or wanted - {"off", "on"}:
            raise SystemExit(f"--seed-modes {args.seed_modes!r}: not a comma list of off and on. Fix: e.g. --seed-modes on")
        modes = [m == "on" for m in ("off", "on") if m in wanted] if supports_optimize(dev) else [None]
        why = "skipped (--skip wgpu)" if "wgpu" in skip else peer_wgpu.available()
        peer = peer_wgpu.Peer() if why is None else None
        result["peers"] = {"wgpu": peer.name if peer else why,
                           "taichi": "not run: no taichi wheel for this Python" if sys.version_info >= (3, 12)
                           else "not run: taichi is not a dependency of this benchmark"}
        log(f"peers: {result['peers']}")
        result["latency"] = {} if "latency" in skip else bench_latency(dev, probe, 200 if smoke else 2000)
        if peer is not None and "latency" not in skip:
            result["latency"].update(peer_wgpu.latency(peer, 200 if smoke else 2000))
        log(f"latency: {result['latency']}")
        result["elementwise"] = [] if "elementwise" in skip else bench_elementwise(dev, ew_sizes, reps, period, torch,
                                                                                   peer)
        result["seed"] = [] if "seed" in skip else bench_seed(dev, seed_sizes, reps, torch, modes, peer)
    result["compile"] = {} if "compile" in skip else bench_compile(2 if smoke else 5)
    (args.out / "bench.json").write_text(json.dumps(result, indent=2))
    plotted = plot(result, args.out / "bench.png")
    print(f"device: {result['device']}  (python {result['python']}, numpy {result['numpy']}, torch {result['torch']})")
    print(f"  peers: {result['peers']}")
    for k, v in result["latency"].items():
        print(f"  latency {k:28} {v if v is None else f'{v:9.1f}'}")
    for r in result["elementwise"]:
        extra = (f"  torch {r['torch_gbps']:8.1f} GB/s  ratio {r['ratio_ours_over_torch_bw']:.2f}"
                 if "torch_gbps" in r else "")
        extra += f"  wgpu {r['wgpu_gbps']:8.1f} GB/s" if "wgpu_gbps" in r else ""
        print(f"  elementwise 2^{int(np.log2(r['n']))}: ours {r['ours_gbps']:8.1f} GB/s "
              f"({r['ours_gpu_ms']:.3f} ms GPU, {r['ours_host_ms']:.3f} ms host){extra}")
    for r in result["seed"]:
        cells = "  ".join(f"{k[:-3]} {v:10.3f} ms" for k, v in r.items() if k.endswith("_ms"))
        print(f"  seed {r['model_dim']}x{r['hidden_dim']}: {cells}")
    for k, v in result["compile"].items():
        print(f"  compile {k:12} {v:9.1f} ms")
    print(f"wrote {args.out / 'bench.json'}" + (f" and {args.out / 'bench.png'}" if plotted else " (no matplotlib: no plot)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
