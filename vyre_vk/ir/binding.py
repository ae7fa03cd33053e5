"""Binding user inputs to a program's buffers: one set of rules for the NumPy reference and
the Vulkan runtime, checked before anything runs or is uploaded.

Strict on purpose: a float64 array bound to an F32 buffer, or an int64 array to a U32 buffer,
is an :class:`~vyre_vk.errors.InputError` rather than a silent conversion (rounding or wrapping
the user would never see). Lists and scalars are converted only when the conversion is lossless;
raw bytes are read as little-endian elements. Inputs are a dict by buffer name, or a sequence in
declaration order of the logical inputs (or, as vyre's vectors do, of every bound buffer);
buffers the backend allocates (``BufferDecl.output``) are zero-filled and take no input.

The runtime binds device-resident arrays as well: a subclass names their types in
:attr:`Binder.resident` and checks them in :meth:`Binder.check_resident`.

Example::

    >>> import numpy as np
    >>> from vyre_vk.ir import BufferDecl, DataType
    >>> bufs = [BufferDecl.read("x", 0, DataType.F32), BufferDecl.output("y", 1, DataType.F32).with_count(2)]
    >>> sorted(bind(bufs, {"x": np.ones(2, np.float32)}))
    ['x', 'y']
    >>> bind(bufs, {"x": np.ones(2)})
    Traceback (most recent call last):
    ...
    vyre_vk.errors.InputError: buffer `x`: expected dtype float32, got float64. Fix: ...
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence, Union

import numpy as np

from vyre_vk.errors import InputError

from .program import BufferDecl
from .types import DataType

Inputs = Union[Mapping[str, Any], Sequence[Any], None]


def describe(decl: BufferDecl) -> str:
    """What a buffer takes, for messages: ``f32[4] (float32)``."""
    size = f"{decl.count}" if decl.count else "n >= 1"
    return f"{decl.element.value}[{size}] ({np.dtype(decl.element.numpy).name})"


def coerce(decl: BufferDecl, value: Any) -> np.ndarray:
    """`value` as a flat array of `decl`'s storage dtype, or InputError: an ndarray must have that
    dtype already (any byte order; bool arrays for Bool buffers), bytes are little-endian
    elements, anything else must convert losslessly."""
    storage = np.dtype(decl.element.numpy)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) % storage.itemsize:
            raise InputError(decl.name, f"{len(raw)} bytes is not a whole number of "
                             f"{storage.itemsize}-byte elements", f"pass {describe(decl)} as little-endian bytes")
        return np.frombuffer(raw, dtype=storage.newbyteorder("<")).astype(storage)
    if isinstance(value, np.ndarray):
        arr = value
        if decl.element is DataType.Bool and arr.dtype == np.bool_:
            return arr.reshape(-1).astype(storage)
        if arr.dtype != storage and arr.dtype.newbyteorder("=") == storage:
            return arr.reshape(-1).astype(storage)  # other byte order, same values: exact
        if arr.dtype != storage:
            got = arr.dtype.str if arr.dtype.name == storage.name else arr.dtype.name
            raise InputError(decl.name, f"expected dtype {storage.name}, got {got}",
                             f"pass a numpy array of {describe(decl)}, e.g. x.astype(np.{storage.name}) "
                             "if that conversion is what you mean")
        return arr.reshape(-1)
    try:
        arr = np.asarray(value)
        with np.errstate(invalid="ignore", over="ignore"):
            conv = arr.astype(storage)
            same = conv.astype(arr.dtype) == arr
        if arr.dtype.kind == "f" and storage.kind == "f":
            same |= np.isnan(arr) & np.isnan(conv)  # NaN is NaN (only where the input was NaN)
        lossless = arr.size == 0 or bool(np.all(same))
    except (TypeError, ValueError, OverflowError) as e:
        raise InputError(decl.name, f"cannot read {type(value).__name__} as {storage.name} ({e})",
                         f"pass a numpy array of {describe(decl)}") from None
    if arr.dtype.kind not in "biuf" or not lossless:
        raise InputError(decl.name, f"values {value!r:.60} do not convert exactly to {storage.name}",
                         f"pass a numpy array of {describe(decl)}")
    return conv.reshape(-1)


_MISSING = object()


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class Binder:
    """Maps user inputs onto a program's bound (non-workgroup) buffers.

    Built once per program (a kernel keeps one): the per-call path only checks the arrays.
    Calling it returns every bound buffer's array by name; an array that already has the
    storage dtype, is flat and contiguous is returned as is (not copied), and the zero-filled
    outputs are shared read-only arrays, so a caller that writes must copy.
    """

    #: Types bound without conversion (the runtime's DeviceArray); each is checked with
    #: :meth:`check_resident`. The reference binds none.
    resident: tuple[type, ...] = ()

    def __init__(self, buffers: Sequence[BufferDecl]) -> None:
        self.bound = [b for b in buffers if not b.is_workgroup]
        self.logical = [b for b in self.bound if b.is_input]
        self.known = {b.name: b for b in self.bound}
        self.logical_names = [b.name for b in self.logical]
        self._input_names = frozenset(self.logical_names)
        self._records = [(b, np.dtype(b.element.numpy)) for b in self.bound]
        self._not_inputs = (str, bytes, np.ndarray) + self.resident  # a lone array is not "the inputs"
        # zero contents of backend-allocated outputs: one read-only array each, not one per run
        self._zeros = {b.name: _readonly(np.zeros(b.count, dtype=np.dtype(b.element.numpy)))
                       for b in self.bound if not b.is_input and b.count >= 1}
        for b in self.bound:
            if not b.is_input and b.count < 1:
                raise InputError(b.name, "is an output with count 0, so its size is unknown",
                                 "declare it with .with_count(n)")

    def check_resident(self, decl: BufferDecl, value: Any) -> None:
        """Refuse a resident value that does not fit `decl` (InputError); subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} names resident types but does not check them")

    def _values(self, inputs: Inputs) -> dict[str, Any]:
        if inputs is None:
            inputs = {}
        if type(inputs) is not dict and (isinstance(inputs, self._not_inputs)
                                         or not isinstance(inputs, (Mapping, Sequence))):
            raise InputError(None, f"inputs must be a dict of arrays by buffer name (or a list of arrays), "
                             f"got {type(inputs).__name__}", f"pass e.g. {{{self.logical_names[0]!r}: array}}"
                             if self.logical_names else "pass {} or None: the program takes no inputs")
        if type(inputs) is dict or isinstance(inputs, Mapping):  # dict first: an ABC check costs ~1 us
            for name in inputs:
                if name in self._input_names:
                    continue
                decl = self.known.get(name)
                if decl is None:
                    raise InputError(name, "the program has no such buffer", f"use one of {self.logical_names}")
                if not decl.is_input:
                    raise InputError(name, "is an output the runtime allocates and zero-fills",
                                     "leave it out of the inputs")
            if len(inputs) != len(self.logical):
                b = next(b for b in self.logical if b.name not in inputs)
                raise InputError(b.name, f"no input given (expected {describe(b)})",
                                 f"pass every input buffer: {self.logical_names}")
            return dict(inputs)
        seq = list(inputs)
        if len(seq) == len(self.logical):
            return dict(zip(self.logical_names, seq))
        if len(seq) == len(self.bound):
            return {b.name: v for b, v in zip(self.bound, seq) if b.is_input}
        raise InputError(None, f"got {len(seq)} inputs, the program takes {len(self.logical)} "
                         f"({self.logical_names})", "pass one array per input buffer, in order")

    def __call__(self, inputs: Inputs) -> dict[str, np.ndarray]:
        values = self._values(inputs)
        arrays: dict[str, np.ndarray] = {}
        resident = False
        for b, storage in self._records:
            value = values.get(b.name, _MISSING)
            if value is _MISSING:  # backend-allocated output
                arrays[b.name] = self._zeros[b.name]
                continue
            if type(value) is np.ndarray and value.dtype == storage and value.ndim == 1 \
                    and value.flags.c_contiguous:
                arr = value  # the common case, checked without conversions
            elif self.resident and isinstance(value, self.resident):
                self.check_resident(b, value)
                arrays[b.name] = value
                resident = True
                continue
            else:
                arr = np.ascontiguousarray(coerce(b, value))
            if arr.size == 0:
                raise InputError(b.name, "is empty; Vulkan buffers hold at least one element",
                                 f"pass {describe(b)}")
            if arr.size < b.count:
                raise InputError(b.name, f"has {arr.size} elements, the program declares {b.count}",
                                 f"pass {describe(b)}")
            arrays[b.name] = arr
        if resident:
            self._check_aliases(arrays)
        return arrays

    def _check_aliases(self, arrays: dict) -> None:
        """Refuse one resident array bound to a written buffer and to any other buffer: the GPU would
        alias them, where the reference gives each binding its own value."""
        seen: dict[int, str] = {}
        for b, _ in self._records:
            v = arrays.get(b.name)
            if not isinstance(v, self.resident):
                continue
            other = seen.setdefault(id(v), b.name)
            if other != b.name and (b.is_result or self.known[other].is_result):
                raise InputError(b.name, f"is the same {type(v).__name__} as buffer `{other}`, and one of them is "
                                 "written by the program, so the device would alias what the reference keeps "
                                 "apart", "pass a separate copy for one of them, e.g. dev.array(arr.numpy())")


def bind(buffers: Sequence[BufferDecl], inputs: Inputs) -> dict[str, np.ndarray]:
    """One-off form of :class:`Binder`: every bound buffer's array, checked."""
    return Binder(buffers)(inputs)


__all__ = ["Inputs", "Binder", "bind", "coerce", "describe"]
