"""The ``vyre-vk`` command line.

    vyre-vk main                 the seed op on the default device, checked against the reference
    vyre-vk run OP [OP ...]|--all  registered ops' test vectors on reference and Vulkan: a table
    vyre-vk emit OP|FILE.json    per stage SPIR-V + GLSL (+ disassembly) and manifest.json (vyre_vk.emit);
                                 vyre_vk.aot runs such a folder with plain kp
    vyre-vk shaders [--check]    regenerate (or check) shaders/<op>/ for every registered op
    vyre-vk doctor               what is installed and which Vulkan devices work
    vyre-vk demo                 a hand-written GLSL kernel through pyshaderc and kp, vs NumPy
    vyre-vk list [PREFIX]        registered op ids, one a line

Errors a user can act on print ``vyre-vk: error: <message> Fix: <hint>`` and exit with the
code in EXIT_CODES; only a bug in vyre-vk itself prints a traceback.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from vyre_vk.emit import (SHADERS_DIR, CheckFailed, ToolMissing, UsageError, check_sizes, check_stem,  # noqa: F401
                           file_stem, write_atomic)
from vyre_vk.errors import EXIT_CHECK_FAILED, EXIT_ENVIRONMENT, EXIT_OK, EXIT_USAGE, VyreError

SEED_OP = "vyre-libs::nn::mlp_backward"

EXIT_CODES = f"""exit codes:
  {EXIT_OK}  ok
  {EXIT_CHECK_FAILED}  a check failed (a result differs from the reference, shaders/ drift, spirv-val)
  {EXIT_USAGE}  usage or input error (bad flag, unknown op, malformed program file)
  {EXIT_ENVIRONMENT}  environment (no Vulkan device or driver, unpatched kp, missing tool, cache)"""


def _positive_int(text: str) -> int:
    # argparse names the flag in its message and exits 2, before any work.
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}. Fix: pass an integer >= 1.")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"expected a seed in [0, 2^64), got {text!r}. Fix: pass e.g. --seed 0.")
    return value


#: Largest program file the CLI reads (a registered op's JSON is at most a few hundred KiB).
MAX_PROGRAM_FILE_BYTES = 64 << 20


def _doctor(args: argparse.Namespace) -> int:
    import kp
    import pyshaderc

    from vyre_vk import __version__, spirv
    from vyre_vk.runtime import Device, kp_bridge
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
        print(f"ERROR: {e}", file=sys.stderr)
        ok = False
    try:
        devices = kp_bridge.list_devices()
    except kp_bridge.KomputeError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    print(f"devices    {len(devices)}")
    for i, props in enumerate(devices):
        print(f"  [{i}] {props['device_name']}: max workgroup size {tuple(props['max_work_group_size'])}, "
              f"invocations {props['max_work_group_invocations']}, "
              f"count {tuple(props['max_work_group_count'])}, "
              f"timestamps {'yes' if props['timestamps_supported'] else 'no'}")
    if not devices:
        print("ERROR: no Vulkan device. Fix: install a driver (tools/bootstrap.sh installs Mesa lavapipe).", file=sys.stderr)
        return EXIT_ENVIRONMENT
    try:
        index = default_index()
        with Device(index, allow_loop_limit=True) as dev:
            print(f"default    [{dev.index}] {dev.name}: {dev.probe}")
            for probe in (dev.fma, dev.float64, dev.native_math()):
                if probe is not None:
                    print(f"           {probe}")
            ok = ok and dev.probe.passed
    except VyreError as e:  # DeviceError, KomputeError: the device, not the user
        print(f"ERROR: {e}", file=sys.stderr)
        ok = False
    return EXIT_OK if ok else EXIT_ENVIRONMENT


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
        return EXIT_CHECK_FAILED
    print("matches NumPy (bit-exact)")
    return EXIT_OK


def _main_job(args: argparse.Namespace) -> int:
    from vyre_vk import reference
    from vyre_vk.ops import get
    from vyre_vk.runtime import Device
    from vyre_vk.testing.parity import compare
    from vyre_vk.testing.vectors import check_op

    entry = get(SEED_OP)
    d, h = args.model_dim, args.hidden_dim
    program = _build_op(entry, {"model_dim": d, "hidden_dim": h})  # a size it cannot take: exit 2 before any work
    ok = True
    with Device() as dev:
        print(f"device     [{dev.index}] {dev.name}")
        for case in check_op(entry, dev):
            print(f"{SEED_OP} registered case {case.index}: grad_x = {case.outputs['grad_x'].tolist()}")
            print(f"  reference vs expected: {'ok' if case.reference.ok else 'FAIL'}; "
                  f"vulkan vs expected: {'ok' if case.vulkan.ok else 'FAIL'}")
            ok &= case.ok
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
    return EXIT_OK if ok else EXIT_CHECK_FAILED


def _run_ops(args: argparse.Namespace) -> int:
    from vyre_vk.ops import all_ops, get
    from vyre_vk.runtime import Device

    if not args.all and not args.ops:
        raise UsageError("no ops given. Fix: name op ids (`vyre-vk list` prints them), or pass --all.")
    entries = all_ops() if args.all else [get(i) for i in args.ops]  # every id checked before the device opens
    from vyre_vk.testing.vectors import check_op

    failed = 0
    with Device() as dev:
        print(f"device: [{dev.index}] {dev.name}" + (f"; fast precision, {dev.native_math()}"
                                                        if args.precision == "fast" else ""))
        width = max(len(e.id) for e in entries)
        print(f"{'op':{width}}  case  reference  vulkan  worst-ulp  window")
        for entry in entries:
            try:
                cases = check_op(entry, dev, args.precision)
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
    return EXIT_CHECK_FAILED if failed else EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from vyre_vk.ops import all_ops

    ids = [e.id for e in all_ops() if e.id.startswith(args.prefix)]
    if not ids:
        raise UsageError(f"no registered op id starts with `{args.prefix}`. Fix: run `vyre-vk list` for every id.")
    print("\n".join(ids))
    return EXIT_OK


def _parse_overrides(entry: Any, overrides: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings as builder keyword arguments, typed like the registered defaults."""
    params: dict[str, Any] = {}
    for kv in overrides:
        key, sep, value = kv.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise UsageError(f"--arg {kv!r}: expected NAME=VALUE, e.g. model_dim=64. "
                             f"Fix: use one of {sorted(entry.params) or 'no parameters'} as NAME.")
        default = entry.params.get(key)
        kind = type(default) if isinstance(default, (int, float)) and not isinstance(default, bool) else None
        try:
            # An unknown NAME keeps its text: build_with rejects it with the op's valid names.
            params[key] = kind(value) if kind else value
        except ValueError:
            raise UsageError(f"--arg {kv!r}: {key} takes {'an integer' if kind is int else 'a number'} "
                             f"(registered: {default!r}). Fix: pass e.g. --arg {key}={default!r}.") from None
    return params


