"""What a reference dispatch is bound to: the inputs, as NumPy arrays per buffer.

The rules are the runtime's (vyre_vk.ir.binding: a float64 array for an F32 buffer is an
InputError, not a silent rounding) and so is the grid (vyre_vk.ir.grid); this module only makes
the reference's working copies. eval.py re-exports these names.
"""
from __future__ import annotations

import numpy as np

from ..ir.binding import Binder, Inputs  # noqa: F401 (re-exported)
from ..ir.grid import dispatch_grid, has_workgroup_or_atomic  # noqa: F401 (re-exported)
from ..ir.optable import canon
from ..ir.program import Program
from ..ir.types import DataType

#: The grid rule's old private name (opt/hoist.py and emit.py import it from here / eval.py).
_has_workgroup_or_atomic = has_workgroup_or_atomic


def _bind_inputs(program: Program, inputs: Inputs) -> dict[str, np.ndarray]:
    """Every bound buffer's array, checked by the shared binder, as the reference's own writable
    copy; f32 contents canonicalised (the reference canonicalises every f32 load)."""
    arrays = Binder(program.buffers)(inputs)
    mem: dict[str, np.ndarray] = {}
    for b in program.buffers:
        if b.is_workgroup:
            continue
        arr = arrays[b.name]
        if b.element is DataType.F32:
            arr = canon(arr)
        mem[b.name] = np.array(arr, dtype=b.element.numpy, copy=True)
    return mem


__all__ = ["Inputs", "dispatch_grid", "has_workgroup_or_atomic"]
