"""The workgroup grid a dispatch runs: vyre's rule (vyre reference §8.1 step 5), IR semantics
shared by the NumPy reference (vyre_vk.reference), the compiled kernels (vyre_vk.compile) and
emitted manifests (vyre_vk.emit).

Example::

    >>> from vyre_vk.ir import BufferDecl, DataType, Program
    >>> p = Program.wrapped([BufferDecl.read("a", 0, DataType.U32), BufferDecl.output("out", 1, DataType.U32)
    ...                      .with_count(100)], (64, 1, 1), [])
    >>> dispatch_grid(p, {"a": 1000, "out": 100})   # the largest result buffer: ceil(100 / 64)
    (2, 1, 1)
"""
from __future__ import annotations

import math
from typing import Mapping

from . import expr as E
from .program import Program
from .walk import node_all_exprs


def has_workgroup_or_atomic(p: Program) -> bool:
    """The program declares workgroup memory or runs an atomic: its grid covers every bound
    buffer, not only the result buffers."""
    if any(b.is_workgroup for b in p.buffers):
        return True
    return any(isinstance(x, E.Atomic) for x in node_all_exprs(p.entry))


def dispatch_grid(program: Program, counts: Mapping[str, int]) -> tuple[int, int, int]:
    """Workgroup grid for bound element counts (vyre §8.1 step 5).

    `counts` maps buffer name -> element count of the bound data (a buffer not in it counts its
    declared count; workgroup buffers are ignored). Invocations = the largest result-buffer
    count; if the program has atomics or workgroup memory (or no result buffers), the largest
    count of any bound buffer. The workgroups, ceil(invocations / lanes per workgroup), go on
    the x axis for a 1-D workgroup shape and are spread as ceil(total ** (1/k)) over k > 1
    active axes.
    """
    outs = [b for b in program.buffers if b.is_result]
    max_out = max((int(counts.get(b.name, b.count)) for b in outs), default=0)
    max_in = max([1] + [int(counts.get(b.name, b.count)) for b in program.buffers
                        if not b.is_workgroup and not b.is_result])
    force_full = has_workgroup_or_atomic(program)
    n = max(max_out, 1, max_in if (not outs or force_full) else 1)
    sx, sy, sz = program.workgroup_size
    per_wg = max(1, sx * sy * sz)
    total = max(1, -(-n // per_wg))
    active = [a for a, s in enumerate((sx, sy, sz)) if s > 1]
    if not active:
        return (total, 1, 1)
    base = math.ceil(total ** (1.0 / len(active)))  # vyre computes this in f64 too
    return tuple(base if a in active else 1 for a in range(3))  # type: ignore[return-value]


__all__ = ["dispatch_grid", "has_workgroup_or_atomic"]
