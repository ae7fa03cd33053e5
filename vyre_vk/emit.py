"""Offline artefacts: what ``vyre-vk emit`` and ``vyre-vk shaders`` write, the stages the runtime runs.

A program is compiled through the one front door (:func:`vyre_vk.compile.compile_program`,
optimised unless ``Options(passes=False)``), then written as one ``<stem>.stage<k>.spv`` and
``.comp`` per stage plus ``manifest.json`` (docs/manifest.md): buffers, scratch, per-stage
bindings and trap layout, the dispatch/barrier list, the grid rule and canonicalisation.
:mod:`vyre_vk.aot` runs such a folder with plain Kompute.

Example:
    >>> import tempfile
    >>> from vyre_vk.emit import emit_program
    >>> from vyre_vk.ops import get
    >>> out = emit_program(get("vyre-libs::nn::mlp_backward").build(), "mlp", Path(tempfile.mkdtemp()))
    >>> [p.name for p in out.files][-1], out.manifest["schema_version"], len(out.manifest["stages"])
    ('manifest.json', 1, 3)
"""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional

import numpy as np

from vyre_vk.errors import EXIT_CHECK_FAILED, EnvironmentProblem, VyreError

if TYPE_CHECKING:
    from vyre_vk.compile import Compiled, Options
    from vyre_vk.ir import Program

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
TRAP_LAYOUT = ["flag: 0 = no trap, else the first trap was recorded",
               "code: a key of `codes`", "invocation: gl_GlobalInvocationID.x of the trapping invocation",
               "address: the element index the trapping operation touched (0 if none)"]
GRID_RULE = ("invocations = max(1, element counts of the stage's `size_from` buffers as bound (scratch at its "
             "declared count)); size_from = the stage's result buffers, or every buffer it binds if it uses "
             "workgroup memory or atomics or has no result buffer; workgroups = ceil(invocations / (lx*ly*lz)); "
             "1-D local size: (workgroups, 1, 1); k > 1 axes with local size > 1: ceil(workgroups ** (1/k)) "
             "(float64) on each of them, 1 on the others; finally x = ceil(x / factor).")
CANON_RULE = ("f32 canonical form: any NaN -> 0x7FC00000; a subnormal (exponent bits 0, mantissa != 0) -> "
              "zero of the same sign; every other value unchanged.")


class UsageError(VyreError):
    """A bad command line or input file, caught before any work is done."""


class CheckFailed(VyreError):
    """A check the user asked for failed (spirv-val rejected the module)."""

    exit_code = EXIT_CHECK_FAILED


class ToolMissing(EnvironmentProblem):
    """An external program the command needs (spirv-dis, spirv-val) is not installed."""


def file_stem(name: str) -> str:
    """An op id or file name as a file stem (also a valid --name, see :func:`check_stem`).

    >>> file_stem("vyre-libs::nn::mlp_backward")
    'vyre-libs__nn__mlp_backward'
    """
    return re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9_.-]+", "__", name)).strip("_.-") or "program"


# A file stem, never a path: no separators, no '..', no leading dot or dash.
_SAFE_STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,199}")


def check_stem(name: str) -> str:
    if not _SAFE_STEM.fullmatch(name) or ".." in name:
        raise UsageError(f"--name {name!r} is not a plain file stem (letters, digits, _ . + -; no path "
                         "separators, no '..'). Fix: pass a stem such as `mlp`, and choose the folder with -o.")
    return name


def output_error(e: OSError, where: Path) -> VyreError:
    what = f"cannot write {where}: {e.strerror or e}."
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS):
        return EnvironmentProblem(f"{what} Fix: free space on that disk, or choose another folder with -o.")
    return UsageError(f"{what} Fix: choose a writable folder with -o.")


