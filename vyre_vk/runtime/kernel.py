"""A compiled program on one device: one kp tensor per binding, a sequence recorded once.

Example:
    >>> from vyre_vk.runtime import Device
    >>> from vyre_vk.ops import get
    >>> entry = get("vyre-libs::nn::mlp_backward")
    >>> with Device() as dev:
    ...     kernel = dev.compile(entry.build())
    ...     out = kernel(x=x, w1=w1, b1=b1, w2=w2, grad_out=g)    # doctest: +SKIP
    ...     out["grad_x"]
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from vyre_vk.ir import BufferDecl, Program
from vyre_vk.reference import dispatch_grid
from vyre_vk.runtime import kp_bridge
from vyre_vk.runtime.buffer import DeviceArray
from vyre_vk.runtime.inputs import Binder, Inputs, InputError

from vyre_vk.lower import TRAP_WORDS

_TRAP = "\0trap"  # slot names no IR buffer can have
_TRAP_ZERO = np.zeros(TRAP_WORDS, np.uint32)

if TYPE_CHECKING:
    from vyre_vk.lower import Lowered
    from vyre_vk.runtime.device import Device


class LaunchError(ValueError):
    """A dispatch the device cannot run as asked (grid, workgroup, buffer or binding over its limits)."""


class KernelTrap(RuntimeError):
    """An invocation trapped (i32 division by zero or MIN / -1, or a ``Trap`` node).

    The reference raises ``EvalError`` / ``TrapError`` on the same programs and inputs.
    Attributes: ``code``, ``reason``, ``invocation`` (gl_GlobalInvocationID.x), ``address``.
    """

    def __init__(self, code: int, reason: str, invocation: int, address: int) -> None:
        self.code, self.reason, self.invocation, self.address = code, reason, invocation, address
        super().__init__(f"kernel trapped: {reason} (code {code}) at invocation {invocation}, "
                         f"address {address}. Fix: guard the operation so active invocations never reach it.")


#: Largest storage buffer the runtime binds, in bytes. kp does not report
#: maxStorageBufferRange; 2**31 - 1 is what lavapipe and most desktop drivers give and
#: keeps every element index (and the shader's .length()) inside i32/u32 range.
MAX_STORAGE_BUFFER_BYTES = 2**31 - 1
#: Highest binding slot the runtime fills (Kompute binds tensor k at binding k, so gaps are
#: padded with one-word dummies); far below any driver's maxPerStageDescriptorStorageBuffers.
MAX_BINDING_SLOTS = 64


@dataclass
class KernelStats:
    runs: int = 0
    plans_built: int = 0  # kp.Algorithm + tensors + recorded sequence, per buffer-size signature


@dataclass
class _Plan:
    """Everything bound for one set of buffer sizes and one grid."""
    tensors: dict[str, Any]
    algorithm: Any
    sequence: Any
    uploads: list[str]
    downloads: list[str]
    resident: dict[str, DeviceArray]  # owned by the caller; kept alive, never destroyed here

    def destroy(self) -> None:
        owned = [t for n, t in self.tensors.items() if n not in self.resident]
        for obj in (self.sequence, self.algorithm, *owned):
            obj.destroy()


def check_bindings(program: Program) -> None:
    """Raise LaunchError for binding slots this runtime cannot bind (checked before lowering)."""
    for b in program.buffers:
        if not b.is_workgroup and isinstance(b.binding, int) and b.binding >= MAX_BINDING_SLOTS:
            raise LaunchError(f"buffer `{b.name}`: binding {b.binding} is over the runtime's {MAX_BINDING_SLOTS} "
                              "slots. Fix: number storage buffers densely from 0.")
        if not b.is_workgroup and isinstance(b.count, int):
            Kernel._check_size(b.name, b.count, b.element.size)


@dataclass
class Kernel:
    """One program compiled for one device. Call it with arrays, get arrays back.

    The first run for a given set of buffer sizes builds the tensors, the kp
    Algorithm (one pipeline) and a sequence (upload inputs, dispatch, download
    outputs); later runs with the same sizes only write the staging buffers and
    replay that sequence. Up to ``max_plans`` size signatures are kept.
    """
    device: "Device"
    program: Program
    lowered: "Lowered"
    spirv: bytes
    max_plans: int = 8
    stats: KernelStats = field(default_factory=KernelStats)

    def __post_init__(self) -> None:
        self._plans: "OrderedDict[tuple, _Plan]" = OrderedDict()
        self._grids: dict[tuple, tuple[int, int, int]] = {}
        self._lock = threading.Lock()
        self.bindings: tuple[BufferDecl, ...] = tuple(self.lowered.bindings)
        self._names = [b.name for b in self.bindings]
        self._check_workgroup()
        self._check_buffers()
        self._bind = Binder(self.bindings)
        self._trap = self.lowered.trap_binding

    @property
    def glsl(self) -> str:
        return self.lowered.glsl

    def _check_workgroup(self) -> None:
        props = self.device.properties
        wg = tuple(self.lowered.workgroup_size)
        limit = tuple(props["max_work_group_size"])
        if any(w > m for w, m in zip(wg, limit)) or int(np.prod(wg)) > props["max_work_group_invocations"]:
            raise LaunchError(
                f"workgroup size {wg} exceeds {self.device.name}'s limits (per axis {limit}, "
                f"{props['max_work_group_invocations']} invocations). Fix: declare a smaller workgroup_size.")

    def _check_buffers(self) -> None:
        check_bindings(self.program)
        if (self.lowered.trap_binding or 0) >= MAX_BINDING_SLOTS:
            raise LaunchError(f"binding {self.lowered.trap_binding} (trap words) is over the runtime's "
                              f"{MAX_BINDING_SLOTS} slots. Fix: number storage buffers densely from 0.")
        for b in self.bindings:
            self._check_size(b.name, b.count, b.element.size)

    @staticmethod
    def _check_size(name: str, count: int, itemsize: int) -> None:
        if count * itemsize > MAX_STORAGE_BUFFER_BYTES:
            raise LaunchError(f"buffer `{name}`: {count} elements x {itemsize} bytes is over the "
                              f"{MAX_STORAGE_BUFFER_BYTES}-byte storage buffer limit. Fix: split the work "
                              "into several dispatches over smaller buffers.")

    def grid_for(self, arrays: dict[str, np.ndarray], grid: Optional[Sequence[int]] = None) -> tuple[int, int, int]:
        """The workgroup grid vyre would dispatch for these arrays (or ``grid`` if given)."""
        if grid is None:
            # dispatch_grid walks the whole program; the answer only depends on sizes.
            sizes = tuple(arrays[n].size for n in self._names)
            g = self._grids.get(sizes)
            if g is None:
                g = self._grids[sizes] = self._check_grid(
                    dispatch_grid(self.program, {k: v.size for k, v in arrays.items()}))
            return g
        return self._check_grid(tuple(int(v) for v in grid))

    def _check_grid(self, g: tuple) -> tuple[int, int, int]:
        if len(g) != 3 or min(g) < 1:
            raise LaunchError(f"grid {g} must be three positive integers. Fix: pass e.g. (4, 1, 1).")
        limit = tuple(self.device.properties["max_work_group_count"])
        if any(a > m for a, m in zip(g, limit)):
            raise LaunchError(
                f"grid {g} exceeds {self.device.name}'s maxComputeWorkGroupCount {limit}. "
                "Fix: split the work, or use a 2-D/3-D workgroup shape so vyre spreads the grid.")
        return g  # type: ignore[return-value]

    def _plan(self, arrays: dict, grid: tuple[int, int, int]) -> _Plan:
        resident = {n: v for n, v in arrays.items() if isinstance(v, DeviceArray)}
        key = (grid, *(arrays[n].size for n in self._names), *(id(v) for v in resident.values()))
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        mgr = self.device.manager
        tensors = {n: resident[n].tensor_for(self.device) if n in resident else kp_bridge.tensor(mgr, arrays[n])
                   for n in self._names}
        # kp binds tensor k at binding k, so a program with binding gaps (vyre's rms_norm_linear
        # uses 0,1,2,4) gets a 1-word filler tensor in every unused slot below its largest binding.
        by_binding = {b.binding: tensors[b.name] for b in self.bindings}
        if self._trap is not None:  # the lowering's trap words (i32 Div/Mod, Trap nodes)
            by_binding[self._trap] = tensors[_TRAP] = kp_bridge.tensor(mgr, np.zeros(TRAP_WORDS, np.uint32))
        for slot in range(max(by_binding, default=-1) + 1):
            if slot not in by_binding:
                by_binding[slot] = tensors[f"\0unused-binding-{slot}"] = kp_bridge.tensor(
                    mgr, np.zeros(1, np.uint32))
        ordered = [by_binding[slot] for slot in sorted(by_binding)]
        uploads = [n for n in self._names if n not in resident]
        algo = kp_bridge.algorithm(mgr, ordered, self.spirv, grid)
        downloads = [b.name for b in self.bindings if b.is_result]
        if self._trap is not None:
            downloads.append(_TRAP)
            uploads.append(_TRAP)
        seq = mgr.sequence()
        if uploads:
            seq.record(kp_bridge.sync_device([tensors[n] for n in uploads]))
        seq.record(kp_bridge.dispatch(algo))
        if downloads:
            seq.record(kp_bridge.sync_local([tensors[n] for n in downloads]))
        plan = _Plan(tensors, algo, seq, uploads, downloads, resident)
        self._plans[key] = plan
        self.stats.plans_built += 1
        while len(self._plans) > self.max_plans:
            self._plans.popitem(last=False)[1].destroy()
        return plan

    def run(self, inputs: Inputs = None, *, grid: Optional[Sequence[int]] = None) -> dict[str, np.ndarray]:
        """Run once. Returns a fresh array per result buffer (ReadWrite / output)."""
        arrays = self._bind(inputs)
        for b in self.bindings:
            self._check_size(b.name, arrays[b.name].size, b.element.size)
        g = self.grid_for(arrays, grid)
        if self._trap is not None:
            arrays[_TRAP] = _TRAP_ZERO
        with self.device.lock, self._lock:
            self.device.manager  # raises if the device was closed: its tensors are gone
            plan = self._plan(arrays, g)
            for name in plan.uploads:
                plan.tensors[name].data()[:] = arrays[name]
            plan.sequence.eval()
            out = {n: plan.tensors[n].data().copy() for n in plan.downloads}
            self.stats.runs += 1
        if self._trap is not None:
            flag, code, invocation, address = (int(w) for w in out.pop(_TRAP)[:4])
            if flag:
                raise KernelTrap(code, self.lowered.trap_codes.get(code, "unknown trap"), invocation, address)
        for b in self.bindings:  # with_output_byte_range: return only that slice, as the reference does
            if b.output_byte_range is not None and b.name in out:
                lo, hi = b.output_byte_range
                raw = out[b.name].view(np.uint8)[lo:hi]
                sz = b.element.size
                out[b.name] = (raw.view(out[b.name].dtype) if lo % sz == 0 and (hi - lo) % sz == 0
                               else raw).copy()
        return out

    def profile(self, inputs: Inputs = None, *, repeats: int = 10, timestamp_period_ns: float = 1.0,
                grid: Optional[Sequence[int]] = None) -> tuple[list[float], list[float]]:
        """GPU and host seconds of the dispatch alone, ``repeats`` times (inputs uploaded once).

        GPU time comes from timestamp queries around the dispatch, scaled by the device's
        timestampPeriod (kp does not report it: pass it, e.g. from tools/bench's probe).
        """
        import time

        self.run(inputs, grid=grid)  # builds the plan and leaves the inputs on the device
        arrays = self._bind(inputs)
        g = self.grid_for(arrays, grid)
        gpu, host = [], []
        with self.device.lock, self._lock:
            plan = self._plan(arrays, g)
            seq = self.device.manager.sequence(0, 1)
            seq.record(kp_bridge.dispatch(plan.algorithm))
            try:
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    seq.eval()
                    host.append(time.perf_counter() - t0)
                    ts = seq.get_timestamps()
                    gpu.append((ts[1] - ts[0]) * timestamp_period_ns * 1e-9)
            finally:
                seq.destroy()
        return gpu, host

    def __call__(self, **arrays: Any) -> dict[str, np.ndarray]:
        return self.run(arrays)

    def release(self) -> None:
        """Free this kernel's tensors, pipeline and sequences now (else at device close)."""
        with self._lock:
            if not self.device.closed:
                for plan in self._plans.values():
                    plan.destroy()
            self._plans.clear()


__all__ = ["Kernel", "KernelStats", "KernelTrap", "LaunchError", "InputError", "MAX_STORAGE_BUFFER_BYTES"]