def _build_op(entry: Any, params: dict[str, Any]):
    """`entry` built with `params`, validated, so a size the op cannot take is a usage error here."""
    from vyre_vk.ir import ValidationError, validate
    from vyre_vk.ops.registry import OpParamError, format_params

    program = entry.build_with(**params)
    if params:
        try:
            validate(program)
        except ValidationError as e:
            why = str(e).rpartition("Fix:")[0].strip() or str(e)  # its hint is for op authors, not here
            raise OpParamError(f"op `{entry.id}` with {format_params(params)} builds a program that does not "
                               f"validate: {why} Fix: pass sizes the op supports (registered defaults: "
                               f"{format_params(entry.params)}).") from e
    return program


def _read_program_file(spec: str):
    from vyre_vk.ir import Program, ProgramFormatError

    path = Path(spec)
    if path.is_dir():
        raise UsageError(f"{spec} is a directory. Fix: name a program .json file (Program.to_json() writes one).")
    try:
        if path.exists() and not path.is_file():  # a FIFO or device (/dev/zero) is read without end
            raise UsageError(f"{spec} is not a regular file. Fix: name a program .json file.")
        with open(path, "rb") as f:
            data = f.read(MAX_PROGRAM_FILE_BYTES + 1)
        if len(data) > MAX_PROGRAM_FILE_BYTES:
            raise UsageError(f"{spec} is over {MAX_PROGRAM_FILE_BYTES >> 20} MiB, more than any program file. "
                             "Fix: name a program .json file (Program.to_json() writes one).")
    except FileNotFoundError:
        raise UsageError(f"no such file: {spec}. Fix: check the path, or name a registered op "
                         "(`vyre-vk list` prints them).") from None
    except OSError as e:
        raise UsageError(f"cannot read {spec}: {e.strerror or e}. Fix: check the file's permissions.") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        err = ProgramFormatError(f"not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}). "
                                 "Fix: save the program as UTF-8 JSON (Program.to_json() writes it).")
        err.where = spec
        raise err from None
    try:
        return Program.from_json(text)
    except ProgramFormatError as e:
        e.where = e.where or spec  # the message locates the problem in the JSON; say which file
        raise


def _load_program(spec: str, overrides: list[str]):
    from vyre_vk.ops import get

    # Op ids use `::` and never `/`; anything path-like is a program file.
    if spec.endswith(".json") or "/" in spec or os.sep in spec or Path(spec).exists():
        if overrides:
            raise UsageError("--arg applies to registered ops, not to program files. "
                             "Fix: drop --arg, or name a registered op instead of a file.")
        return _read_program_file(spec), file_stem(Path(spec).stem), None
    entry = get(spec)
    return _build_op(entry, _parse_overrides(entry, overrides)), file_stem(spec), entry.id


