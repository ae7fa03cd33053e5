"""The one place that touches ``kp`` (Kompute 0.9.0), so its traps are handled once.

- ``mgr.tensor`` makes float32 whatever it is given: use ``tensor_t`` with an
  exact dtype.
- Leaving out the workgroup count launches one *workgroup* per element of the
  first tensor: always pass it.
- Spec/push constants given as lists become float32; pass NumPy arrays of one
  4-byte dtype, even when empty. kp numbers spec constants by position (constant_id k).
- kp holds no 8-bit tensors: a uint8/int8 array (a U8/I8 buffer) becomes a uint32 tensor of
  its bytes zero-padded to whole words, which is exactly the packed layout the shaders read
  (vyre_vk/lower/bytes.py); :func:`byte_view` is the byte array inside a word view.
- Without the fence patch every submission creates and destroys a fence
  (~550 us on an H200); without the barrier patch dependent dispatches race.
  ``require_patches`` refuses a stock kp rather than run slow or wrong.
"""
from __future__ import annotations

from vyre_vk.errors import EnvironmentProblem
import os
from typing import Sequence

import numpy as np

import kp

REQUIRED_PATCHES = ("0001-sequence-reuse-fence", "0002-python-op-memory-barrier",
                    "0003-python-eval-async-no-arg", "0005-sequence-reset-timestamp-queries",
                    "0006-sequence-spin-wait", "0007-manager-check-create-instance",
                    "0008-python-device-limits", "0009-manager-enable-float64",
                    "0010-manager-enable-8bit-storage", "0011-python-op-dispatch-bare",
                    "0012-python-op-global-barrier", "0013-tensor-device-local-host")

# kp 0.9.0's tensor_t accepts exactly these; bool is stored as one 32-bit word
# by the IR, so the runtime never hands kp a numpy bool array.
KP_DTYPES = (np.dtype(np.float32), np.dtype(np.uint32), np.dtype(np.int32))
#: Byte arrays: packed into uint32 words on the way to kp.
BYTE_DTYPES = (np.dtype(np.uint8), np.dtype(np.int8))
_EMPTY_CONSTS = np.zeros(0, dtype=np.uint32)


class KomputeError(EnvironmentProblem, RuntimeError):
    """kp is missing, unpatched, or refused an operation."""


CPU_DEVICES = ("llvmpipe", "swiftshader", "lavapipe")
DEFAULT_SPIN_WAIT_US = 200


def set_spin_wait(device_name: str) -> int:
    """Choose how long submissions poll their fence before blocking (process-wide, patch 0006).

    Polling saves ~30 us per submission on a GPU but steals a core from a CPU device
    (lavapipe), so it is on for GPUs only; ``$VYRE_VK_SPIN_WAIT_US`` overrides.
    """
    env = os.environ.get("VYRE_VK_SPIN_WAIT_US")
    if env is not None:
        try:
            us = int(env)
        except ValueError:
            us = -1
        if not 0 <= us <= 10_000_000:
            raise KomputeError(f"VYRE_VK_SPIN_WAIT_US={env!r} is not a number of microseconds (0 to 10000000). "
                               f"Fix: set it to e.g. {DEFAULT_SPIN_WAIT_US}, 0 to never spin, or unset it.")
    else:
        us = 0 if any(c in device_name.lower() for c in CPU_DEVICES) else DEFAULT_SPIN_WAIT_US
    kp.set_spin_wait_us(us)
    return us


def patches() -> tuple[str, ...]:
    return tuple(getattr(kp, "__vyre_patches__", ()))


def require_patches() -> None:
    missing = [p for p in REQUIRED_PATCHES if p not in patches()]
    if missing:
        raise KomputeError(
            f"the installed kp ({getattr(kp, '__file__', '?')}) lacks vyre-vk's patches {missing}. "
            "Fix: run tools/bootstrap.sh, which builds kp 0.9.0 with patches/kp/*.patch.")


def manager(index: int) -> "kp.Manager":
    require_patches()
    try:
        return kp.Manager(index)
    except RuntimeError as e:
        raise KomputeError(f"Kompute could not open Vulkan device {index}: {e}. "
                           "Fix: run `vyre-vk doctor` to list devices, or set VYRE_VK_DEVICE.") from e


def list_devices() -> list[dict]:
    """Every Vulkan device Kompute can see (creates and destroys a throwaway manager)."""
    require_patches()
    try:
        mgr = kp.Manager()
    except RuntimeError as e:
        if "no such physical index" in str(e):
            return []
        raise KomputeError(f"Kompute could not start Vulkan: {e}. "
                           "Fix: install a Vulkan driver (tools/bootstrap.sh installs Mesa lavapipe).") from e
    try:
        return list(mgr.list_devices())
    finally:
        mgr.destroy()


