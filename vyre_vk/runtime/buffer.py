"""Arrays that stay on the device between runs.

Passing a NumPy array to ``Kernel.run`` uploads it on every run; for weights and
other inputs that do not change, upload once with :meth:`Device.array` and pass the
:class:`DeviceArray` instead: the recorded sequence then skips its upload.

Example:
    >>> w = dev.array(weights)                          # doctest: +SKIP
    >>> for x in batches:
    ...     out = kernel.run({"w": w, "x": x})
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from vyre_vk.errors import InputError
from vyre_vk.runtime import kp_bridge

if TYPE_CHECKING:
    from vyre_vk.runtime.device import Device


class DeviceArray:
    """A flat array resident in one device's memory (a kp tensor), read-only to kernels' inputs."""

    def __init__(self, device: "Device", data: np.ndarray) -> None:
        if not isinstance(data, np.ndarray):
            raise InputError(None, f"dev.array() takes a numpy array, got {type(data).__name__}",
                             "pass e.g. np.asarray(values, dtype=np.float32)")
        arr = np.ascontiguousarray(data).reshape(-1)
        if arr.dtype.byteorder not in "=|" and arr.dtype.newbyteorder("=") in kp_bridge.KP_DTYPES:
            arr = arr.astype(arr.dtype.type)  # same values, native order (kp wants the canonical dtype)
        if arr.dtype == np.bool_:
            arr = arr.astype(np.uint32)  # the IR stores Bool as one 32-bit word
        if arr.dtype not in kp_bridge.KP_DTYPES + kp_bridge.BYTE_DTYPES:
            raise InputError(None, f"a DeviceArray holds float32, uint32, int32, bool, uint8 or int8, got "
                             f"{arr.dtype.name}",
                             "convert first, e.g. dev.array(x.astype(np.float32)) if that rounding is what you mean")
        if arr.size == 0:
            raise InputError(None, "a DeviceArray cannot be empty (Vulkan buffers hold at least one element)",
                             "pass at least one element")
        if arr.dtype == np.float32:  # f32 inputs are canonicalised at bind time, as by the reference
            from vyre_vk.ir.optable import canon
            arr = canon(arr)
        self.device = device
        self.dtype = arr.dtype
        self.size = int(arr.size)  # elements: bytes for uint8/int8 (held as packed words)
        self._lock = threading.Lock()
        with device.lock:
            mgr = device.manager
            self._tensor = kp_bridge.tensor(mgr, arr)
            mgr.sequence().eval(kp_bridge.sync_device([self._tensor]))

    def tensor_for(self, device: "Device"):
        if device is not self.device:
            raise InputError(None, f"this DeviceArray lives on {self.device!r}, not on {device!r}",
                             "create it with the kernel's device (kernel.device.array(...))")
        device.manager  # raises if closed
        return self._tensor

    def numpy(self) -> np.ndarray:
        """A host copy of the current contents."""
        with self.device.lock:
            self.device.manager.sequence().eval(kp_bridge.sync_local([self._tensor]))
            words = self._tensor.data()
            if self.dtype in kp_bridge.BYTE_DTYPES:
                return kp_bridge.byte_view(words, self.size, self.dtype).copy()
            return words.copy()

    def __repr__(self) -> str:
        return f"<DeviceArray {self.dtype}[{self.size}] on {self.device.name}>"
