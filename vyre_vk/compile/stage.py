"""One stage program -> (Lowered, SPIR-V), the same way for every caller, within a device's limits.

Device.compile (as written) and the optimised graph both come through
:func:`compile_stage`, so a shaderc failure always names its IR node and a program
over the device's shared-memory or workgroup limits is refused before shaderc sees it.

Example:
    >>> from vyre_vk.compile.stage import DeviceLimits, compile_stage
    >>> lowered, words = compile_stage(program, DeviceLimits())   # doctest: +SKIP
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional

from vyre_vk import spirv
from vyre_vk.errors import LaunchError

if TYPE_CHECKING:
    from vyre_vk.ir import Program
    from vyre_vk.lower import Lowered


class ProgramCompileError(spirv.ShaderCompileError):
    """shaderc rejected the GLSL lowered from a valid program; ``node_path`` names the IR node."""

    def __init__(self, err: spirv.ShaderCompileError, node_path: Optional[str]) -> None:
        self.node_path = self.where = node_path
        super().__init__(err.log + (f"\n(at IR node {node_path})" if node_path else ""), err.source, err.name)


#: Largest storage buffer the runtime binds, in bytes, whatever the device's maxStorageBufferRange:
#: it keeps every element index (and the shader's .length()) inside i32/u32 range.
MAX_STORAGE_BUFFER_BYTES = 2**31 - 1
#: Highest binding slot the runtime fills (Kompute binds tensor k at binding k, so gaps are
#: padded with one-word dummies); far below any driver's maxPerStageDescriptorStorageBuffers.
MAX_BINDING_SLOTS = 64


def check_storage_size(name: str, count: int, itemsize: int, limit: int = MAX_STORAGE_BUFFER_BYTES) -> None:
    if count * itemsize > limit:
        raise LaunchError(f"buffer `{name}`: {count} elements x {itemsize} bytes is over the device's "
                          f"{limit}-byte storage buffer range (maxStorageBufferRange). Fix: split the work "
                          "into several dispatches over smaller buffers.")


def check_bindings(program: "Program", limits: Optional["DeviceLimits"] = None) -> None:
    """Raise LaunchError for binding slots or declared sizes no device can bind (before lowering)."""
    limit = min(MAX_STORAGE_BUFFER_BYTES, limits.storage_buffer_bytes) if limits else MAX_STORAGE_BUFFER_BYTES
    for b in program.buffers:
        if b.is_workgroup:
            continue
        if b.binding >= MAX_BINDING_SLOTS:
            raise LaunchError(f"buffer `{b.name}`: binding {b.binding} is over the runtime's {MAX_BINDING_SLOTS} "
                              "slots. Fix: number storage buffers densely from 0.")
        check_storage_size(b.name, b.count, b.element.size, limit)


@dataclass(frozen=True)
class DeviceLimits:
    """The compute limits a stage is checked against. Defaults: Vulkan's guaranteed minimums
    raised to what every desktop driver reports (lavapipe's 32 KiB shared memory).
    ``fused_fma``: the device's fma() rounds once (vyre_vk.runtime.probes checks it when a
    device opens), so the lowering may use exact fma-based fast paths. ``float64``: shaders may
    use double (shaderFloat64 is enabled and its probe passed), so exp and tanh take ffmath64's path.
    ``storage_8bit``: storageBuffer8BitAccess is enabled (kp patch 0010), so byte buffers are stored
    a byte at a time instead of by compare-and-swap on their words. ``native_math``: the builtins
    (of fastmath.NATIVE_FUNCS) the fast precision may use, those the device's native-math probe
    measured within vyre's windows; the exact precision never uses them."""
    shared_memory_bytes: int = 32768
    workgroup_invocations: int = 1024
    workgroup_size: tuple[int, int, int] = (1024, 1024, 64)
    name: str = "any Vulkan device"
    storage_buffer_bytes: int = 2**31 - 1
    fused_fma: bool = False
    float64: bool = False
    storage_8bit: bool = False
    native_math: tuple[str, ...] = ()

    @classmethod
    def from_properties(cls, props: Mapping, name: str = "") -> "DeviceLimits":
        return cls(int(props.get("max_compute_shared_memory_size", cls.shared_memory_bytes)),
                   int(props["max_work_group_invocations"]), tuple(int(v) for v in props["max_work_group_size"]),
                   name or str(props.get("device_name", "")),
                   min(cls.storage_buffer_bytes, int(props.get("max_storage_buffer_range", cls.storage_buffer_bytes))),
                   storage_8bit=bool(props.get("storage_buffer_8bit", False)))


