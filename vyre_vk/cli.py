"""The ``vyre-vk`` command line.

    vyre-vk main                 the seed op on the default device, checked against the reference
    vyre-vk run OP [OP ...]|--all  registered ops' test vectors on reference and Vulkan: a table
    vyre-vk emit OP|FILE.json    GLSL + SPIR-V (+ disassembly) for offline use
    vyre-vk shaders [--check]    regenerate (or check) shaders/ for every registered op
    vyre-vk doctor               what is installed and which Vulkan devices work
    vyre-vk demo                 a hand-written GLSL kernel through pyshaderc and kp, vs NumPy
"""
from __future__ import annotations

import argparse
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SEED_OP = "vyre-libs::nn::mlp_backward"


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
    try:
        devices = kp_bridge.list_devices()
    except kp_bridge.KomputeError as e:
        print(f"ERROR: {e}")
        return 1
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


def _main_job(args: argparse.Namespace) -> int:
    from vyre_vk import reference
    from vyre_vk.ops import get
    from vyre_vk.runtime import Device
    from vyre_vk.testing.parity import compare
    from vyre_vk.testing.vectors import check_op

    entry = get(SEED_OP)
    ok = True
    with Device() as dev:
        print(f"device     [{dev.index}] {dev.name}")
        for case in check_op(entry, dev):
            print(f"{SEED_OP} registered case {case.index}: grad_x = {case.outputs['grad_x'].tolist()}")
            print(f"  reference vs expected: {'ok' if case.reference.ok else 'FAIL'}; "
                  f"vulkan vs expected: {'ok' if case.vulkan.ok else 'FAIL'}")
            ok &= case.ok
        d, h = args.model_dim, args.hidden_dim
        program = entry.build_with(model_dim=d, hidden_dim=h)
        rng = np.random.default_rng(args.seed)
        inputs = {"x": rng.standard_normal(d, dtype=np.float32),
                  "w1": rng.standard_normal(d * h, dtype=np.float32) / np.float32(np.sqrt(d)),
                  "b1": rng.standard_normal(h, dtype=np.float32),
                  "w2": rng.standard_normal(h * d, dtype=np.float32) / np.float32(np.sqrt(h)),
                  "grad_out": rng.standard_normal(d, dtype=np.float32)}
        t0 = time.perf_counter()
        kernel = dev.compile(program)
        t1 = time.perf_counter()
        got = kernel.run(inputs)
        t2 = time.perf_counter()
        report = compare(program, reference.run(program, inputs), got)
        print(f"{SEED_OP} at {d}x{h}: compile {1e3 * (t1 - t0):.1f} ms, run {1e3 * (t2 - t1):.1f} ms, "
              f"grad_x[:4] = {got['grad_x'][:4].tolist()}, worst {report.worst_ulps} ULP (window {report.ulp})")
        ok &= report.ok
    print("matches reference" if ok else "DOES NOT MATCH the reference")
    return 0 if ok else 1


def _run_ops(args: argparse.Namespace) -> int:
    from vyre_vk.ops import all_ops, get
    from vyre_vk.runtime import Device

    entries = all_ops() if args.all else [get(i) for i in args.ops]
    if not entries:
        print("no ops given. Fix: name op ids, or pass --all", file=sys.stderr)
        return 2
    from vyre_vk.testing.vectors import check_op

    failed = 0
    with Device() as dev:
        print(f"device: [{dev.index}] {dev.name}")
        width = max(len(e.id) for e in entries)
        print(f"{'op':{width}}  case  reference  vulkan  worst-ulp  window")
        for entry in entries:
            try:
                cases = check_op(entry, dev)
            except Exception as e:  # one broken op must not hide the others' results
                print(f"{entry.id:{width}}  -     ERROR: {type(e).__name__}: {e}")
                failed += 1
                continue
            for c in cases:
                worst = max(c.reference.worst_ulps, c.vulkan.worst_ulps)
                print(f"{entry.id:{width}}  {c.index:4}  {'pass' if c.reference.ok else 'FAIL':9}  "
                      f"{'pass' if c.vulkan.ok else 'FAIL':6}  {worst:9}  {c.vulkan.ulp:6}")
                for m in (*c.reference.mismatches, *c.vulkan.mismatches):
                    print(f"    {m}")
                failed += not c.ok
    print(f"{'all passed' if not failed else f'{failed} failed'}")
    return 1 if failed else 0


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", name).strip("_") or "program"


def _load_program(spec: str, overrides: list[str]):
    from vyre_vk.ir import Program
    from vyre_vk.ops import get

    if spec.endswith(".json") or Path(spec).is_file():
        if overrides:
            raise SystemExit("--arg applies to registered ops, not to program files")
        return Program.from_json(Path(spec).read_text()), _file_stem(Path(spec).stem)
    params = {}
    for kv in overrides:
        key, _, value = kv.partition("=")
        if not value.lstrip("-").isdigit():
            raise SystemExit(f"--arg {kv!r}: expected NAME=INTEGER")
        params[key] = int(value)
    return get(spec).build_with(**params), _file_stem(spec)