def write_atomic(path: Path, data: bytes) -> None:
    """Write `path` via a temporary file in the same folder and os.replace: all or nothing."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0o022)
        os.umask(umask)
        # mkstemp makes 0600; keep the old file's mode, or what open() would have given a new one.
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_sizes(program: "Program", sizes: Mapping[str, int]) -> dict[str, int]:
    """Bound element counts for the concrete grids: declared counts, overridden by ``sizes``."""
    bound = {b.name: b for b in program.buffers if not b.is_workgroup}
    for name, n in sizes.items():
        b = bound.get(name)
        if b is None:
            raise UsageError(f"--size {name}={n}: the program binds no buffer `{name}`. "
                             f"Fix: use one of {sorted(bound) or 'no buffers'}.")
        if n < max(b.count, 1):
            raise UsageError(f"--size {name}={n}: `{name}` declares {b.count} elements. "
                             f"Fix: pass a count >= {max(b.count, 1)}.")
    return {n: int(sizes.get(n, b.count)) for n, b in bound.items()}


def _stage_grid(st, names: set) -> dict:
    """The grid rule's inputs for one stage (what vyre_vk.ir.grid.dispatch_grid reads)."""
    from vyre_vk.ir.grid import has_workgroup_or_atomic as _has_workgroup_or_atomic

    bound = [b for b in st.program.buffers if not b.is_workgroup]
    results = [b.name for b in bound if b.is_result]
    full = not results or _has_workgroup_or_atomic(st.program)
    size_from = [b.name for b in bound] if full else results
    assert set(size_from) <= names, f"stage buffers {size_from} outside the program's and scratch"
    return {"size_from": size_from, "factor": st.factor}


def _buffer(b, role: str) -> dict:
    return {"name": b.name, "binding": b.binding, "dtype": b.element.value, "storage": b.element.numpy.name,
            "count": b.count, "access": b.access.value, "role": role}


