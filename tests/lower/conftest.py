"""Run lowered programs on the Vulkan device for the lowering tests.

`run_vulkan(program, inputs)` mirrors `vyre_vk.reference.run`: same inputs (a name ->
array mapping), same grid (reference.dispatch_grid), returns every result buffer by name.
It goes through vyre_vk.runtime.kp_bridge directly (one Kompute tensor per binding slot,
in binding order) until the runtime's Kernel lands on main.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np
import pytest

from vyre_vk.ir import DataType, Program, canon
from vyre_vk.lower import TRAP_WORDS, lower
from vyre_vk.reference import dispatch_grid
from vyre_vk.runtime import Device, kp_bridge
from vyre_vk.spirv import compile_glsl


class GpuTrap(RuntimeError):
    """The dispatch set the trap flag (the reference would have raised)."""


_DEVICE: Optional[Device] = None


def _device() -> Device:
    global _DEVICE
    if _DEVICE is None:
        _DEVICE = Device()
    return _DEVICE


@pytest.fixture(scope="session")
def device() -> Device:
    return _device()


def _host_array(decl, value) -> np.ndarray:
    st = decl.element.numpy
    if isinstance(value, (bytes, bytearray)):
        return np.frombuffer(bytes(value), dtype=st.newbyteorder("<")).astype(st)
    arr = np.asarray(value).reshape(-1)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.uint32)
    if decl.element is DataType.F32:
        return arr.astype(np.float32)  # raw: NaN payloads and subnormals reach the GPU as given
    return arr.astype(np.int64).astype(st) if arr.dtype.kind in "iu" else arr.astype(st)


def run_vulkan(program: Program, inputs: Mapping[str, object],
               grid: Optional[Sequence[int]] = None, *, latency_bound: bool = False) -> dict[str, np.ndarray]:
    dev = _device()
    low = lower(program, latency_bound=latency_bound)
    words = compile_glsl(low.glsl, target_env=low.target_env)
    arrays: dict[int, np.ndarray] = {}
    for b in low.bindings:
        if b.is_input:
            arrays[b.binding] = _host_array(b, inputs[b.name])
        else:
            arrays[b.binding] = np.zeros(b.count, dtype=b.element.numpy)
    if grid is None:
        grid = dispatch_grid(program, {b.name: arrays[b.binding].size for b in low.bindings})
    if low.trap_binding is not None:
        arrays[low.trap_binding] = np.zeros(TRAP_WORDS, np.uint32)
    # Kompute binds tensor k at binding k: fill unused slots with a one-word dummy.
    slots = [arrays.get(k, np.zeros(1, np.uint32)) for k in range(max(arrays, default=-1) + 1)]
    mgr = dev.manager
    tensors = [kp_bridge.tensor(mgr, a) for a in slots]
    # U8/I8 buffers: their byte counts as specialization constants (vyre_vk/lower/bytes.py)
    sizes = {b.name: arrays[b.binding].size for b in low.bindings}
    algo = kp_bridge.algorithm(mgr, tensors, words, tuple(int(g) for g in grid),
                               [sizes[n] for n in low.byte_lengths])
    seq = mgr.sequence()
    (seq.record(kp_bridge.sync_device(tensors))
        .record(kp_bridge.dispatch(algo))
        .record(kp_bridge.sync_local(tensors))
        .eval())
    data = [t.data().copy() for t in tensors]
    for obj in [seq, algo, *tensors]:
        obj.destroy()
    if low.trap_binding is not None and data[low.trap_binding][0] != 0:
        tw = data[low.trap_binding]
        raise GpuTrap(f"trap code {tw[1]} ({low.trap_codes.get(int(tw[1]))}) at invocation {tw[2]}, address {tw[3]}")
    out = {}
    for b in low.bindings:
        if b.is_result:
            out[b.name] = data[b.binding].view(b.element.numpy)[:sizes[b.name]]  # a byte buffer's padding off
    return out


def ulp_key(x: np.ndarray) -> np.ndarray:
    """Sign-ordered integer key of f32 bits: adjacent floats differ by 1 (+0 and -0 by 1)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    return np.where(b & 0x80000000, ~b & 0xFFFFFFFF, b | 0x80000000)  # vyre fp_contract.rs


def assert_same(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray], ulp: int = 0) -> None:
    """Integers/bools bit-exact; f32 within `ulp` (canonical NaN must match exactly)."""
    assert set(got) == set(want)
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape, name
        if w.dtype == np.float32:
            gb, wb = g.view(np.uint32), w.view(np.uint32)
            if ulp == 0:
                bad = gb != wb
            else:
                nan = np.isnan(w) | np.isnan(g)
                bad = np.where(nan, gb != wb, np.abs(ulp_key(g) - ulp_key(w)) > ulp)
            assert not bad.any(), (f"{name}: {int(bad.sum())} of {w.size} differ; first at "
                                   f"{np.flatnonzero(bad)[:5]}: got {g[bad][:5]} ({gb[bad][:5]}) "
                                   f"want {w[bad][:5]} ({wb[bad][:5]})")
        else:
            assert np.array_equal(g.view(w.dtype), w), f"{name}: got {g[:16]} want {w[:16]}"
