"""A Vulkan device opened through Kompute, checked before it is trusted.

Example:
    >>> from vyre_vk.runtime import Device
    >>> with Device() as dev:                      # VYRE_VK_DEVICE=N picks another
    ...     print(dev.name, dev.loop_probe().passed)
"""
from __future__ import annotations

from vyre_vk.errors import EnvironmentProblem
import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vyre_vk import spirv
from vyre_vk.ir.validate import validate as validate_program
from vyre_vk.runtime import kp_bridge

if TYPE_CHECKING:
    from vyre_vk.ir import Program
    from vyre_vk.runtime.buffer import DeviceArray
    from vyre_vk.runtime.kernel import Kernel

# One invocation counts a loop whose bound it reads from a buffer (so no compiler
# can fold it), plus a nested loop whose total passes 65535: bookworm's Mesa 22.3
# lavapipe silently stops both at 65535 cumulative iterations.
LOOP_PROBE_N = 100_000
LOOP_PROBE_OUTER, LOOP_PROBE_INNER = 512, 200
_LOOP_PROBE_GLSL = """#version 450
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer Bounds { uint bounds[]; };
layout(std430, set = 0, binding = 1) buffer Counts { uint counts[]; };
void main() {
    uint flat_count = 0u;
    for (uint i = 0u; i < bounds[0]; ++i) { flat_count += 1u; }
    uint nested_count = 0u;
    for (uint i = 0u; i < bounds[1]; ++i) {
        for (uint j = 0u; j < bounds[2]; ++j) { nested_count += 1u; }
    }
    counts[0] = flat_count;
    counts[1] = nested_count;
}
"""


class DeviceError(EnvironmentProblem, RuntimeError):
    """The device cannot be opened, or failed a correctness probe."""


class ProgramCompileError(spirv.ShaderCompileError):
    """shaderc rejected the GLSL lowered from a valid program; ``node_path`` names the IR node."""

    def __init__(self, err: spirv.ShaderCompileError, node_path: str | None) -> None:
        self.node_path = node_path
        super().__init__(err.log + (f"\n(at IR node {node_path})" if node_path else ""), err.source, err.name)


@dataclass(frozen=True)
class LoopProbe:
    """What the loop-count probe dispatch counted against what it should count."""
    flat: int
    nested: int

    @property
    def passed(self) -> bool:
        return self.flat == LOOP_PROBE_N and self.nested == LOOP_PROBE_OUTER * LOOP_PROBE_INNER

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED (the driver truncates loops)"
        return (f"loop probe {verdict}: counted {self.flat:,} of {LOOP_PROBE_N:,} "
                f"and {self.nested:,} of {LOOP_PROBE_OUTER * LOOP_PROBE_INNER:,} nested")


def _op_name(program: "Program") -> str:
    name = getattr(program, "entry_op_id", None) or "program"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def default_index() -> int:
    raw = os.environ.get("VYRE_VK_DEVICE", "0")
    try:
        index = int(raw)
    except ValueError:
        raise DeviceError(f"VYRE_VK_DEVICE={raw!r} is not a device index. "
                          "Fix: set it to an integer from `vyre-vk doctor`'s device list.") from None
    if index < 0:
        raise DeviceError(f"VYRE_VK_DEVICE={index} is negative. Fix: use an index from `vyre-vk doctor`.")
    return index