def shared_bytes(program: "Program", lowered: Optional["Lowered"] = None) -> int:
    """Workgroup memory one workgroup of ``program`` uses: its workgroup buffers, plus the
    subgroup-emulation exchange (two u32 halves per lane) and the lowering's own arrays once lowered."""
    total = program.workgroup_bytes
    if lowered is not None:
        total += lowered.shared_extra  # arrays the lowering adds (lower/shared_rcp.py)
        if "subgroup_emulation" in lowered.features:
            sx, sy, sz = program.workgroup_size
            total += 2 * 4 * sx * sy * sz
    return total


def check_limits(program: "Program", limits: DeviceLimits, lowered: Optional["Lowered"] = None) -> None:
    """Raise LaunchError when one workgroup of ``program`` needs more than ``limits`` allow."""
    wg = tuple(int(v) for v in program.workgroup_size)
    lanes = wg[0] * wg[1] * wg[2]
    if any(w > m for w, m in zip(wg, limits.workgroup_size)) or lanes > limits.workgroup_invocations:
        raise LaunchError(
            f"workgroup size {wg} exceeds {limits.name}'s limits (per axis {limits.workgroup_size}, "
            f"{limits.workgroup_invocations} invocations). Fix: declare a smaller workgroup_size.")
    used = shared_bytes(program, lowered)
    if used > limits.shared_memory_bytes:
        parts = ", ".join(f"`{b.name}` {b.count} x {b.element.size} B" for b in program.buffers if b.is_workgroup)
        raise LaunchError(
            f"one workgroup needs {used:,} bytes of workgroup memory ({parts or 'subgroup exchange'}), over "
            f"{limits.name}'s maxComputeSharedMemorySize of {limits.shared_memory_bytes:,} bytes. "
            "Fix: shrink the workgroup buffers or the workgroup size, or keep the data in a storage buffer.")


def op_name(program: "Program") -> str:
    name = getattr(program, "entry_op_id", None) or "program"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def compile_stage(program: "Program", limits: DeviceLimits = DeviceLimits(), *, validate: bool = True,
                  device_class: str = "default", precision: str = "exact") -> tuple["Lowered", bytes]:
    """Validate (unless the caller just did), check limits, lower and compile one stage program
    (with the branch-free f32 helpers where the stage is latency-bound on `device_class`; in the
    ``fast`` precision with fastmath.py's helpers and ``limits.native_math``'s builtins)."""
    from vyre_vk.ir import validate as validate_program
    from vyre_vk.lower import lower
    from vyre_vk.opt.dispatch import latency_bound

    if validate:
        validate_program(program)
    check_limits(program, limits)
    lowered = lower(program, check=False, fused_fma=limits.fused_fma,  # validated just above, or by the caller
                    latency_bound=latency_bound(program, device_class), float64=limits.float64,
                    storage_8bit=limits.storage_8bit, fast=precision == "fast",
                    native_math=limits.native_math if precision == "fast" else ())
    check_limits(program, limits, lowered)
    try:
        words = spirv.compile_glsl(lowered.glsl, name=f"{op_name(program)}.comp", target_env=lowered.target_env)
    except spirv.ShaderCompileError as e:
        m = re.search(r":(\d+): error", e.log)
        raise ProgramCompileError(e, lowered.node_at_line(int(m.group(1))) if m else None) from None
    return lowered, words


__all__ = ["MAX_BINDING_SLOTS", "MAX_STORAGE_BUFFER_BYTES", "check_bindings", "check_storage_size", "DeviceLimits", "ProgramCompileError", "check_limits", "compile_stage", "op_name", "shared_bytes"]
