"""A port of vyre-foundation/src/execution_plan/fusion/fuse.rs ``fuse_programs`` (isolated arms),
the cross-dispatch fusion that collapses sibling programs into one kernel.

- Buffers: the union by name in first-seen order, non-workgroup bindings renumbered 0.. in that
  order; a name seen again keeps its first declaration with the access upgraded (ReadWrite wins),
  the larger count, and the output flags of any arm.
- Arms: each arm's entry, every local name alpha-renamed ``__vyre_fuse_a{arm}_{name}`` (names
  already so prefixed are kept), in its own ``Block``.
- Hazards: an arm reads its declared ReadOnly/Uniform buffers and every buffer it loads; it writes
  its declared ReadWrite buffers, every buffer it stores to, and buffers it only touches by
  atomics. After an earlier arm that read a buffer a later arm writes (WAR), or wrote a buffer a
  later arm reads (RAW), comes a barrier. The workgroup is the axis-wise maximum.

vyre makes that barrier ``GridSync`` when the earlier arm's stores are gated on the invocation id
(every bitset and graph arm is), and vyre-driver splits the dispatch there. The IR here has no
GridSync (vyre_vk/ir/types.py: Vulkan compute has no grid-wide barrier), so ``fuse_programs`` emits
a workgroup ``SeqCst`` barrier, which orders the arms exactly when the whole dispatch's active lanes
sit in one workgroup; callers must keep to that (aliases_dataflow refuses larger graphs).

Example::

    >>> from .graph import bitset_or_into
    >>> p = fuse_programs([bitset_or_into("acc", "x", 1), bitset_or_into("out", "acc", 1)])
    >>> [(b.name, b.binding) for b in p.buffers]
    [('acc', 0), ('x', 1), ('out', 2)]
    >>> [type(n).__name__ for n in p.entry[0].body]
    ['Block', 'Barrier', 'Block']
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from ...ir import BufferAccess, BufferDecl, Node, Program
from ...ir import expr as E
from ...ir import node as N
from ...ir.walk import map_expr, node_all_exprs, rewrite_nodes, walk_nodes

FUSION_ARM_PREFIX = "__vyre_fuse_a"


def _upgrade(current: BufferAccess, other: BufferAccess) -> BufferAccess:
    """fusion/helpers.rs ``upgrade_buffer_access``."""
    pair = {current, other}
    if BufferAccess.ReadWrite in pair or pair == {BufferAccess.WriteOnly, BufferAccess.ReadOnly} \
            or pair == {BufferAccess.WriteOnly, BufferAccess.Uniform}:
        return BufferAccess.ReadWrite
    if pair == {BufferAccess.WriteOnly}:
        return BufferAccess.WriteOnly
    if BufferAccess.Uniform in pair:
        return BufferAccess.Uniform
    if BufferAccess.Workgroup in pair:
        return BufferAccess.Workgroup
    return BufferAccess.ReadOnly


def alpha_rename(nodes: Sequence[Node], arm: int) -> tuple:
    """Every local name of an arm (Let, Assign, Loop variables and their uses) arm-qualified."""
    def ren(name: str) -> str:
        return name if name.startswith(FUSION_ARM_PREFIX) else f"{FUSION_ARM_PREFIX}{arm}_{name}"

    def expr(e):
        return map_expr(e, lambda x: E.Var(ren(x.name)) if isinstance(x, E.Var) else None)

    def post(n):
        if isinstance(n, (N.Let, N.Assign)):
            return (dataclasses.replace(n, name=ren(n.name)),)
        if isinstance(n, N.Loop):
            return (dataclasses.replace(n, var=ren(n.var)),)
        return None
    return rewrite_nodes(nodes, expr=expr, post=post)


def _touched(entry: Sequence[Node]) -> tuple[set, set, set]:
    """(loaded, stored, atomically updated) buffer names of an entry (fusion/collectors.rs)."""
    loads, stores, atomics = set(), set(), set()
    for n in walk_nodes(entry):
        if isinstance(n, N.Store):
            stores.add(n.buffer)
    for e in node_all_exprs(entry):
        if isinstance(e, E.Load):
            loads.add(e.buffer)
        elif isinstance(e, E.Atomic):
            atomics.add(e.buffer)
    return loads, stores, atomics


def fuse_programs(programs: Sequence[Program]) -> Program:
    """One program running `programs` in order, with a barrier after each arm a later arm depends on."""
    if len(programs) == 1:
        return programs[0]
    merged: list[BufferDecl] = []
    index: dict[str, int] = {}
    readers: dict[str, list[int]] = {}
    writers: dict[str, list[int]] = {}
    barrier_after: set[int] = set()
    arms: list[tuple] = []
    wg = [1, 1, 1]
    for arm, prog in enumerate(programs):
        arms.append(alpha_rename(prog.entry, arm))
        reads: set[str] = set()
        writes: set[str] = set()
        for buf in prog.buffers:
            if buf.access in (BufferAccess.ReadOnly, BufferAccess.Uniform):
                reads.add(buf.name)
            elif buf.access is BufferAccess.ReadWrite:
                writes.add(buf.name)
            if buf.name in index:
                old = merged[index[buf.name]]
                merged[index[buf.name]] = dataclasses.replace(
                    old, access=_upgrade(old.access, buf.access), count=max(old.count, buf.count),
                    is_output=old.is_output or buf.is_output,
                    pipeline_live_out=old.pipeline_live_out or buf.is_output)
            else:
                binding = buf.binding if buf.access is BufferAccess.Workgroup else \
                    sum(b.access is not BufferAccess.Workgroup for b in merged)
                index[buf.name] = len(merged)
                merged.append(dataclasses.replace(buf, binding=binding))
        loads, stores, atomics = _touched(prog.entry)
        reads |= loads
        writes |= stores
        # An atomic counts as a write only where the arm neither reads nor stores the buffer.
        writes |= {b for b in atomics if b not in reads and b not in writes}
        for b in writes:                       # WAR
            barrier_after.update(readers.get(b, ()))
        for b in reads:                        # RAW
            barrier_after.update(writers.get(b, ()))
        for b in reads:
            readers.setdefault(b, []).append(arm)
        for b in writes:
            writers.setdefault(b, []).append(arm)
        wg = [max(a, b) for a, b in zip(wg, prog.workgroup_size)]
    entry: list[Node] = []
    for arm, body in enumerate(arms):
        entry.append(Node.block(list(body)))
        if arm in barrier_after:
            entry.append(Node.barrier())
    return Program.wrapped(merged, tuple(wg), entry)
