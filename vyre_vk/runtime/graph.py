"""Several kernels in one submission: the runtime form of an optimised ProgramGraph.

One kp tensor per buffer name (the original program's bindings plus device-only scratch
buffers), shared by every stage, so intermediates never travel to the host. The sequence
is recorded once per size signature: upload, then each stage's dispatch, with a compute
barrier (kp_bridge.compute_barrier) exactly before a dispatch that reads or writes a
buffer an earlier dispatch wrote (or writes one an earlier dispatch read), then download
of the result buffers. ``Graph.run(inputs) -> dict`` is Kernel's API.

Example:
    >>> from vyre_vk.runtime import Device
    >>> with Device() as dev:
    ...     g = dev.compile(program, optimize=True)      # Graph when a pass split the program
    ...     out = g.run(inputs)                          # doctest: +SKIP
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from vyre_vk import spirv
from vyre_vk.reference import dispatch_grid
from vyre_vk.runtime import kp_bridge
from vyre_vk.runtime.inputs import Binder, Inputs
from vyre_vk.runtime.kernel import KernelStats, LaunchError

if TYPE_CHECKING:
    from vyre_vk.ir import Program
    from vyre_vk.opt import PassReport, ProgramGraph
    from vyre_vk.runtime.device import Device


class GraphTrapError(RuntimeError):
    """A stage of the graph trapped (the reference would have raised)."""


@dataclass
class _Stage:
    program: "Program"
    lowered: Any
    spirv: bytes
    names: tuple[str, ...]           # bound buffer names in binding order
    reads: frozenset
    writes: frozenset
    factor: int                      # coarsening: logical invocations per invocation


@dataclass
class _Plan:
    tensors: dict[str, Any]
    traps: list
    algorithms: list
    sequence: Any
    uploads: list[str]
    downloads: list[str]
    ops: list                        # ("dispatch", stage) / ("barrier", names): what was recorded

    def destroy(self) -> None:
        for obj in (self.sequence, *self.algorithms, *self.tensors.values(), *self.traps):
            obj.destroy()


def compile_stage(program: "Program"):
    """Validate, lower and compile one stage program: (Lowered, SPIR-V words)."""
    from vyre_vk.ir import validate
    from vyre_vk.lower import lower
    from vyre_vk.runtime.device import _op_name

    validate(program)
    lowered = lower(program)
    words = spirv.compile_glsl(lowered.glsl, name=f"{_op_name(program)}.comp", target_env=lowered.target_env)
    return lowered, words


def record_ops(stages: Sequence[tuple[frozenset, frozenset]]) -> list:
    """The dispatch/barrier list for stages given as (reads, writes) name sets, in order."""
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


@dataclass
class Graph:
    """An optimised program on one device: a chain of kernels in one submission."""
    device: "Device"
    graph: "ProgramGraph"
    reports: list = field(default_factory=list)
    max_plans: int = 8
    stats: KernelStats = field(default_factory=KernelStats)

    def __post_init__(self) -> None:
        from vyre_vk.opt import coarsen_factor

        self.program = self.graph.program
        self._lock = threading.Lock()
        self._plans: "OrderedDict[tuple, _Plan]" = OrderedDict()
        self._bind = Binder(self.program.buffers)
        self._names = [b.name for b in self._bind.bound]
        self.stages: list[_Stage] = []
        for p in self.graph.stages:
            lowered, words = compile_stage(p)
            names = tuple(b.name for b in lowered.bindings)
            self.stages.append(_Stage(p, lowered, words, names,
                                      frozenset(b.name for b in p.buffers if not b.is_workgroup),
                                      frozenset(b.name for b in p.buffers if b.is_result),
                                      coarsen_factor(p)))
        self.ops = record_ops([(s.reads, s.writes) for s in self.stages])
        self._fallback = None

    @property
    def glsl(self) -> list[str]:
        return [s.lowered.glsl for s in self.stages]

    def _grid(self, stage: _Stage, counts: dict) -> tuple[int, int, int]:
        g = dispatch_grid(stage.program, counts)
        if stage.factor > 1:
            g = (-(-g[0] // stage.factor), g[1], g[2])
        limit = tuple(self.device.properties["max_work_group_count"])
        if any(a > m for a, m in zip(g, limit)):
            raise LaunchError(f"grid {g} exceeds {self.device.name}'s maxComputeWorkGroupCount {limit}. "
                              "Fix: split the work.")
        return g

    def _plan(self, arrays: dict[str, np.ndarray]) -> _Plan:
        key = tuple(arrays[n].size for n in self._names)
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        mgr = self.device.manager
        tensors = {n: kp_bridge.tensor(mgr, arrays[n]) for n in self._names}
        for s in self.graph.scratch:
            tensors[s.name] = kp_bridge.tensor(mgr, np.zeros(max(s.count, 1), dtype=s.element.numpy))
        counts = {n: arrays[n].size for n in self._names}
        counts.update({s.name: max(s.count, 1) for s in self.graph.scratch})
        traps, algos = [], []
        from vyre_vk.lower import TRAP_WORDS
        for st in self.stages:
            bound = [tensors[n] for n in st.names]
            if st.lowered.trap_binding is not None:
                t = kp_bridge.tensor(mgr, np.zeros(TRAP_WORDS, dtype=np.uint32))
                traps.append((st, t))
                bound.append(t)
            algos.append(kp_bridge.algorithm(mgr, bound, st.spirv, self._grid(st, counts)))
        downloads = [b.name for b in self._bind.bound if b.is_result]
        every = list(tensors.values()) + [t for _, t in traps]
        seq = mgr.sequence()
        seq.record(kp_bridge.sync_device(every))
        for op, arg in self.ops:
            if op == "barrier":
                seq.record(kp_bridge.compute_barrier([tensors[n] for n in arg]))
            else:
                seq.record(kp_bridge.dispatch(algos[arg]))
        seq.record(kp_bridge.sync_local([tensors[n] for n in downloads] + [t for _, t in traps]))
        plan = _Plan(tensors, [t for _, t in traps], algos, seq, list(self._names), downloads, list(self.ops))
        plan.trap_stages = traps  # type: ignore[attr-defined]
        self._plans[key] = plan
        self.stats.plans_built += 1
        while len(self._plans) > self.max_plans:
            self._plans.popitem(last=False)[1].destroy()
        return plan

    def run(self, inputs: Inputs = None, *, grid: Optional[Sequence[int]] = None) -> dict[str, np.ndarray]:
        """Run once; returns a fresh array per result buffer of the original program.

        A `grid` override is in units of the *original* program's workgroups, which the
        optimised stages may not share: such runs go to the unoptimised kernel."""
        if grid is not None:
            if self._fallback is None:
                self._fallback = self.device.compile(self.program, optimize=False)
            return self._fallback.run(inputs, grid=grid)
        arrays = self._bind(inputs)
        with self.device.lock, self._lock:
            self.device.manager
            plan = self._plan(arrays)
            for name in plan.uploads:
                plan.tensors[name].data()[:] = arrays[name]
            for t in plan.traps:
                t.data()[:] = 0
            plan.sequence.eval()
            for st, t in plan.trap_stages:  # type: ignore[attr-defined]
                words = t.data()
                if words[0]:
                    msg = st.lowered.trap_codes.get(int(words[1]), f"trap code {int(words[1])}")
                    raise GraphTrapError(f"stage {self.stages.index(st)} trapped: {msg} "
                                         f"(invocation {int(words[2])}). Fix: the program rejects these inputs.")
            out = {n: plan.tensors[n].data().copy() for n in plan.downloads}
            self.stats.runs += 1
        return out

    def __call__(self, **arrays: Any) -> dict[str, np.ndarray]:
        return self.run(arrays)

    def explain(self) -> str:
        return "\n".join(str(r) for r in self.reports)

    def release(self) -> None:
        with self._lock:
            if not self.device.closed:
                for plan in self._plans.values():
                    plan.destroy()
            self._plans.clear()


def compile_optimized(device: "Device", program: "Program", optimize: Union[bool, set, frozenset, list, tuple]):
    """Device.compile(program, optimize=...): a plain Kernel when no pass changed anything,
    else a Graph (also for a single rewritten stage, so grid overrides keep their meaning)."""
    from vyre_vk.opt import device_class, optimize as run_passes

    passes = True if optimize is True else frozenset(optimize)
    key = f"opt:{program.content_hash()}:{sorted(passes) if passes is not True else 'all'}"
    with device.lock:
        hit = device._kernels.get(key)
        if hit is not None:
            return hit
    graph, reports = run_passes(program, passes, device_class=device_class(device.name))
    if graph.single == program:
        result = device.compile(program, optimize=False)
    else:
        result = Graph(device, graph, reports)
    with device.lock:
        return device._kernels.setdefault(key, result)


__all__ = ["Graph", "GraphTrapError", "compile_optimized", "record_ops", "compile_stage"]
