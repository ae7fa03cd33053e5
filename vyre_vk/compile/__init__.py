"""The one compile front door: Program + Options -> :class:`Compiled`, in named stages.

``compile_program`` walks the stages of :data:`STAGES` once each:

- ``validate``: the IR rules (vyre_vk.ir.validate), the binding slots and the device
  limits of the program as given — the only full validation;
- ``optimize``: the optimiser (vyre_vk.opt) turns the program into a schedule of one or
  more stage programs over shared buffers plus scratch; a schedule over the device's
  limits is dropped for the program as written;
- ``lower``: each stage program to GLSL 450 (vyre_vk.lower), with its bindings;
- ``spirv``: each GLSL module to SPIR-V through shaderc (vyre_vk.spirv, cached on disk).

The result is cached in memory by (content hash, options), and every stage's output can be
written out: ``Compiled.dump(folder)`` or ``$VYRE_VK_DUMP_DIR``. The runtime (Device.compile),
the emission tool (``vyre-vk emit``), the benchmarks and the tests all come through here.

Example:
    >>> from vyre_vk.compile import Options, compile_program
    >>> from vyre_vk.ops import get
    >>> c = compile_program(get("vyre-libs::nn::mlp_backward").build(), Options(device_class="nvidia"))
    >>> [s.local_size for s in c.stages] and c.stages[0].spirv[:4] == b"\\x03\\x02\\x23\\x07"
    True
"""
from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Union

from vyre_vk.compile.stage import (MAX_BINDING_SLOTS, MAX_STORAGE_BUFFER_BYTES, DeviceLimits, ProgramCompileError,
                                   check_bindings, check_limits, compile_stage, op_name, shared_bytes)
from vyre_vk.errors import VyreError

if TYPE_CHECKING:
    from vyre_vk.ir import BufferDecl, Program
    from vyre_vk.lower import Lowered

STAGES = ("validate", "optimize", "lower", "spirv")
#: "exact": the reference's bits (default); "fast": PyTorch-class rounding within documented bounds
#: (vyre_vk/lower/fastmath.py, docs/PRECISION.md).
PRECISIONS = ("exact", "fast")
#: What `vyre-vk emit` assumes of a device class's fma() when not told (--fma): NVIDIA's rounds
#: once (the fma probe passes on the H200); others are not assumed. The runtime always probes.
FUSED_FMA_BY_CLASS = {"nvidia": True, "amd": False, "intel": False, "llvmpipe": False, "default": False}
#: What `vyre-vk emit` assumes of a device class's shaderFloat64 when not told (--float64): NVIDIA,
#: AMD and lavapipe have it (Intel's recent GPUs do not). The runtime always probes.
FLOAT64_BY_CLASS = {"nvidia": True, "amd": True, "intel": False, "llvmpipe": True, "default": False}
#: What `vyre-vk emit` assumes of a device class's maxComputeSharedMemorySize (the stream pass sizes its
#: tiles by it): every NVIDIA GPU since Kepler reports 48 KB; elsewhere the 32 KB lavapipe and most
#: desktop drivers report (DeviceLimits' default). The runtime uses the device's own.
SHARED_MEMORY_BY_CLASS = {"nvidia": 49152, "amd": 32768, "intel": 32768, "llvmpipe": 32768, "default": 32768}
#: What `vyre-vk emit` assumes of a device class's storageBuffer8BitAccess when not told (--storage-8bit):
#: the desktop drivers and lavapipe all report it. The runtime reads what the device enabled.
STORAGE_8BIT_BY_CLASS = {"nvidia": True, "amd": True, "intel": True, "llvmpipe": True, "default": False}
#: The builtins `vyre-vk emit --precision fast` uses when not told (--native-math): what the native-math
#: probe measured within vyre's windows (lavapipe 25.0.7: div 0, exp 61, sqrt 0 ULP; tanh is far off near
#: 0. H200, driver 580.159.04: exp 58, sqrt 1, tanh 2 ULP; its `a / b` is 8.3e6 ULP off over the whole
#: exponent range, docs/bench/h200-doctor-2026-12-05.txt). Classes not measured yet use none; the
#: runtime always probes, the aot runner checks the folder's.
NATIVE_MATH_BY_CLASS = {"nvidia": ("exp", "sqrt", "tanh"), "amd": (), "intel": (), "llvmpipe": ("div", "exp", "sqrt"),
                        "default": ()}