def build_manifest(compiled: "Compiled", stem: str, sizes: Optional[Mapping[str, int]] = None,
                   op: Optional[str] = None) -> dict:
    """The manifest (schema 1, docs/manifest.md) of ``compiled`` written as ``stem``'s stage files."""
    from vyre_vk import __version__
    from vyre_vk.aot import formula_grid
    from vyre_vk.lower import TRAP_WORDS
    from vyre_vk.lower.fastmath import NATIVE_FUNCS, NATIVE_WINDOW_ULP
    from vyre_vk.runtime.native_math import NATIVE_PROBE_CASES, PER_FUNC
    from vyre_vk.runtime.probes import PROBE_CASES, PROBE_LOCAL_SIZE

    from vyre_vk.compile.stage import shared_bytes

    program, opts = compiled.program, compiled.options
    counts = check_sizes(program, sizes or {})
    bound = [b for b in program.buffers if not b.is_workgroup]
    buffers = []
    for b in bound:
        role = "input" if b.is_input and not b.is_result else "inout" if b.is_input else "output"
        buffers.append({**_buffer(b, role), "output_byte_range": list(b.output_byte_range)
                        if b.output_byte_range is not None else None})
    scratch = [{"name": s.name, "dtype": s.element.value, "storage": s.element.numpy.name,
                "count": max(s.count, 1)} for s in compiled.scratch]
    names = {b.name for b in bound} | {s.name for s in compiled.scratch}
    unsized = sorted(n for n, c in counts.items() if c < 1)
    concrete = None if unsized else compiled.grids(counts)
    stages = []
    for k, st in enumerate(compiled.stages):
        low = st.lowered
        grid = {**_stage_grid(st, names), "for_sizes": list(concrete[k]) if concrete else None}
        trap = None if low.trap_binding is None else {
            "binding": low.trap_binding, "words": TRAP_WORDS, "dtype": "u32", "layout": TRAP_LAYOUT,
            "codes": {str(c): why for c, why in sorted(low.trap_codes.items())}}
        stages.append({"index": k, "spirv": f"{stem}.stage{k}.spv", "comp": f"{stem}.stage{k}.comp",
                       "entry_point": "main", "target_env": low.target_env, "local_size": list(st.local_size),
                       "factor": st.factor,
                       "bindings": [_binding(b) for b in compiled.bindings(k)],
                       "trap": trap, "grid": grid, "reads": sorted(st.reads), "writes": sorted(st.writes),
                       "shared_memory_bytes": shared_bytes(st.program, low),
                       # u8/i8 buffers: constant_id k = the element (byte) count bound to the k-th name
                       **({"spec_constants": [{"constant_id": i, "buffer": name, "value": "count"}
                                              for i, name in enumerate(low.byte_lengths)]} if low.byte_lengths else {})})
    manifest = {
        "format": "vyre-vk-manifest", "schema_version": SCHEMA_VERSION, "vyre_vk_version": __version__,
        "op": op or program.entry_op_id, "program_hash": program.content_hash(), "name": stem,
        "options": {"passes": opts.passes if isinstance(opts.passes, bool) else sorted(opts.passes),
                    "device_class": opts.device_class, "precision": opts.precision,
                    "limits": {"shared_memory_bytes": opts.limits.shared_memory_bytes,
                               "workgroup_invocations": opts.limits.workgroup_invocations,
                               "workgroup_size": list(opts.limits.workgroup_size),
                               "storage_buffer_bytes": opts.limits.storage_buffer_bytes,
                               "fused_fma": opts.limits.fused_fma, "float64": opts.limits.float64,
                               "storage_8bit": opts.limits.storage_8bit,
                               "native_math": list(opts.limits.native_math if opts.precision == "fast" else ())}},
        # shaders that rely on a fused fma() carry the probe the runner checks a device with
        "fma_probe": {"spirv": f"{stem}.fma_probe.spv", "cases": f"{stem}.fma_probe.f32", "count": PROBE_CASES,
                      "local_size": PROBE_LOCAL_SIZE, "layout": "a, b, then a / b correctly rounded: count f32 each"}
        if opts.limits.fused_fma else None,
        # fast-precision shaders that use device builtins carry the probe that measures them
        "native_probe": {"spirv": f"{stem}.native_probe.spv", "cases": f"{stem}.native_probe.f32",
                         "count": NATIVE_PROBE_CASES, "local_size": PROBE_LOCAL_SIZE, "per_function": PER_FUNC,
                         "order": list(NATIVE_FUNCS), "windows": dict(NATIVE_WINDOW_ULP),
                         "functions": list(opts.limits.native_math),
                         "layout": "a, b, then float64's result rounded to f32: count f32 each; block k of "
                                   "per_function results is order[k]'s"}
        if opts.precision == "fast" and opts.limits.native_math else None,
        "buffers": buffers, "scratch": scratch, "stages": stages,
        "ops": [{"op": "barrier", "buffers": list(arg)} if kind == "barrier" else {"op": "dispatch", "stage": arg}
                for kind, arg in compiled.ops],
        "grid_rule": GRID_RULE, "sizes": counts, "unsized": unsized,
        "canonicalization": {
            "rule": CANON_RULE,
            "on_upload": [b["name"] for b in buffers if b["role"] == "inout" and b["dtype"] == "f32"],
            "why": ("the shaders canonicalise every f32 they load and every f32 result they compute, so "
                    "read-only inputs may be uploaded as given; an f32 buffer that is both input and result "
                    "comes back as uploaded where the program leaves it alone, so the host canonicalises it "
                    "before upload (as the reference does on read)." if opts.precision == "exact" else
                    "fast precision: the shaders canonicalise nothing (NaN payloads and subnormals are the "
                    "device's); the host's canonicalisation of in-out buffers is harmless and kept.")},
    }
    if concrete:  # the runner re-derives grids from the manifest: it must agree with the compiler's rule
        mine = [formula_grid(s, counts, manifest["scratch"]) for s in stages]
        assert mine == [list(g) for g in concrete], f"manifest grid rule {mine} != compiler's {concrete}"
    return manifest


def _binding(b) -> dict:
    from vyre_vk.ir import BufferAccess, DataType

    # The trap buffer's access is spelled like every other buffer's (BufferAccess values).
    access = BufferAccess.ReadWrite.value if b.role == "trap" else b.access
    return {**asdict(b), "access": access, "storage": DataType(b.dtype).numpy.name}


