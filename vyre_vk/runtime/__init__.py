"""Run compiled programs on a Vulkan device through Kompute.

Example:
    >>> import vyre_vk
    >>> out = vyre_vk.run(program, {"a": np.arange(4, dtype=np.uint32)})   # doctest: +SKIP
"""
from __future__ import annotations

import atexit
import os
import threading
from typing import Optional, Sequence

import numpy as np

from vyre_vk.runtime.device import Device, DeviceError, LoopProbe, ProgramCompileError
from vyre_vk.runtime.inputs import InputError, Inputs
from vyre_vk.runtime.kernel import Kernel, KernelTrapError, LaunchError

_default: Optional[Device] = None
_default_lock = threading.Lock()


def _reset_in_child() -> None:
    # The inherited default device is unusable after fork (Device marks it so); the child opens
    # its own on first use. The lock may have been held by a parent thread at fork time.
    global _default_lock
    _default_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_in_child)


def default_device() -> Device:
    """The process-wide device (``$VYRE_VK_DEVICE`` or 0), opened on first use, closed at exit."""
    global _default
    dev = _default
    if dev is not None and not dev.closed:  # the common case, without the lock
        return dev
    with _default_lock:
        if _default is None or _default.closed:
            _default = Device()
            atexit.register(_default.close)
        return _default


def run(program, inputs: Inputs = None, *, device: Optional[Device] = None,
        grid: Optional[Sequence[int]] = None, validate: bool = True,
        precision: str = "exact") -> dict[str, np.ndarray]:
    """Compile (cached) and run ``program`` once; returns every result buffer by name.

    ``validate`` means what it means to :func:`vyre_vk.reference.run`: True (default) checks the
    program against the IR rules first (a ValidationError names the first broken one); False
    skips that check. The program is then compiled as written (the optimiser's passes rely on
    the rules) and runs with the meaning its lowering gives it, which for a program whose only
    fault is a rule the backends do not need (a fusion hazard in one invocation, say) is the
    reference's; one the lowering cannot express (an unbound variable, an undeclared buffer)
    raises LoweringError, where the reference raises EvalError. ``precision="fast"`` gives up the
    reference's bits for speed within the bounds docs/PRECISION.md states (Device.compile).

    >>> out = run(program, {"a": np.arange(4, dtype=np.uint32)}, validate=False)   # doctest: +SKIP
    """
    dev = device or default_device()
    return dev.compile(program, validate=validate, precision=precision).run(inputs, grid=grid)


__all__ = ["Device", "DeviceError", "LoopProbe", "ProgramCompileError", "InputError", "Kernel",
           "KernelTrapError", "LaunchError", "default_device", "run"]
