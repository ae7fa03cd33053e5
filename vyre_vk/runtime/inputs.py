"""Checking user arrays against a program's buffers, before anything is uploaded.

The rules are vyre_vk.ir.binding's, shared with the NumPy reference: strict on purpose (a float64
array bound to an F32 buffer, or an int64 array to a U32 buffer, is an error rather than a silent
conversion; lists and scalars are converted only when the conversion is lossless). The runtime
adds arrays already on the device (:class:`DeviceArray`), bound as they are.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from vyre_vk.errors import InputError
from vyre_vk.ir import BufferDecl
from vyre_vk.ir.binding import Binder as _Binder, Inputs, coerce as _coerce, describe  # noqa: F401 (re-exported)
from vyre_vk.runtime.buffer import DeviceArray


def _check_resident(decl: BufferDecl, value: DeviceArray) -> None:
    if value.dtype != np.dtype(decl.element.numpy):
        raise InputError(decl.name, f"DeviceArray holds {value.dtype.name}, the buffer is {describe(decl)}",
                         "upload an array of the buffer's dtype")
    if decl.count and value.size < decl.count:
        raise InputError(decl.name, f"DeviceArray has {value.size} elements, the program declares {decl.count}",
                         f"upload {describe(decl)}")


class Binder(_Binder):
    """The shared binder (vyre_vk.ir.binding.Binder) that also binds DeviceArrays, unconverted."""

    resident = (DeviceArray,)

    def check_resident(self, decl: BufferDecl, value: Any) -> None:
        _check_resident(decl, value)


def bind(buffers: Sequence[BufferDecl], inputs: Inputs) -> dict[str, np.ndarray]:
    """One-off form of :class:`Binder`: every bound buffer's array, checked."""
    return Binder(buffers)(inputs)