def _native_list(text: str) -> tuple[str, ...]:
    """``--native-math div,exp`` -> ("div", "exp"); ``none`` -> (); argparse reports a bad name."""
    from vyre_vk.lower.fastmath import check_native

    names = [] if text.strip() == "none" else [n.strip() for n in text.split(",") if n.strip()]
    try:
        return check_native(names)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _parse_sizes(specs: Sequence[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for kv in specs:
        key, _, value = kv.partition("=")
        try:
            sizes[key.strip()] = int(value)
        except ValueError:
            raise UsageError(f"--size {kv!r}: expected NAME=COUNT with an integer COUNT, e.g. x=1024. "
                             "Fix: name a buffer of the program and its element count.") from None
    return sizes


def _emit(args: argparse.Namespace) -> int:
    from vyre_vk.compile import (FLOAT64_BY_CLASS, FUSED_FMA_BY_CLASS, NATIVE_MATH_BY_CLASS, SHARED_MEMORY_BY_CLASS,
                                 STORAGE_8BIT_BY_CLASS, DeviceLimits, Options, compile_program)
    from vyre_vk.emit import emit

    stem = check_stem(args.name) if args.name is not None else None  # refused before any work
    sizes = _parse_sizes(args.size)
    program, default_stem, op = _load_program(args.program, args.arg)
    check_sizes(program, sizes)
    fused = FUSED_FMA_BY_CLASS[args.device_class] if args.fma is None else args.fma == "fused"
    float64 = FLOAT64_BY_CLASS[args.device_class] if args.float64 is None else args.float64 == "on"
    byte8 = STORAGE_8BIT_BY_CLASS[args.device_class] if args.storage_8bit is None else args.storage_8bit == "on"
    if args.native_math is not None and args.precision != "fast":
        raise UsageError("--native-math applies to --precision fast only. Fix: add --precision fast, or drop it.")
    native = NATIVE_MATH_BY_CLASS[args.device_class] if args.native_math is None else args.native_math
    limits = replace(DeviceLimits(), fused_fma=fused, float64=float64, storage_8bit=byte8,
                     native_math=native if args.precision == "fast" else (),
                     shared_memory_bytes=SHARED_MEMORY_BY_CLASS[args.device_class])
    compiled = compile_program(program, Options(passes=not args.as_written, device_class=args.device_class,
                                                limits=limits, precision=args.precision))
    if args.explain:
        print(compiled.explain())
    done = emit(compiled, stem or default_stem, Path(args.out), op=op, sizes=sizes, disasm=args.disasm,
                validate=args.validate)
    print(done.summary())
    if args.validate:
        print(f"spirv-val: ok ({len(compiled.stages)} stage(s))")
    return EXIT_OK


def _shaders(args: argparse.Namespace) -> int:
    from vyre_vk.emit import regenerate_shaders

    result = regenerate_shaders(Path(args.dir), check=args.check)
    if args.check:
        for name in result.drift:
            state = "missing" if name not in result.old else "stale" if name in result.new else "orphan"
            print(f"drift: {name} ({state})")
        print("shaders/ is up to date" if not result.drift else
              f"{len(result.drift)} file(s) differ. Fix: run `vyre-vk shaders` and commit shaders/.")
        return EXIT_CHECK_FAILED if result.drift else EXIT_OK
    print(f"shaders/: {len(result.new)} files, {len(result.drift)} updated")
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    """argparse, with a Fix: hint on its usage errors like every other vyre-vk error."""

    def error(self, message: str):  # type: ignore[override]
        super().error(message if "Fix:" in message else f"{message}. Fix: see `{self.prog} --help`.")


def build_parser() -> argparse.ArgumentParser:
    from vyre_vk.compile import PRECISIONS
    from vyre_vk.opt.dispatch import BEST_LOCAL_SIZE  # its keys are the device classes opt tunes for

    fmt = {"epilog": EXIT_CODES, "formatter_class": argparse.RawDescriptionHelpFormatter}
    ap = _Parser(prog="vyre-vk", description="Run vyre IR programs on Vulkan.", **fmt)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("main", help="the seed op on the default device, checked against the reference", **fmt)
    p.add_argument("--model-dim", type=_positive_int, default=64)
    p.add_argument("--hidden-dim", type=_positive_int, default=256)
    p.add_argument("--seed", type=_seed, default=0)
    p.set_defaults(fn=_main_job)
    p = sub.add_parser("run", help="run registered ops' test vectors on the reference and Vulkan", **fmt)
    p.add_argument("ops", nargs="*", help="op ids, e.g. vyre-libs::nn::mlp_backward")
    p.add_argument("--all", action="store_true", help="every registered op")
    p.add_argument("--precision", choices=PRECISIONS, default="exact",
                   help="Vulkan's precision: exact (the reference's bits, default) or fast (compared by its "
                        "bound, docs/PRECISION.md)")
    p.set_defaults(fn=_run_ops)
    p = sub.add_parser("list", help="registered op ids, one a line", **fmt)
    p.add_argument("prefix", nargs="?", default="", help="only ids starting with this, e.g. vyre-libs::nn")
    p.set_defaults(fn=_list)
    p = sub.add_parser("emit", help="write the stages' SPIR-V and GLSL plus manifest.json (what the runtime runs)",
                       **fmt)
    p.add_argument("program", help="op id (e.g. vyre-libs::nn::mlp_backward) or path to a program .json")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help="builder parameter override")
    p.add_argument("-o", "--out", default=".", help="output folder (default: .)")
    p.add_argument("--name", help="file stem (default: from the op id or file name); no path separators")
    p.add_argument("--as-written", action="store_true", help="no optimiser passes: one stage, the program as given")
    p.add_argument("--size", action="append", default=[], metavar="NAME=COUNT",
                   help="element count of a buffer for the manifest's concrete grids (default: declared counts)")
    p.add_argument("--disasm", action="store_true", help="also write the spirv-dis text (.spvasm) per stage")
    p.add_argument("--validate", action="store_true", help="run spirv-val on every stage")
    p.add_argument("--explain", action="store_true", help="also show which optimiser passes change the program and why")
    p.add_argument("--device-class", default="default", choices=sorted(BEST_LOCAL_SIZE),
                   help="device class the optimiser tunes for (default: default)")
    p.add_argument("--fma", choices=("fused", "unfused"), default=None,
                   help="the target's fma() rounds once (fast exact division; the runner probes the device "
                        "and refuses one that differs) or not (default: fused for nvidia, else unfused)")
    p.add_argument("--float64", choices=("on", "off"), default=None,
                   help="exp and tanh in double, for a target with shaderFloat64 (the runner refuses one "
                        "without); default: on for nvidia, amd and llvmpipe, else off")
    p.add_argument("--precision", choices=PRECISIONS, default="exact",
                   help="exact: the reference's bits (default); fast: plain f32 arithmetic and measured device "
                        "builtins, within the bounds docs/PRECISION.md states")
    p.add_argument("--native-math", type=_native_list, default=None, metavar="LIST",
                   help="with --precision fast: builtins to use, comma-separated from div, exp, sqrt, tanh, or "
                        "'none' (the runner measures them and refuses a device outside vyre's windows); default: "
                        "those measured within the windows on the device class (llvmpipe: div,exp,sqrt)")
    p.add_argument("--storage-8bit", choices=("on", "off"), default=None,
                   help="byte buffers stored a byte at a time, for a target with storageBuffer8BitAccess (the "
                        "runner refuses one without); default: on for every class but default")
    p.set_defaults(fn=_emit)
    p = sub.add_parser("shaders", help="regenerate shaders/<op>/ (emit's output) for every registered op", **fmt)
    p.add_argument("--check", action="store_true", help="only report drift (exit 1 if any)")
    p.add_argument("--dir", default=str(SHADERS_DIR))
    p.set_defaults(fn=_shaders)
    sub.add_parser("doctor", help="report versions, devices and the loop probe (exit 3 if none works)",
                   **fmt).set_defaults(fn=_doctor)
    p = sub.add_parser("demo", help="GLSL saxpy through pyshaderc and kp, checked against NumPy", **fmt)
    p.add_argument("-n", type=_positive_int, default=100_003)
    p.add_argument("--seed", type=_seed, default=0)
    p.set_defaults(fn=_demo)
    return ap


def _error(message: str) -> None:
    print(f"vyre-vk: error: {message}", file=sys.stderr)


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)  # usage errors: argparse prints them and exits 2
    try:
        return args.fn(args)
    except VyreError as e:
        # User and environment errors get their message (ending with a Fix: hint), not a traceback.
        where = f"{e.where}: " if e.where and e.where not in str(e) else ""
        _error(f"{where}{e}")
        return e.exit_code
    except MemoryError:
        _error("out of memory. Fix: use smaller sizes, or free memory on this machine.")
        return EXIT_ENVIRONMENT
    except ModuleNotFoundError as e:
        if e.name not in ("kp", "pyshaderc"):
            raise
        _error(f"the {e.name} module is not installed. Fix: run tools/bootstrap.sh.")
        return EXIT_ENVIRONMENT
    except BrokenPipeError:
        # The reader went away (`vyre-vk list | head`): stop quietly, without the flush error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as e:
        _error(f"{e}. Fix: check the path, its permissions and free space.")
        return EXIT_ENVIRONMENT


if __name__ == "__main__":
    sys.exit(main())
