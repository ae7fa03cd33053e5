"""What a reference dispatch is bound to: the inputs (as NumPy arrays per buffer) and the
workgroup grid vyre's reference infers from them. Split out of eval.py; eval re-exports these."""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence, Union

import numpy as np

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import canon
from ..ir.program import BufferDecl, Program
from ..ir.types import DataType
from .errors import EvalError

F32 = DataType.F32

Inputs = Union[Mapping[str, Any], Sequence[Any]]


# ----------------------------------------------------------------------------- grid
def dispatch_grid(program: Program, counts: Mapping[str, int]) -> tuple[int, int, int]:
    """Workgroup grid vyre's reference infers from bound element counts (vyre §8.1 step 5).

    `counts` maps buffer name -> element count of the bound data (workgroup buffers are
    ignored). Invocations = the largest result-buffer count; if the program has atomics or
    workgroup memory (or no result buffers), the largest count of any bound buffer. The
    workgroups, ceil(invocations / lanes per workgroup), go on the x axis for a 1-D
    workgroup shape and are spread as ceil(total ** (1/k)) over k > 1 active axes.

    >>> dispatch_grid(p, {"a": 100, "out": 100})   # doctest: +SKIP  (wg [64,1,1])
    (2, 1, 1)
    """
    outs = [b for b in program.buffers if b.is_result]
    max_out = max((int(counts.get(b.name, b.count)) for b in outs), default=0)
    max_in = max([1] + [int(counts.get(b.name, b.count)) for b in program.buffers
                        if not b.is_workgroup and not b.is_result])
    force_full = _has_workgroup_or_atomic(program)
    n = max(max_out, 1, max_in if (not outs or force_full) else 1)
    sx, sy, sz = program.workgroup_size
    per_wg = max(1, sx * sy * sz)
    total = max(1, -(-n // per_wg))
    active = [a for a, s in enumerate((sx, sy, sz)) if s > 1]
    if not active:
        return (total, 1, 1)
    base = math.ceil(total ** (1.0 / len(active)))  # vyre computes this in f64 too
    return tuple(base if a in active else 1 for a in range(3))  # type: ignore[return-value]


def _has_workgroup_or_atomic(p: Program) -> bool:
    if any(b.is_workgroup for b in p.buffers):
        return True
    stack = list(p.entry)
    while stack:
        n = stack.pop()
        for e in N.node_exprs(n):
            if any(isinstance(x, E.Atomic) for x in E.walk(e)):
                return True
        for _, body in N.node_bodies(n):
            stack.extend(body)
    return False


# ----------------------------------------------------------------------------- input binding
def _to_array(decl: BufferDecl, value: Any) -> np.ndarray:
    st = decl.element.numpy
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) % st.itemsize:
            raise EvalError(f"buffer `{decl.name}`: {len(raw)} bytes is not a whole number of "
                            f"{decl.element.value} elements. Fix: pass {st.itemsize}-byte little-endian elements.")
        arr = np.frombuffer(raw, dtype=st.newbyteorder("<")).astype(st)
    else:
        arr = np.asarray(value)
        if arr.dtype.kind == "f" and decl.element is not F32:
            raise EvalError(f"buffer `{decl.name}` is {decl.element.value} but got float data. "
                            "Fix: pass an integer array (or the raw bytes).")
        if arr.dtype.kind not in "fiub":
            raise EvalError(f"buffer `{decl.name}`: cannot use {arr.dtype} data. Fix: pass a numeric array.")
        arr = arr.reshape(-1).astype(st)  # ints wrap into u32 / i32 two's complement
    if decl.element is F32:
        arr = canon(arr)  # the reference canonicalises every f32 load
    if decl.count and arr.size < decl.count:
        raise EvalError(f"buffer `{decl.name}` has {arr.size} elements but requires at least {decl.count}. "
                        "Fix: supply the full buffer.")
    return np.array(arr, dtype=st, copy=True)


def _bind_inputs(program: Program, inputs: Inputs) -> dict[str, np.ndarray]:
    bound = [b for b in program.buffers if not b.is_workgroup]
    logical = [b for b in bound if b.is_input]
    values: dict[str, Any] = {}
    if isinstance(inputs, Mapping):
        names = {b.name for b in bound}
        extra = sorted(set(inputs) - names)
        if extra:
            raise EvalError(f"unknown input buffer(s) {extra}. Fix: use names from the program's buffers.")
        for b in logical:
            if b.name not in inputs:
                raise EvalError(f"missing input for buffer `{b.name}`. Fix: supply every read/read_write buffer.")
            values[b.name] = inputs[b.name]
    else:
        inputs = list(inputs)
        # vyre accepts "logical" inputs, or the legacy form with a placeholder per output.
        if len(inputs) == len(logical):
            values = {b.name: v for b, v in zip(logical, inputs)}
        elif len(inputs) == len(bound):
            values = {b.name: v for b, v in zip(bound, inputs) if b.is_input}
        else:
            raise EvalError(f"got {len(inputs)} inputs; the program takes {len(logical)} (or {len(bound)} "
                            "in the legacy form with output placeholders). Fix: pass one value per input buffer "
                            "in declaration order.")
    mem: dict[str, np.ndarray] = {}
    for b in bound:
        if b.is_input:
            mem[b.name] = _to_array(b, values[b.name])
        else:  # backend-allocated output: zero-filled, count elements
            mem[b.name] = np.zeros(b.count, dtype=b.element.numpy)
    return mem