def packed_words(data: np.ndarray) -> np.ndarray:
    """A byte array's bytes, zero-padded to whole (and at least one) words, as uint32 words.

    >>> packed_words(np.array([1, 2, 3, 4, 5], np.uint8)).tolist()
    [67305985, 5]
    """
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    words = np.zeros(max(1, -(-raw.size // 4)), np.uint32)
    words.view(np.uint8)[:raw.size] = raw
    return words


def byte_view(words: np.ndarray, count: int, dtype: np.dtype) -> np.ndarray:
    """The first `count` bytes of a word array as `dtype` (uint8 or int8): a view, not a copy."""
    return words.view(dtype)[:count]


def tensor(mgr: "kp.Manager", data: np.ndarray, host: bool = False, write_only: bool = False) -> "kp.Tensor":
    """A kp tensor holding `data`. ``host=True``: one host-visible buffer that shaders read and
    write in place (no staging copy to record: see :func:`host_read_barrier`), else a device-local
    buffer with a host-visible staging twin. ``write_only`` (with ``host``): the host only ever
    writes it, so it goes in device-local host-visible memory where the device has some (kp patch
    0013), which shaders read without crossing the bus; host reads of that memory are uncached."""
    arr = np.ascontiguousarray(data).reshape(-1)
    if arr.dtype in BYTE_DTYPES:
        arr = packed_words(arr)
    if arr.dtype not in KP_DTYPES:
        raise KomputeError(f"kp tensors here are float32/uint32/int32, got {arr.dtype}. "
                           "Fix: convert the array first (a vyre-vk bug if it came through the runtime).")
    if arr.size == 0:
        raise KomputeError("Vulkan buffers cannot be empty. Fix: pass at least one element.")
    if not host:
        return mgr.tensor_t(arr)
    t = mgr.tensor_t(arr, kp.TensorTypes.host)
    if write_only and device_local_host():
        t.prefer_device_local_host()  # re-allocated, zeroed, wherever it landed: written again
        t.data()[...] = arr
    return t


def algorithm(mgr: "kp.Manager", tensors: Sequence["kp.Tensor"], spirv: bytes,
              workgroups: tuple[int, int, int], spec_constants: Sequence[int] = ()) -> "kp.Algorithm":
    """A pipeline; `spec_constants` are u32 values for constant_id 0, 1, ... (byte buffer lengths)."""
    if len(spirv) % 4:
        raise KomputeError("SPIR-V length is not a multiple of 4 bytes. Fix: pass a whole SPIR-V module.")
    if min(workgroups) < 1:
        raise KomputeError(f"workgroup count {workgroups} must be >= 1 on every axis. Fix: pass e.g. (1, 1, 1).")
    spec = np.asarray(spec_constants, np.uint32) if len(spec_constants) else _EMPTY_CONSTS
    return mgr.algorithm(list(tensors), spirv, list(workgroups), spec, _EMPTY_CONSTS)


def dispatch(algo: "kp.Algorithm", ordered: bool = False) -> "kp.OpBase":
    """A dispatch of `algo`. kp's OpAlgoDispatch first records a transfer -> compute barrier per
    tensor; ``ordered=True`` records the dispatch alone (kp patch 0011), for a caller that records
    the barriers its tensors need (:func:`transfer_barrier` after a staging copy)."""
    return kp.OpDispatchBare(algo) if ordered else kp.OpAlgoDispatch(algo, _EMPTY_CONSTS)


def transfer_barrier(tensors: Sequence["kp.Tensor"]) -> "kp.OpMemoryBarrier":
    """Order staging copies (:func:`sync_device`) before the shaders that read or write the tensors."""
    return kp.OpMemoryBarrier(list(tensors), kp.ACCESS_TRANSFER_WRITE,
                              kp.ACCESS_SHADER_READ | kp.ACCESS_SHADER_WRITE, kp.STAGE_TRANSFER,
                              kp.STAGE_COMPUTE_SHADER)


def sync_device(tensors: Sequence["kp.Tensor"]) -> "kp.OpTensorSyncDevice":
    return kp.OpTensorSyncDevice(list(tensors))


def sync_local(tensors: Sequence["kp.Tensor"]) -> "kp.OpTensorSyncLocal":
    return kp.OpTensorSyncLocal(list(tensors))


def global_barriers() -> bool:
    """``$VYRE_VK_GLOBAL_BARRIERS=1``: the runtime's host-read and compute barriers as one global
    memory barrier each (kp patch 0012) instead of a buffer barrier per tensor (an A/B knob for
    measurements, read when a plan is built, as the other knobs are)."""
    return os.environ.get("VYRE_VK_GLOBAL_BARRIERS") == "1"


def device_local_host() -> bool:
    """Whether host-written tensors may go in device-local host-visible memory (resizable BAR):
    ``$VYRE_VK_HOST_DEVICE_LOCAL=0`` keeps them in plain host memory (an A/B knob, read when a plan
    is built). On an H100 (tools/bench/latency_parts.py) a 64-element map's Kernel.run is ~0.7 us
    shorter with its input there, and small ops whose stages share scratch 2-4 us."""
    return os.environ.get("VYRE_VK_HOST_DEVICE_LOCAL") != "0"


def host_read_barrier(tensors: Sequence["kp.Tensor"]) -> "kp.OpBase":
    """Make shader writes to host-visible tensors visible to the host (a fence wait alone does not).
    kp's OpTensorSyncLocal records nothing for host tensors, so this is the whole download."""
    if global_barriers():
        return kp.OpGlobalBarrier(kp.ACCESS_SHADER_WRITE, kp.ACCESS_HOST_READ, kp.STAGE_COMPUTE_SHADER,
                                  kp.STAGE_HOST)
    return kp.OpMemoryBarrier(list(tensors), kp.ACCESS_SHADER_WRITE, kp.ACCESS_HOST_READ,
                              kp.STAGE_COMPUTE_SHADER, kp.STAGE_HOST)


def compute_barrier(tensors: Sequence["kp.Tensor"]) -> "kp.OpBase":
    """Order earlier compute writes before later compute reads and writes."""
    if global_barriers():
        return kp.OpGlobalBarrier(kp.ACCESS_SHADER_WRITE, kp.ACCESS_SHADER_READ | kp.ACCESS_SHADER_WRITE,
                                  kp.STAGE_COMPUTE_SHADER, kp.STAGE_COMPUTE_SHADER)
    return kp.OpMemoryBarrier(list(tensors))