@dataclass(frozen=True)
class Emitted:
    """What :func:`emit` wrote: the compiled program, its manifest and the files (manifest last)."""
    compiled: "Compiled"
    manifest: dict
    files: tuple[Path, ...]

    def summary(self) -> str:
        return summary(self.manifest, self.files)


def summary(manifest: dict, files: tuple = ()) -> str:
    """A few lines: stages, local sizes, grids, barriers, scratch, files."""
    o = manifest["options"]
    mode = f"optimised for {o['device_class']}" if o["passes"] else "as written"
    lines = [f"{manifest['op'] or manifest['name']} ({mode}): {len(manifest['stages'])} stage(s), "
             f"program {manifest['program_hash'][:16]}"]
    sized = ", ".join(f"{n}={c}" for n, c in manifest["sizes"].items())
    for st in manifest["stages"]:
        g = st["grid"]["for_sizes"]
        lines.append(f"  stage {st['index']}: local size {tuple(st['local_size'])}"
                     + (f", x{st['factor']} coarsened" if st["factor"] > 1 else "")
                     + f", grid {tuple(g) if g else 'from sizes'}" + (", traps" if st["trap"] else ""))
    lines.append("  ops: " + ", ".join(f"dispatch {op['stage']}" if op["op"] == "dispatch"
                                       else f"barrier({', '.join(op['buffers'])})" for op in manifest["ops"]))
    if manifest["scratch"]:
        lines.append("  scratch: " + ", ".join(f"{s['name']}[{s['count']}] {s['dtype']}" for s in manifest["scratch"]))
    lines.append(f"  grids for {sized or 'no buffers'}" + (
        f"; data-sized {', '.join(manifest['unsized'])}: pass --size NAME=COUNT" if manifest["unsized"] else ""))
    lines += [f"  wrote {p}" for p in files]
    return "\n".join(lines)


def _check_tools(disasm: bool, validate: bool) -> None:
    for tool in (["spirv-dis"] if disasm else []) + (["spirv-val"] if validate else []):
        if shutil.which(tool) is None:
            raise ToolMissing(f"{tool} not found. Fix: apt-get install spirv-tools (tools/bootstrap.sh does).")


def emit(compiled: "Compiled", stem: str, out_dir: Path, *, op: Optional[str] = None,
         sizes: Optional[Mapping[str, int]] = None, disasm: bool = False, validate: bool = False) -> Emitted:
    """Write ``compiled``'s stages and manifest into ``out_dir``.

    Every file is made in a temporary folder inside `out_dir` and moved into place only once all
    of them exist (and spirv-val passed), the manifest last, so a failure leaves no partial or
    stale-mixed output. Stage files of an earlier emit of `stem` that this one lacks are removed.
    """
    _check_tools(disasm, validate)
    check_stem(stem)
    manifest = build_manifest(compiled, stem, sizes, op)
    contents: dict[str, bytes] = {}
    for st, entry in zip(compiled.stages, manifest["stages"]):
        contents[entry["comp"]] = st.glsl.encode()
        contents[entry["spirv"]] = st.spirv
    if manifest["fma_probe"]:
        from vyre_vk.runtime.probes import division_spirv, probe_cases

        a, b, q = probe_cases()
        contents[manifest["fma_probe"]["spirv"]] = division_spirv()
        contents[manifest["fma_probe"]["cases"]] = np.concatenate([a, b, q]).astype("<f4").tobytes()
    if manifest["native_probe"]:
        from vyre_vk.runtime.native_math import expected, native_cases, native_spirv

        a, b = native_cases()
        contents[manifest["native_probe"]["spirv"]] = native_spirv()
        contents[manifest["native_probe"]["cases"]] = np.concatenate([a, b, expected(a, b)]).astype("<f4").tobytes()
    contents[MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode()
    names = list(contents)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".vyre-vk-emit-") as tmp_name:
            tmp = Path(tmp_name)
            for name, data in contents.items():
                (tmp / name).write_bytes(data)
            for entry in manifest["stages"]:
                spv = str(tmp / entry["spirv"])
                asm = entry["spirv"][:-4] + ".spvasm"
                runs = ([("spirv-dis", "--disasm", [spv, "-o", str(tmp / asm)])] if disasm else []) \
                    + ([("spirv-val", "--validate", ["--target-env", entry["target_env"], spv])] if validate else [])
                for tool, flag, tool_args in runs:
                    res = subprocess.run([tool, *tool_args], capture_output=True, text=True)
                    if res.returncode:
                        raise CheckFailed(f"{tool} rejected {entry['spirv']} (nothing written):\n{res.stdout}"
                                          f"{res.stderr}Fix: report this with the program; emit without {flag} "
                                          "to inspect it.")
                if disasm:
                    names.insert(names.index(MANIFEST), asm)
            for name in names:  # manifest.json last: it never names a file not yet in place
                os.replace(tmp / name, out_dir / name)
        stale = re.compile(re.escape(stem) + r"\.(stage\d+\.(spv|comp|spvasm)|(fma|native)_probe\.(spv|f32))")
        for old in out_dir.iterdir():
            if stale.fullmatch(old.name) and old.name not in names:
                old.unlink()
    except OSError as e:
        raise output_error(e, out_dir) from e
    return Emitted(compiled, manifest, tuple(out_dir / n for n in names))


