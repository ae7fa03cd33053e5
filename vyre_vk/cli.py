"""The ``vyre-vk`` command line.

    vyre-vk doctor        what is installed and which Vulkan devices work
    vyre-vk demo          compile a GLSL kernel in-process, run it, check it against NumPy
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np


def _doctor(args: argparse.Namespace) -> int:
    import kp
    import pyshaderc

    from vyre_vk import __version__, spirv
    from vyre_vk.runtime import Device, DeviceError, kp_bridge
    from vyre_vk.runtime.device import default_index

    print(f"vyre-vk    {__version__}")
    print(f"python     {platform.python_version()} ({sys.executable})")
    print(f"numpy      {np.__version__}")
    print(f"kp         {kp.__version__}, patches: {', '.join(kp_bridge.patches()) or 'NONE (stock kp)'}")
    print(f"pyshaderc  {pyshaderc.__version__}, compiler {spirv.compiler_id()}")
    print(f"spirv cache {spirv.cache_dir()}")
    ok = True
    try:
        kp_bridge.require_patches()
    except kp_bridge.KomputeError as e:
        print(f"ERROR: {e}")
        ok = False
    devices = kp_bridge.list_devices()
    print(f"devices    {len(devices)}")
    for i, props in enumerate(devices):
        print(f"  [{i}] {props['device_name']}: max workgroup size {tuple(props['max_work_group_size'])}, "
              f"invocations {props['max_work_group_invocations']}, "
              f"count {tuple(props['max_work_group_count'])}, "
              f"timestamps {'yes' if props['timestamps_supported'] else 'no'}")
    if not devices:
        print("ERROR: no Vulkan device. Fix: install a driver (tools/bootstrap.sh installs Mesa lavapipe).")
        return 1
    try:
        index = default_index()
        with Device(index, allow_loop_limit=True) as dev:
            print(f"default    [{dev.index}] {dev.name}: {dev.probe}")
            ok = ok and dev.probe.passed
    except DeviceError as e:
        print(f"ERROR: {e}")
        ok = False
    return 0 if ok else 1


# The pre-pipeline main job: a real GLSL kernel, compiled in-process, dispatched
# through kp and checked against NumPy.
_SAXPY_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer A { float a[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    // precise: no contraction into an fma, so the result is the IEEE
    // float32 a*x then +y that NumPy computes.
    precise float ax = a[0] * x[i];
    if (i < uint(y.length())) { precise float r = ax + y[i]; y[i] = r; }
}
"""


def _demo(args: argparse.Namespace) -> int:
    from vyre_vk import spirv
    from vyre_vk.runtime import Device, kp_bridge

    n = args.n
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a = np.array([2.5], dtype=np.float32)
    t0 = time.perf_counter()
    words = spirv.compile_glsl(_SAXPY_GLSL, name="saxpy.comp")
    t1 = time.perf_counter()
    with Device() as dev:
        mgr = dev.manager
        tx, ty, ta = (kp_bridge.tensor(mgr, v) for v in (x, y, a))
        algo = kp_bridge.algorithm(mgr, [tx, ty, ta], words, (-(-n // 64), 1, 1))
        (mgr.sequence().record(kp_bridge.sync_device([tx, ty, ta]))
            .record(kp_bridge.dispatch(algo)).record(kp_bridge.sync_local([ty])).eval())
        got = ty.data().copy()
        print(f"device     {dev.name}")
    expected = a[0] * x + y  # float32 throughout: two IEEE roundings, as the shader
    print(f"saxpy      n={n}, compiled in {1e3 * (t1 - t0):.1f} ms, y[:4]={got[:4]}")
    bad = int(np.count_nonzero(got.view(np.uint32) != expected.view(np.uint32)))
    if bad:
        print(f"MISMATCH   {bad} of {n} elements differ from NumPy")
        return 1
    print("matches NumPy (bit-exact)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vyre-vk", description="Run vyre IR programs on Vulkan.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("doctor", help="report versions, devices and the loop probe").set_defaults(fn=_doctor)
    p = sub.add_parser("demo", help="GLSL saxpy through pyshaderc and kp, checked against NumPy")
    p.add_argument("-n", type=int, default=100_003)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(fn=_demo)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
