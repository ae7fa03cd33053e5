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

if TYPE_CHECKING:
    from vyre_vk.lower import Lowered
    from vyre_vk.runtime.device import Device


class LaunchError(ValueError):
    """A dispatch the device cannot run as asked (grid or workgroup over its limits)."""


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
        self._bind = Binder(self.bindings)
        self._check_workgroup()

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
        ordered = [tensors[n] for n in self._names]
        uploads = [n for n in self._names if n not in resident]
        algo = kp_bridge.algorithm(mgr, ordered, self.spirv, grid)
        downloads = [b.name for b in self.bindings if b.is_result]
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
        g = self.grid_for(arrays, grid)
        with self.device.lock, self._lock:
            self.device.manager  # raises if the device was closed: its tensors are gone
            plan = self._plan(arrays, g)
            for name in plan.uploads:
                plan.tensors[name].data()[:] = arrays[name]
            plan.sequence.eval()
            out = {n: plan.tensors[n].data().copy() for n in plan.downloads}
            self.stats.runs += 1
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


__all__ = ["Kernel", "KernelStats", "LaunchError", "InputError"]