def emit_program(program, stem: str, out_dir: Path, *, disasm: bool = False, validate: bool = False) -> list[Path]:
    """Write ``stem.comp`` and ``stem.spv`` (and ``stem.spvasm``) for ``program``; return the paths."""
    from vyre_vk import spirv
    from vyre_vk.ir import validate as validate_program
    from vyre_vk.lower import lower

    validate_program(program)
    lowered = lower(program)
    words = spirv.compile_glsl(lowered.glsl, name=f"{stem}.comp", target_env=lowered.target_env)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.comp", out_dir / f"{stem}.spv"]
    paths[0].write_text(lowered.glsl)
    paths[1].write_bytes(words)
    tools_needed = (["spirv-dis"] if disasm else []) + (["spirv-val"] if validate else [])
    for tool in tools_needed:
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found. Fix: apt-get install spirv-tools (tools/bootstrap.sh does).")
    if disasm:
        paths.append(out_dir / f"{stem}.spvasm")
        subprocess.run(["spirv-dis", str(paths[1]), "-o", str(paths[2])], check=True)
    if validate:
        res = subprocess.run(["spirv-val", "--target-env", lowered.target_env, str(paths[1])], capture_output=True, text=True)
        if res.returncode:
            raise SystemExit(f"spirv-val rejected {paths[1]}:\n{res.stdout}{res.stderr}")
    return paths


def explain(program, device_class: str = "default") -> str:
    """Which optimiser passes change `program`, and why (one line per pass), plus the stages."""
    from vyre_vk.opt import coarsen_factor, optimize

    graph, reports = optimize(program, True, device_class=device_class)
    lines = [f"passes (device class {device_class}):"]
    lines += [f"  {'*' if r.changed else ' '} {r}" for r in reports]
    lines.append(f"result: {len(graph.stages)} kernel(s)" + (f", scratch {', '.join(f'{b.name}[{b.count}]' for b in graph.scratch)}"
                                                             if graph.scratch else ""))
    for k, st in enumerate(graph.stages):
        f = coarsen_factor(st)
        lines.append(f"  stage {k}: workgroup {tuple(st.workgroup_size)}"
                     + (f", {f} elements per invocation" if f > 1 else "")
                     + f", buffers {[b.name for b in st.buffers if not b.is_workgroup]}")
    return "\n".join(lines)


def _emit(args: argparse.Namespace) -> int:
    program, stem = _load_program(args.program, args.arg)
    if args.explain:
        print(explain(program, args.device_class))
    for path in emit_program(program, args.name or stem, Path(args.out), disasm=args.disasm,
                             validate=args.validate):
        print(path)
    if args.validate:
        print("spirv-val: ok")
    return 0


SHADERS_DIR = Path(__file__).resolve().parent.parent / "shaders"


def _shaders(args: argparse.Namespace) -> int:
    import tempfile

    from vyre_vk.ops import all_ops

    target = Path(args.dir)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        for entry in all_ops():
            emit_program(entry.build(), _file_stem(entry.id), fresh, validate=True)
        new = {p.name: p.read_bytes() for p in fresh.iterdir()}
        old = {p.name: p.read_bytes() for p in target.glob("*") if p.suffix in (".comp", ".spv")} \
            if target.is_dir() else {}
        drift = sorted(n for n in set(new) | set(old) if new.get(n) != old.get(n))
        if args.check:
            for name in drift:
                print(f"drift: {name} ({'missing' if name not in old else 'stale' if name in new else 'orphan'})")
            print("shaders/ is up to date" if not drift else
                  f"{len(drift)} file(s) differ. Fix: run `vyre-vk shaders` and commit shaders/.")
            return 1 if drift else 0
        target.mkdir(parents=True, exist_ok=True)
        for name in drift:
            if name in new:
                (target / name).write_bytes(new[name])
            else:
                (target / name).unlink()
        print(f"shaders/: {len(new)} files, {len(drift)} updated")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vyre-vk", description="Run vyre IR programs on Vulkan.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("main", help="the seed op on the default device, checked against the reference")
    p.add_argument("--model-dim", type=int, default=64)
    p.add_argument("--hidden-dim", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(fn=_main_job)
    p = sub.add_parser("run", help="run registered ops' test vectors on the reference and Vulkan")
    p.add_argument("ops", nargs="*", help="op ids, e.g. vyre-libs::nn::mlp_backward")
    p.add_argument("--all", action="store_true", help="every registered op")
    p.set_defaults(fn=_run_ops)
    p = sub.add_parser("emit", help="write GLSL and SPIR-V for a registered op or a program JSON file")
    p.add_argument("program", help="op id (e.g. vyre-libs::nn::mlp_backward) or path to a program .json")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=N", help="builder parameter override")
    p.add_argument("-o", "--out", default=".", help="output folder (default: .)")
    p.add_argument("--name", help="file stem (default: from the op id or file name)")
    p.add_argument("--disasm", action="store_true", help="also write the spirv-dis text (.spvasm)")
    p.add_argument("--validate", action="store_true", help="run spirv-val on the module")
    p.add_argument("--explain", action="store_true", help="also show which optimiser passes change the program and why")
    p.add_argument("--device-class", default="default", help="device class for --explain (nvidia, llvmpipe, ...)")
    p.set_defaults(fn=_emit)
    p = sub.add_parser("shaders", help="regenerate shaders/ for every registered op")
    p.add_argument("--check", action="store_true", help="only report drift (exit 1 if any)")
    p.add_argument("--dir", default=str(SHADERS_DIR))
    p.set_defaults(fn=_shaders)
    sub.add_parser("doctor", help="report versions, devices and the loop probe").set_defaults(fn=_doctor)
    p = sub.add_parser("demo", help="GLSL saxpy through pyshaderc and kp, checked against NumPy")
    p.add_argument("-n", type=int, default=100_003)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(fn=_demo)
    args = ap.parse_args(argv)
    from vyre_vk.ir import ProgramFormatError, ValidationError
    from vyre_vk.runtime import DeviceError, InputError, LaunchError

    try:
        return args.fn(args)
    except (ProgramFormatError, ValidationError, InputError, LaunchError, DeviceError, KeyError,
            OSError) as e:
        # User errors get their message (which ends with a Fix: hint), not a traceback.
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"vyre-vk: {type(e).__name__}: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
