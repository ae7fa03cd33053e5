"""A Vulkan device opened through Kompute, checked before it is trusted.

Example:
    >>> from vyre_vk.runtime import Device
    >>> with Device() as dev:                      # VYRE_VK_DEVICE=N picks another
    ...     print(dev.name, dev.loop_probe().passed)
"""
from __future__ import annotations

from vyre_vk.errors import EnvironmentProblem
import gc
import itertools
import os
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from vyre_vk import spirv
from vyre_vk.runtime import kp_bridge
from vyre_vk.runtime.probes import Float64Probe, FmaProbe, cached, division_spirv, float64_probe, float64_spirv, fma_probe
from vyre_vk.compile.stage import DeviceLimits, ProgramCompileError  # noqa: F401 (re-exported)
from vyre_vk.opt.dispatch import device_class

if TYPE_CHECKING:
    from vyre_vk.ir import Program
    from vyre_vk.runtime.buffer import DeviceArray
    from vyre_vk.runtime.kernel import Kernel
    from vyre_vk.runtime.native_math import NativeMathProbe

# One invocation counts a loop whose bound it reads from a buffer (so no compiler
# can fold it), plus a nested loop whose total passes 65535: bookworm's Mesa 22.3
# lavapipe silently stops both at 65535 cumulative iterations.
LOOP_PROBE_N = 100_000
LOOP_PROBE_OUTER, LOOP_PROBE_INNER = 512, 200
_LOOP_PROBE_GLSL = """#version 450
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer Bounds { uint bounds[]; };
layout(std430, set = 0, binding = 1) buffer Counts { uint counts[]; };
void main() {
    uint flat_count = 0u;
    for (uint i = 0u; i < bounds[0]; ++i) { flat_count += 1u; }
    uint nested_count = 0u;
    for (uint i = 0u; i < bounds[1]; ++i) {
        for (uint j = 0u; j < bounds[2]; ++j) { nested_count += 1u; }
    }
    counts[0] = flat_count;
    counts[1] = nested_count;
}
"""


class DeviceError(EnvironmentProblem, RuntimeError):
    """The device cannot be opened, or failed a correctness probe."""


def loop_probe_spirv() -> bytes:
    """SPIR-V of the loop-count probe (from the compile cache after the first call)."""
    return spirv.compile_glsl(_LOOP_PROBE_GLSL, name="vyre-vk-loop-probe.comp")


@dataclass(frozen=True)
class LoopProbe:
    """What the loop-count probe dispatch counted against what it should count."""
    flat: int
    nested: int

    @property
    def passed(self) -> bool:
        return self.flat == LOOP_PROBE_N and self.nested == LOOP_PROBE_OUTER * LOOP_PROBE_INNER

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED (the driver truncates loops)"
        return (f"loop probe {verdict}: counted {self.flat:,} of {LOOP_PROBE_N:,} "
                f"and {self.nested:,} of {LOOP_PROBE_OUTER * LOOP_PROBE_INNER:,} nested")


