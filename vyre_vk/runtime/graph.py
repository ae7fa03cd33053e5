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

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from vyre_vk.runtime.inputs import Inputs
from vyre_vk.runtime.kernel import Kernel, KernelTrapError, LaunchError, Stage, check_bindings, record_ops
from vyre_vk.runtime.stage import check_limits, compile_stage

if TYPE_CHECKING:
    from vyre_vk.ir import Program
    from vyre_vk.opt import PassReport, ProgramGraph
    from vyre_vk.runtime.device import Device


GraphTrapError = KernelTrapError  # a stage of the graph trapped


class Graph(Kernel):
    """An optimised program on one device: its stage kernels in one submission."""

    def __init__(self, device: "Device", graph: "ProgramGraph", reports: Sequence["PassReport"] = (),
                 max_plans: int = 8) -> None:
        from vyre_vk.opt import coarsen_factor

        stages = [Stage(p, *compile_stage(p, device.limits), coarsen_factor(p)) for p in graph.stages]
        super().__init__(device, graph.program, stages, graph.scratch, max_plans=max_plans)
        self.graph = graph
        self.reports = list(reports)
        self._fallback: Optional[Kernel] = None

    def run(self, inputs: Inputs = None, *, grid: Optional[Sequence[int]] = None) -> dict[str, np.ndarray]:
        """Run once; returns a fresh array per result buffer of the original program.

        A `grid` override is in units of the *original* program's workgroups, which the
        optimised stages may not share: such runs go to the unoptimised kernel."""
        if grid is not None:
            if self._fallback is None:
                self._fallback = self.device.compile(self.program, optimize=False)
            return self._fallback.run(inputs, grid=grid)
        return super().run(inputs)

    def explain(self) -> str:
        return "\n".join(str(r) for r in self.reports)


def compile_optimized(device: "Device", program: "Program", optimize: Union[bool, set, frozenset, list, tuple]):
    """Device.compile(program, optimize=...): a plain Kernel when no pass changed anything,
    else a Graph (also for a single rewritten stage, so grid overrides keep their meaning)."""
    from vyre_vk.ir import validate
    from vyre_vk.opt import device_class, optimize as run_passes

    passes = True if optimize is True else frozenset(optimize)
    key = f"opt:{program.content_hash()}:{sorted(passes) if passes is not True else 'all'}"
    hit = device._cached(key)
    if hit is not None:
        return hit
    validate(program)
    check_bindings(program, device.limits)
    check_limits(program, device.limits)
    graph, reports = run_passes(program, passes, device_class=device_class(device.name))
    try:  # a schedule over this device's limits is not used: the program runs as written
        for st in graph.stages:
            check_limits(st, device.limits)
    except LaunchError:
        graph = None
    if graph is None or graph.single == program:
        result = device.compile(program, optimize=False)
    else:
        result = Graph(device, graph, reports)
    return device._remember(key, result)


__all__ = ["Graph", "GraphTrapError", "compile_optimized", "record_ops", "compile_stage"]