class Device:
    """One Vulkan device (a kp.Manager) and everything compiled on it.

    ``index`` defaults to ``$VYRE_VK_DEVICE`` or 0. On open the loop-count probe
    runs once; a device that truncates loops is refused unless
    ``allow_loop_limit=True`` (results of long loops would be wrong).
    """

    def __init__(self, index: int | None = None, *, allow_loop_limit: bool = False) -> None:
        self.index = default_index() if index is None else index
        self._mgr = kp_bridge.manager(self.index)
        self.properties: dict = dict(self._mgr.get_device_properties())
        self.name: str = self.properties["device_name"]
        kp_bridge.set_spin_wait(self.name)
        self.lock = threading.RLock()  # kp objects of one manager are not thread-safe
        self._closed = False
        self._kernels: dict[str, "Kernel"] = {}
        self.probe = self.loop_probe()
        if not self.probe.passed and not allow_loop_limit:
            self.close()
            raise DeviceError(
                f"device {self.index} ({self.name}) fails the {self.probe}. Any program with long "
                "loops would silently return wrong numbers. Fix: install Mesa lavapipe 25.x "
                "(tools/bootstrap.sh), pick another device with VYRE_VK_DEVICE, or pass "
                "allow_loop_limit=True to accept truncated loops.")

    @property
    def manager(self) -> "kp.Manager":
        if self._closed:
            raise DeviceError(f"device {self.index} ({self.name}) is closed. Fix: open a new Device.")
        return self._mgr

    def loop_probe(self) -> LoopProbe:
        """Dispatch the loop-count probe and report what it counted."""
        words = spirv.compile_glsl(_LOOP_PROBE_GLSL, name="vyre-vk-loop-probe.comp")
        bounds = np.array([LOOP_PROBE_N, LOOP_PROBE_OUTER, LOOP_PROBE_INNER], dtype=np.uint32)
        with self.lock:
            mgr = self.manager
            t_in = kp_bridge.tensor(mgr, bounds)
            t_out = kp_bridge.tensor(mgr, np.zeros(2, dtype=np.uint32))
            algo = kp_bridge.algorithm(mgr, [t_in, t_out], words, (1, 1, 1))
            seq = mgr.sequence()
            (seq.record(kp_bridge.sync_device([t_in, t_out]))
                .record(kp_bridge.dispatch(algo))
                .record(kp_bridge.sync_local([t_out]))
                .eval())
            counts = t_out.data().copy()
            for obj in (seq, algo, t_in, t_out):
                obj.destroy()
        return LoopProbe(int(counts[0]), int(counts[1]))

    @property
    def closed(self) -> bool:
        return self._closed

    def compile(self, program: "Program", optimize=True) -> "Kernel":
        """Validate, lower and compile ``program`` for this device (cached by content hash).

        ``optimize``: True (default) runs every optimiser pass (vyre_vk.opt), a set of
        pass names runs those, False compiles the program as written. When a pass rewrote
        the program the result is a :class:`vyre_vk.runtime.graph.Graph` (same ``run``
        API; several kernels in one submission if a pass split the program).

        >>> kernel = dev.compile(program)          # doctest: +SKIP
        >>> out = kernel(a=np.arange(4, dtype=np.uint32))
        """
        if optimize:
            from vyre_vk.runtime.graph import compile_optimized
            from vyre_vk.runtime.kernel import check_bindings

            validate_program(program)
            check_bindings(program)
            return compile_optimized(self, program, optimize)
        from vyre_vk.ir import validate
        from vyre_vk.lower import lower
        from vyre_vk.runtime.kernel import Kernel, check_bindings

        key = program.content_hash()
        with self.lock:
            kernel = self._kernels.get(key)
            if kernel is not None:
                return kernel
        validate(program)
        check_bindings(program)
        lowered = lower(program)
        try:
            words = spirv.compile_glsl(lowered.glsl, name=f"{_op_name(program)}.comp",
                                       target_env=lowered.target_env)
        except spirv.ShaderCompileError as e:
            m = re.search(r":(\d+): error", e.log)
            raise ProgramCompileError(e, lowered.line_map.get(int(m.group(1))) if m else None) from None
        with self.lock:
            kernel = self._kernels.setdefault(key, Kernel.single(self, program, lowered, words))
        return kernel

    def array(self, data: np.ndarray) -> "DeviceArray":
        """Upload ``data`` once; pass the result to ``Kernel.run`` to skip its per-run upload."""
        from vyre_vk.runtime.buffer import DeviceArray

        return DeviceArray(self, data)

    def close(self) -> None:
        """Free every Vulkan object made on this device. Idempotent."""
        with self.lock:
            if not self._closed:
                self._closed = True
                self._kernels.clear()
                self._mgr.destroy()

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<vyre_vk.Device {self.index}: {self.name} ({state})>"