#: Kernels a Device keeps compiled (least recently used dropped first: their pipelines and
#: tensors are freed; a dropped Kernel still held by the caller rebuilds them on its next run).
DEFAULT_MAX_KERNELS = 64
#: A run whose buffers (scratch included) total at most this many bytes, and whose stages make at
#: most that many 4-byte accesses in all (loops of literal trip counts only: Kernel._host_ok), binds
#: host-visible buffers that the shaders use in place: no staging copies are recorded, so a tiny
#: kernel's submission is its dispatches and one host barrier (H200, tools/bench/run.py: 25.8 us
#: against 34.7 with the copies). A loop could read the same host memory over PCIe many times, and
#: a big buffer is read faster from device memory: both keep device-local buffers.
#: ``$VYRE_VK_HOST_TENSOR_BYTES`` overrides (0: never).
DEFAULT_HOST_TENSOR_BYTES = 64 << 10
#: Program objects remembered by identity, so a repeated vyre_vk.run(program) skips hashing.
RECENT_PROGRAMS = 16
#: Open (not yet closed or collected) Devices after which opening another runs the cyclic GC.
COLLECT_AFTER_OPEN_DEVICES = 2
_open_after_collect = 0
_serials = itertools.count(1)
_open_devices: "weakref.WeakSet[Device]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # A forked child shares the parent's Vulkan objects but none of its driver threads:
    # using them hangs. Mark every inherited device unusable (and never destroy its objects
    # from here); a lock held by a parent thread at fork time would never be released.
    for dev in list(_open_devices):
        dev._forked = True
        dev.lock = threading.RLock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _env_int(name: str, default: int, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise DeviceError(f"{name}={raw!r} is not an integer >= {minimum}. Fix: set it to e.g. {default}, or unset it.")
    return value


def _destroy_manager(mgr, pid: int) -> None:
    """Finaliser of a Device dropped without close(): free its Vulkan objects (not in a forked child)."""
    if os.getpid() == pid:
        mgr.destroy()


def default_index() -> int:
    raw = os.environ.get("VYRE_VK_DEVICE", "0")
    try:
        index = int(raw)
    except ValueError:
        raise DeviceError(f"VYRE_VK_DEVICE={raw!r} is not a device index. "
                          "Fix: set it to an integer from `vyre-vk doctor`'s device list.") from None
    if not 0 <= index < 2**31:
        raise DeviceError(f"VYRE_VK_DEVICE={raw} is not a device index (0 to 2^31 - 1). "
                          "Fix: use an index from `vyre-vk doctor`.")
    return index


_probes: dict = {}  # (probe, index, device name) -> its result, this process's

#: ``VYRE_VK_FMA=unfused`` skips the fma probe and keeps the integer division (A/B timing);
#: ``VYRE_VK_FLOAT64=off`` skips the float64 probe and keeps exp and tanh in float-float;
#: ``VYRE_VK_8BIT=off`` keeps byte stores as compare-and-swap on words where the device has 8-bit storage.
FMA_ENV, FLOAT64_ENV, STORAGE_8BIT_ENV = "VYRE_VK_FMA", "VYRE_VK_FLOAT64", "VYRE_VK_8BIT"
#: ``VYRE_VK_NATIVE_MATH=off`` keeps every exact helper in the fast precision (no native-math probe).
NATIVE_MATH_ENV = "VYRE_VK_NATIVE_MATH"


def _probe_wanted(env: str, off: str, meaning: str, on: str = "probe") -> bool:
    raw = os.environ.get(env, "").strip().lower()
    if raw in ("", on):
        return True
    if raw == off:
        return False
    raise DeviceError(f"{env}={raw!r} is not '{on}' or '{off}'. Fix: unset it, or set it to "
                      f"'{off}' to {meaning} on every device.")


def fused_fma_wanted() -> bool:
    """False when ``$VYRE_VK_FMA`` asks for the integer division; raises on other values."""
    return _probe_wanted(FMA_ENV, "unfused", "keep the integer division")


def float64_wanted() -> bool:
    """False when ``$VYRE_VK_FLOAT64`` asks for float-float exp/tanh; raises on other values."""
    return _probe_wanted(FLOAT64_ENV, "off", "keep exp and tanh in float-float")


def storage_8bit_wanted() -> bool:
    """False when ``$VYRE_VK_8BIT`` asks for byte stores by compare-and-swap; raises on other values."""
    return _probe_wanted(STORAGE_8BIT_ENV, "off", "store bytes by compare-and-swap on their words", on="on")


class Device:
    """One Vulkan device (a kp.Manager) and everything compiled on it.

    ``index`` defaults to ``$VYRE_VK_DEVICE`` or 0. On open the loop-count probe
    runs once; a device that truncates loops is refused unless
    ``allow_loop_limit=True`` (results of long loops would be wrong). The fma probe
    (vyre_vk.runtime.probes) decides ``limits.fused_fma``: whether shaders may use the
    fast exact division (``VYRE_VK_FMA=unfused`` turns that off); the float64 probe decides
    ``limits.float64``: exp and tanh in double (``VYRE_VK_FLOAT64=off`` turns that off). Where kp enabled
    8-bit storage, ``limits.storage_8bit`` stores bytes one at a time (``VYRE_VK_8BIT=off`` turns that off).
    """

    def __init__(self, index: int | None = None, *, allow_loop_limit: bool = False) -> None:
        if index is not None and (type(index) is not int or not 0 <= index < 2**31):
            raise DeviceError(f"device index {index!r} is not a non-negative integer. "
                              "Fix: pass an index from `vyre-vk doctor`'s device list.")
        self.index = default_index() if index is None else index
        self.max_kernels = _env_int("VYRE_VK_MAX_KERNELS", DEFAULT_MAX_KERNELS, 1)
        self.host_tensor_bytes = _env_int("VYRE_VK_HOST_TENSOR_BYTES", DEFAULT_HOST_TENSOR_BYTES, 0)
        global _open_after_collect
        if len(_open_devices) >= _open_after_collect + COLLECT_AFTER_OPEN_DEVICES:
            # A Device dropped without close() sits in a reference cycle with its kernels until the
            # cyclic GC runs, which a few big Vulkan objects never trigger: collect now. Devices
            # still open after a collection are in use, so they do not trigger the next one.
            gc.collect()
            _open_after_collect = len(_open_devices)
        self._mgr = kp_bridge.manager(self.index)
        self.serial = next(_serials)  # tells two Devices on one index apart in messages
        self._pid = os.getpid()
        self._forked = False
        self._closed = False
        self._finalizer = weakref.finalize(self, _destroy_manager, self._mgr, self._pid)
        self.lock = threading.RLock()  # kp objects of one manager are not thread-safe
        self._kernels: "OrderedDict[str, Kernel]" = OrderedDict()
        self._recent: dict[tuple, tuple] = {}
        self.properties: dict = dict(self._mgr.get_device_properties())
        self.name: str = self.properties["device_name"]
        self.device_class = device_class(self.name)
        kp_bridge.set_spin_wait(self.name)
        _open_devices.add(self)
        # A driver build computes the same every time: each probe runs once per device and process,
        # and its result is kept on disk for the next process (probes.cached).
        self.probe = self._probe("loop", loop_probe_spirv, LoopProbe, lambda: self.loop_probe())
        self.fma = self._probe("fma", division_spirv, FmaProbe, lambda: fma_probe(self._mgr)) \
            if fused_fma_wanted() else None
        self.float64 = None
        if float64_wanted():  # without shaderFloat64 there is nothing to probe
            self.float64 = Float64Probe(0, 0) if not self.properties.get("shader_float64") else \
                self._probe("float64", float64_spirv, Float64Probe, lambda: float64_probe(self._mgr))
        limits = DeviceLimits.from_properties(self.properties, self.name)  # storage_8bit: what kp enabled
        self.limits = replace(limits, fused_fma=self.fma is not None and self.fma.passed,
                              float64=self.float64 is not None and self.float64.passed,
                              storage_8bit=limits.storage_8bit and storage_8bit_wanted())
        if not self.probe.passed and not allow_loop_limit:
            self.close()
            raise DeviceError(
                f"device {self.index} ({self.name}) fails the {self.probe}. Any program with long "
                "loops would silently return wrong numbers. Fix: install Mesa lavapipe 25.x "
                "(tools/bootstrap.sh), pick another device with VYRE_VK_DEVICE, or pass "
                "allow_loop_limit=True to accept truncated loops.")

    def _probe(self, kind: str, shader, cls, run):
        key = (kind, self.index, self.name)
        if key not in _probes:
            _probes[key] = cached(self.properties, kind, shader(), cls, run)
        return _probes[key]

    @property
    def manager(self) -> "kp.Manager":
        self.check_usable()
        return self._mgr

    def check_usable(self) -> None:
        """Raise DeviceError if this device is closed or was inherited through fork()."""
        if self._forked:
            raise DeviceError(
                f"{self} was opened in process {self._pid} and inherited by this forked process, where "
                "its Vulkan objects cannot be used (the driver's threads did not survive fork). Fix: open "
                "a new Device in the child (vyre_vk.run does so by itself), or start workers with "
                "multiprocessing.get_context('spawn').")
        if self._closed:
            raise DeviceError(f"{self} is closed. Fix: open a new Device.")

    def loop_probe(self) -> LoopProbe:
        """Dispatch the loop-count probe and report what it counted."""
        words = loop_probe_spirv()
        bounds = np.array([LOOP_PROBE_N, LOOP_PROBE_OUTER, LOOP_PROBE_INNER], dtype=np.uint32)
        with self.lock:
            mgr = self.manager
            t_in = kp_bridge.tensor(mgr, bounds)
            t_out = kp_bridge.tensor(mgr, np.zeros(2, dtype=np.uint32))
            algo = kp_bridge.algorithm(mgr, [t_in, t_out], words, (1, 1, 1))
            seq = mgr.sequence()
            (seq.record(kp_bridge.sync_device([t_in, t_out]))
                .record(kp_bridge.dispatch(algo))
                .record(kp_bridge.sync_local([t_out]))
                .eval())
            counts = t_out.data().copy()
            for obj in (seq, algo, t_in, t_out):
                obj.destroy()
        return LoopProbe(int(counts[0]), int(counts[1]))

    @property
    def closed(self) -> bool:
        """True once closed, or in a forked child that inherited it (it is unusable there)."""
        return self._closed or self._forked

    def _remember(self, key: str, kernel: "Kernel") -> "Kernel":
        """Keep ``kernel`` under ``key`` (LRU, at most ``max_kernels``); the first one kept wins."""
        with self.lock:
            kept = self._kernels.setdefault(key, kernel)
            self._kernels.move_to_end(key)
            while len(self._kernels) > self.max_kernels:
                _, old = self._kernels.popitem(last=False)
                if all(k is not old for k in self._kernels.values()):
                    old.release()
            return kept

    def _cached(self, key: str) -> "Kernel | None":
        with self.lock:
            kernel = self._kernels.get(key)
            if kernel is not None:
                self._kernels.move_to_end(key)
            return kernel

    def forget(self, kernel: "Kernel") -> None:
        """Drop ``kernel`` from this device's cache and free its Vulkan objects now.

        >>> dev.forget(dev.compile(program))   # doctest: +SKIP
        """
        with self.lock:
            for key in [k for k, v in self._kernels.items() if v is kernel]:
                del self._kernels[key]
            for key in [k for k, v in self._recent.items() if v[1] is kernel]:
                del self._recent[key]
            kernel.release()

    def clear_kernels(self) -> None:
        """Drop every cached kernel (each is freed; recompiling hits the SPIR-V cache)."""
        with self.lock:
            kernels = list(self._kernels.values())
            self._kernels.clear()
            self._recent.clear()
            for kernel in kernels:
                kernel.release()

    def native_math(self) -> "NativeMathProbe | None":
        """The native-math probe's verdict on this device (run on first use, cached like the
        others), or None under ``VYRE_VK_NATIVE_MATH=off``: which builtins the fast precision uses."""
        from vyre_vk.runtime.native_math import NativeMathProbe, native_math_probe, native_spirv

        if not _probe_wanted(NATIVE_MATH_ENV, "off", "keep every exact helper in the fast precision"):
            return None
        return self._probe("native_math", native_spirv, NativeMathProbe, lambda: native_math_probe(self.manager))

    def compile(self, program: "Program", optimize=True, *, validate: bool = True,
                precision: str = "exact") -> "Kernel":
        """Validate, optimise, lower and compile ``program`` for this device (cached).

        ``optimize``: True (default) runs every optimiser pass (vyre_vk.opt), a set of
        pass names runs those, False compiles the program as written. The compile itself
        is :func:`vyre_vk.compile.compile_program`; the kernel may dispatch several stages
        in one submission if a pass split the program (``kernel.explain()`` says why).
        ``validate=False`` skips the IR rules and compiles the program as written (see
        compile_program). ``precision="fast"`` trades the reference's bits for speed within the
        documented bounds (docs/PRECISION.md): plain f32 arithmetic, and the builtins the
        native-math probe measured within vyre's windows on this device.

        >>> kernel = dev.compile(program)          # doctest: +SKIP
        >>> out = kernel(a=np.arange(4, dtype=np.uint32))
        """
        self.check_usable()
        passes = optimize if optimize is True or optimize is False else frozenset(optimize)
        if not validate:
            passes = False
        # Same Program object as a recent call: no hashing, no validation (vyre_vk.run's path).
        recent = self._recent.get((id(program), passes, validate, precision))
        if recent is not None and recent[0] is program:
            return recent[1]
        from vyre_vk.compile import Options, compile_program
        from vyre_vk.ir import Program
        from vyre_vk.runtime.kernel import Kernel

        limits = self.limits
        if precision == "fast":
            probe = self.native_math()
            limits = replace(limits, native_math=probe.allowed if probe is not None else ())
        options = Options(passes, self.device_class, limits, precision)
        if not isinstance(program, Program):  # compile_program says what it got and what to pass
            return Kernel(self, compile_program(program, options))
        key = f"{program.content_hash()}|{options.key}|{'checked' if validate else 'unchecked'}"
        kernel = self._cached(key)
        if kernel is None:
            kernel = self._remember(key, Kernel(self, compile_program(program, options, validate=validate)))
        with self.lock:
            self._recent[(id(program), passes, validate, precision)] = (program, kernel)  # keeps `program` alive
            while len(self._recent) > RECENT_PROGRAMS:
                self._recent.pop(next(iter(self._recent)))
        return kernel

    def array(self, data: np.ndarray) -> "DeviceArray":
        """Upload ``data`` once; pass the result to ``Kernel.run`` to skip its per-run upload."""
        from vyre_vk.runtime.buffer import DeviceArray

        return DeviceArray(self, data)

    def close(self) -> None:
        """Free every Vulkan object made on this device. Idempotent."""
        with self.lock:
            if not self._closed:
                self._closed = True
                self._kernels.clear()
                self._recent.clear()
                _open_devices.discard(self)
                if not self._forked:  # the parent owns those objects
                    self._finalizer()
                else:
                    self._finalizer.detach()

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "forked" if self._forked else "closed" if self._closed else "open"
        return f"<vyre_vk.Device #{self.serial} [index {self.index}]: {self.name} ({state})>"
