"""Rejoining phases that stayed in one workgroup: one kernel with barriers, not one kernel each.

``split_phases`` (phases.py) cuts a one-workgroup program at every barrier so ``spread`` can give
the phases that need it their own grids. The phases spread leaves alone still run in workgroup 0
only: vyre's merge trees (reduce_variance: 8 levels of ``if local < s { merge(local, local + s) }``)
each became a kernel of one workgroup, and on an H200 a dispatch plus its pipeline barrier costs
~4.3 us whatever the kernel does (reduce_variance's tail: 9 such kernels, 39 us of 0.30 ms).

Consecutive stages whose every effect and every read of memory sits under a condition implying
``workgroup_x == 0`` run in that workgroup alone; a workgroup barrier between two of them orders
exactly what the kernel boundary ordered (each lane's earlier stores before every lane's later
loads; vyre's barrier orders storage memory too, and the lowering fences buffers and declares them
coherent). So they run as one kernel: each stage's statements in its own scope, a barrier between
them. Same statements, same order, same lanes: bit-identical. Workgroups other than 0 do nothing
in any of them, so the joined kernel's larger grid changes nothing either.

>>> from vyre_vk.ops import get
>>> from vyre_vk.opt import optimize
>>> g, _ = optimize(get("vyre-libs::math::reduce_variance").build_with(n=1 << 12), ["split_phases", "spread"])
>>> len(g.stages)   # the spread chains, then the 9 tree phases as one kernel
2
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess
from ..ir.walk import node_all_exprs, walk_nodes
from .analysis import OPAQUE_EXPRS
from .phases import wg0_only

#: Stages joined into one kernel at most (each boundary becomes an in-kernel barrier).
MAX_JOINED = 16


def workgroup_zero_only(st: Program) -> bool:
    """Every load and store of a storage buffer in `st` runs only in workgroup 0, and nothing in
    it ends an invocation early or has an effect the joined kernel could not order."""
    if tuple(st.workgroup_size[1:]) != (1, 1) or any(b.is_workgroup for b in st.buffers):
        return False
    if any(isinstance(n, (N.Return, N.Trap) + N.UNSUPPORTED_NODES) for n in walk_nodes(st.entry)):
        return False
    if any(isinstance(x, OPAQUE_EXPRS) or isinstance(x, (E.SubgroupLocalId, E.SubgroupSize))
           for x in node_all_exprs(st.entry)):
        return False
    return wg0_only(st.entry, {b.name for b in st.buffers}, {})


def _joined(run: list[Program]) -> Program:
    """One program: each stage's statements in a scope of their own, barriers between them."""
    body: list = []
    for k, st in enumerate(run):
        if k:
            body.append(N.Barrier())
        body.append(N.Block(tuple(st.entry)))
    decls: dict[str, BufferDecl] = {}
    for st in run:
        for b in st.buffers:
            old = decls.get(b.name)
            if old is None or (b.access is BufferAccess.ReadWrite and old.access is not BufferAccess.ReadWrite) \
                    or (b.is_result and not old.is_result):
                decls[b.name] = b
    bufs = tuple(dataclasses.replace(b, binding=j) for j, b in enumerate(decls.values()))
    first = run[0]  # a validated program's entry is Regions: the joined one keeps the first's generator
    return Program(bufs, first.workgroup_size, (Region(first.entry[0].generator, None, tuple(body)),),
                   first.entry_op_id)


def rejoin(stages: list[Program]) -> tuple[list[Program], Optional[str]]:
    """`stages` with every run of >= 2 consecutive workgroup-0 stages of one workgroup size joined."""
    out: list[Program] = []
    run: list[Program] = []
    joined: list[str] = []

    def flush() -> None:
        if len(run) >= 2:
            out.append(_joined(run))
            joined.append(f"{len(run)} kernels")
        else:
            out.extend(run)
        run.clear()

    for st in stages:
        joinable = workgroup_zero_only(st)
        if run and not (joinable and st.workgroup_size == run[0].workgroup_size and len(run) < MAX_JOINED):
            flush()
        (run if joinable else out).append(st)
    flush()
    if not joined:
        return stages, None
    return out, (f"phases that run in workgroup 0 alone joined into one kernel each ({', '.join(joined)}), "
                 "barriers where the kernel boundaries were (same statements, same lanes)")


__all__ = ["rejoin", "workgroup_zero_only", "MAX_JOINED"]