#: Compiled artefacts kept in memory (LRU); each holds its stages' GLSL and SPIR-V.
MAX_CACHED = 256


class OptionsError(VyreError, ValueError):
    """Compile options that name no pass, precision or device class."""


@dataclass(frozen=True)
class Options:
    """How to compile: which passes (True: all, False: the program as written, or a set of
    pass names), for which device class and limits, at which precision."""
    passes: Union[bool, frozenset] = True
    device_class: str = "default"
    limits: DeviceLimits = DeviceLimits()
    precision: str = "exact"

    def __post_init__(self) -> None:
        from vyre_vk.opt.dispatch import BEST_LOCAL_SIZE

        passes = self.passes
        if passes is not True and passes is not False:
            if isinstance(passes, (str, bytes)) or not isinstance(passes, Iterable):
                raise OptionsError(f"passes={passes!r} is not True, False or a set of pass names. "
                                   "Fix: pass True (all), False (as written) or e.g. {'licm', 'cse'}.")
            object.__setattr__(self, "passes", frozenset(passes) or False)
        if self.device_class not in BEST_LOCAL_SIZE:
            raise OptionsError(f"device class {self.device_class!r} is unknown. "
                               f"Fix: use one of {sorted(BEST_LOCAL_SIZE)}.")
        if self.precision not in PRECISIONS:
            raise OptionsError(f"precision {self.precision!r} is not available. Fix: use one of {list(PRECISIONS)}.")

    @property
    def key(self) -> str:
        """What the compiled result depends on: the options and, when passes run, the schedule knobs set
        in the environment (vyre_vk.opt.pipeline.SCHEDULE_KNOBS)."""
        from vyre_vk.opt.pipeline import knob_settings

        passes = "all" if self.passes is True else "none" if not self.passes else ",".join(sorted(self.passes))
        knobs = knob_settings() if self.passes else ""
        return f"{passes}|{self.device_class}|{self.precision}|{self.limits}|{knobs}"


@dataclass(frozen=True)
class Binding:
    """One storage buffer a stage binds: what ``manifest.json`` lists and the runtime allocates."""
    name: str
    binding: int
    dtype: str     # the IR element type, e.g. "f32"
    count: int     # declared element count (0: sized by the bound data)
    access: str    # read_only / read_write
    role: str      # input / inout / output / scratch / trap


@dataclass(frozen=True)
class CompiledStage:
    """One stage program, lowered and compiled."""
    program: "Program"
    lowered: "Lowered"
    spirv: bytes
    factor: int = 1  # coarsening: logical invocations handled per invocation

    @property
    def local_size(self) -> tuple[int, int, int]:
        return tuple(self.lowered.workgroup_size)  # type: ignore[return-value]

    @property
    def glsl(self) -> str:
        return self.lowered.glsl

    @property
    def reads(self) -> frozenset:
        return frozenset(b.name for b in self.program.buffers if not b.is_workgroup)

    @property
    def writes(self) -> frozenset:
        return frozenset(b.name for b in self.program.buffers if b.is_result)

    def bindings(self, original: "Program", scratch: Iterable[str] = ()) -> list[Binding]:
        """The stage's storage buffers in binding order, each with its role in the whole program."""
        from vyre_vk.lower import TRAP_WORDS

        scratch = set(scratch)
        out = []
        for b in self.lowered.bindings:
            decl = original.buffer(b.name)
            role = ("scratch" if b.name in scratch else "input" if decl.is_input and not decl.is_result
                    else "inout" if decl.is_input else "output")
            out.append(Binding(b.name, b.binding, b.element.value, b.count, b.access.value, role))
        if self.lowered.trap_binding is not None:
            out.append(Binding("trap", self.lowered.trap_binding, "u32", TRAP_WORDS, "read_write", "trap"))
        return out