def emit_program(program: "Program", stem: str, out_dir: Path, *, options: Optional["Options"] = None,
                 op: Optional[str] = None, sizes: Optional[Mapping[str, int]] = None, disasm: bool = False,
                 validate: bool = False) -> Emitted:
    """Compile ``program`` (optimised unless ``options`` say otherwise) and :func:`emit` it."""
    from vyre_vk.compile import Options, compile_program

    _check_tools(disasm, validate)  # before the compile: a missing tool is the quicker answer
    check_stem(stem)
    return emit(compile_program(program, options or Options()), stem, out_dir, op=op, sizes=sizes,
                disasm=disasm, validate=validate)


SHADERS_DIR = Path(__file__).resolve().parent.parent / "shaders"
_SHADER_SUFFIXES = (".comp", ".spv", ".json")


@dataclass(frozen=True)
class ShaderDrift:
    drift: list[str]  # relative paths that differ
    old: frozenset    # relative paths the folder held
    new: frozenset    # relative paths a fresh generation holds


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix in _SHADER_SUFFIXES and not any(
                part.startswith(".") for part in p.relative_to(root).parts)}


def regenerate_shaders(target: Path, *, check: bool = False) -> ShaderDrift:
    """Emit every registered op (optimised, default device class, spirv-val'd) into
    ``target/<op stem>/``; with ``check`` only compare. Files of no op are removed."""
    from vyre_vk.ops import all_ops

    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        for entry in all_ops():
            stem = file_stem(entry.id)
            emit_program(entry.build(), stem, fresh / stem, op=entry.id, validate=True)
        new = _tree(fresh)
    old = _tree(target) if target.is_dir() else {}
    drift = sorted(n for n in set(new) | set(old) if new.get(n) != old.get(n))
    if not check:
        try:
            for name in drift:
                path = target / name
                if name in new:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(path, new[name])
                else:
                    path.unlink()
                    if path.parent != target and not any(path.parent.iterdir()):
                        path.parent.rmdir()
        except OSError as e:
            raise output_error(e, target) from e
    return ShaderDrift(drift, frozenset(old), frozenset(new))


__all__ = ["CheckFailed", "Emitted", "MANIFEST", "SCHEMA_VERSION", "SHADERS_DIR", "ShaderDrift", "ToolMissing",
           "UsageError", "build_manifest", "check_sizes", "check_stem", "emit", "emit_program", "file_stem",
           "output_error", "regenerate_shaders", "summary", "write_atomic"]