Stage = CompiledStage  # the runtime's name for it


def record_ops(stages: Iterable[tuple[frozenset, frozenset]]) -> list:
    """The dispatch/barrier list for stages given as (reads, writes) name sets, in order: a
    barrier exactly where a stage touches what an earlier one wrote, or writes what it read."""
    ops: list = []
    dirty: set = set()       # written since the last barrier that covered them
    read_since: set = set()  # read since the last barrier (write-after-read needs one too)
    for k, (reads, writes) in enumerate(stages):
        hazard = (dirty & (reads | writes)) | (read_since & writes)
        if k and hazard:
            ops.append(("barrier", tuple(sorted(hazard))))
            dirty -= hazard
            read_since = set()
        ops.append(("dispatch", k))
        dirty |= writes
        read_since |= reads
    return ops


@dataclass(frozen=True)
class Compiled:
    """A program compiled for a device class: its stages in dispatch order, the scratch buffers
    they share, the barriers between them and what each pass did."""
    program: "Program"
    stages: tuple[CompiledStage, ...]
    scratch: tuple["BufferDecl", ...] = ()
    reports: tuple = ()
    options: Options = Options()
    ops: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.ops:
            object.__setattr__(self, "ops", record_ops([(s.reads, s.writes) for s in self.stages]))

    @property
    def optimized(self) -> bool:
        return len(self.stages) != 1 or self.stages[0].program != self.program

    def grids(self, counts: Mapping[str, int]) -> list[tuple[int, int, int]]:
        """Each stage's workgroup grid for bound element counts by buffer name (vyre's rule:
        vyre_vk.ir.grid), divided by the stage's coarsening factor on x."""
        from vyre_vk.ir.grid import dispatch_grid

        counts = {**counts, **{s.name: max(s.count, 1) for s in self.scratch}}
        out = []
        for st in self.stages:
            g = dispatch_grid(st.program, counts)
            out.append((-(-g[0] // st.factor), g[1], g[2]))
        return out

    def bindings(self, k: int) -> list[Binding]:
        return self.stages[k].bindings(self.program, (s.name for s in self.scratch))

    def explain(self) -> str:
        """Which passes changed the program and why, then the stages."""
        lines = [f"passes (device class {self.options.device_class}):"]
        lines += [f"  {'*' if r.changed else ' '} {r}" for r in self.reports]
        lines.append(f"result: {len(self.stages)} kernel(s)" + (
            f", scratch {', '.join(f'{b.name}[{b.count}]' for b in self.scratch)}" if self.scratch else ""))
        for k, st in enumerate(self.stages):
            lines.append(f"  stage {k}: workgroup {st.local_size}"
                         + (f", {st.factor} elements per invocation" if st.factor > 1 else "")
                         + f", buffers {[b.name for b in st.program.buffers if not b.is_workgroup]}")
        return "\n".join(lines)

    def dump(self, folder: Union[str, Path]) -> list[Path]:
        """Write every stage's output: program.json, then per stage k its program, GLSL and SPIR-V."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written = [folder / "program.json"]
        written[0].write_text(self.program.to_json())
        (folder / "explain.txt").write_text(self.explain() + "\n")
        for k, st in enumerate(self.stages):
            for suffix, data in ((".json", st.program.to_json()), (".comp", st.glsl), (".spv", st.spirv)):
                path = folder / f"stage{k}{suffix}"
                path.write_bytes(data if isinstance(data, bytes) else data.encode())
                written.append(path)
        return written


_cache: "OrderedDict[tuple, Compiled]" = OrderedDict()
_lock = threading.Lock()


def compile_program(program: "Program", options: Options = Options(), *, validate: bool = True) -> Compiled:
    """Validate, optimise, lower and compile ``program`` (cached by content hash and options).

    Raises ValidationError / LaunchError for a program the IR or the device refuses, and
    ProgramCompileError (naming the IR node) if shaderc rejects the lowering.

    ``validate=False`` skips the IR rules (``vyre_vk.run(..., validate=False)``, as
    ``vyre_vk.reference.run`` does): the program is then compiled as written, whatever
    ``options.passes`` say, because the optimiser's passes rely on those rules; a program the
    lowering cannot express raises LoweringError, one shaderc refuses ProgramCompileError.
    Such compiles are cached apart from validated ones.
    """
    from vyre_vk.ir import Program, validate as validate_program
    from vyre_vk.ir.validate import ProgramShapeError

    if not isinstance(program, Program):
        raise ProgramShapeError("program", f"expected a vyre_vk.ir.Program, got {type(program).__name__}",
                                "build one with Program.new(...) or get(op_id).build()")
    if not validate:
        options = dataclasses.replace(options, passes=False)
    key = (program.content_hash(), options.key, validate)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    # validate
    if validate:
        validate_program(program)
    check_bindings(program, options.limits)
    check_limits(program, options.limits)
    # optimize
    stages, scratch, reports = _schedule(program, options)
    # lower + spirv (stage programs were validated by the optimiser when it made them)
    compiled = Compiled(program, tuple(CompiledStage(p, *compile_stage(p, options.limits, validate=False,
                                                                       device_class=options.device_class,
                                                                       precision=options.precision),
                                                     factor) for p, factor in stages),
                        tuple(scratch), tuple(reports), options)
    dump_dir = os.environ.get("VYRE_VK_DUMP_DIR")
    if dump_dir:
        compiled.dump(Path(dump_dir) / f"{op_name(program)}-{key[0][:16]}")
    with _lock:
        compiled = _cache.setdefault(key, compiled)
        while len(_cache) > MAX_CACHED:
            _cache.popitem(last=False)
    return compiled


def _schedule(program: "Program", options: Options):
    """The optimiser's stages as (program, coarsening factor), scratch and reports; the program
    as written when no pass is asked for or the schedule is over the device's limits."""
    from vyre_vk.errors import LaunchError
    from vyre_vk.opt import PassReport, coarsen_factor, optimize

    if not options.passes:
        return [(program, 1)], [], []
    graph, reports = optimize(program, options.passes, device_class=options.device_class, validated=True,
                              precision=options.precision, shared_memory_bytes=options.limits.shared_memory_bytes)
    try:
        for st in graph.stages:
            check_limits(st, options.limits)
    except LaunchError as e:
        return [(program, 1)], [], [*reports, PassReport("limits", True, f"schedule reverted: {e.message}")]
    return [(st, coarsen_factor(st)) for st in graph.stages], list(graph.scratch), reports


def from_graph(graph, reports=(), options: Options = Options()) -> Compiled:
    """A Compiled for a hand-made ProgramGraph (tests, benchmarks); its stages are validated."""
    from vyre_vk.opt import coarsen_factor

    return Compiled(graph.program, tuple(CompiledStage(p, *compile_stage(p, options.limits, device_class=options.device_class,
                                                                         precision=options.precision),
                                                       coarsen_factor(p))
                                         for p in graph.stages), tuple(graph.scratch), tuple(reports), options)


def clear_cache() -> None:
    with _lock:
        _cache.clear()


__all__ = ["FLOAT64_BY_CLASS", "FUSED_FMA_BY_CLASS", "NATIVE_MATH_BY_CLASS", "PRECISIONS", "SHARED_MEMORY_BY_CLASS",
           "STORAGE_8BIT_BY_CLASS", "Binding", "Compiled", "CompiledStage", "DeviceLimits", "MAX_BINDING_SLOTS", "MAX_STORAGE_BUFFER_BYTES",
           "Options", "OptionsError", "ProgramCompileError", "STAGES", "Stage", "check_bindings", "check_limits",
           "clear_cache", "compile_program", "compile_stage", "from_graph", "op_name", "record_ops", "shared_bytes"]
