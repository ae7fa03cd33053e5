"""Device limits: typed errors before any allocation or dispatch, never a driver crash.

Limits used: maxComputeWorkGroupCount / maxComputeWorkGroupSize / maxComputeWorkGroupInvocations
and (patch 0008) maxComputeSharedMemorySize / maxStorageBufferRange from kp's
get_device_properties(); a bound buffer is at most min(maxStorageBufferRange, 2**31 - 1) bytes.
"""
import dataclasses

import numpy as np
import pytest

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.runtime import Device, DeviceError, LaunchError, LoopProbe, kp_bridge
from vyre_vk.runtime.device import LOOP_PROBE_INNER, LOOP_PROBE_N, LOOP_PROBE_OUTER
from vyre_vk.runtime import device as device_module

U32 = DataType.U32


def _copy(count_in=0, count_out=4, wg=(4, 1, 1)):
    i = Expr.gid_x()
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(count_in), BufferDecl.output("out", 1, U32).with_count(count_out)],
                           wg, [wrap_anonymous("t", [Node.store("out", i, Expr.load("a", i))])])


@pytest.fixture
def no_kp(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("reached kp")
    for name in ("tensor", "algorithm"):
        monkeypatch.setattr(kp_bridge, name, boom)


@pytest.mark.parametrize("count", [2**29, 2**30, 2**32 - 1])
def test_declared_buffer_over_the_storage_limit(vk_device, no_kp, count):
    with pytest.raises(LaunchError, match="storage buffer range"):
        vk_device.compile(_copy(count_out=count))


def test_bound_array_over_the_storage_limit_before_upload(vk_device, monkeypatch):
    k = vk_device.compile(_copy())
    monkeypatch.setattr(k, "_max_bytes", 64)
    assert k.run({"a": np.arange(16, dtype=np.uint32)})["out"].tolist() == [0, 1, 2, 3]  # 64 bytes: fits
    monkeypatch.setattr(kp_bridge, "tensor", lambda *a: (_ for _ in ()).throw(AssertionError("reached kp")))
    with pytest.raises(LaunchError, match="storage buffer range"):
        k.run({"a": np.arange(17, dtype=np.uint32)})


def test_grid_over_max_work_group_count(vk_device, no_kp):
    lim = vk_device.properties["max_work_group_count"]
    # as written (optimize=False): the free-workgroup-size pass would shrink this grid below the limit
    k = vk_device.compile(_copy(count_out=lim[0] + 1, wg=(1, 1, 1)), optimize=False)  # lim+1 workgroups
    with pytest.raises(LaunchError, match="maxComputeWorkGroupCount"):
        k.run({"a": np.arange(4, dtype=np.uint32)})
    for grid in [(lim[0] + 1, 1, 1), (1, lim[1] + 1, 1), (1, 1, 2**32), (0, 1, 1), (1, 1)]:
        with pytest.raises(LaunchError):
            k.run({"a": np.arange(4, dtype=np.uint32)}, grid=grid)


def test_workgroup_over_device_limits(vk_device, monkeypatch):
    small = dataclasses.replace(vk_device.limits, workgroup_size=(32, 4, 1), workgroup_invocations=64)
    monkeypatch.setattr(vk_device, "limits", small)
    monkeypatch.setattr(vk_device, "_kernels", type(vk_device._kernels)())
    for wg in [(64, 1, 1), (1, 8, 1), (1, 1, 2), (32, 4, 1)]:  # last: per-axis ok, 128 > 64 invocations
        with pytest.raises(LaunchError, match="workgroup size"):
            vk_device.compile(_copy(wg=wg))
    assert vk_device.compile(_copy(wg=(16, 4, 1))).run({"a": np.arange(4, dtype=np.uint32)})["out"].tolist() == [0, 1, 2, 3]


def test_truncating_device_is_refused_unless_the_user_opts_in(monkeypatch, tmp_path):
    truncated = LoopProbe(flat=65535, nested=65535)  # bookworm's lavapipe 22.3
    assert not truncated.passed and LoopProbe(LOOP_PROBE_N, LOOP_PROBE_OUTER * LOOP_PROBE_INNER).passed
    monkeypatch.setattr(Device, "loop_probe", lambda self: truncated)
    monkeypatch.setattr(device_module, "_probes", {})  # this process's earlier probe results
    monkeypatch.setenv("VYRE_VK_CACHE_DIR", str(tmp_path))  # and the disk's
    with pytest.raises(DeviceError, match="truncates loops"):
        Device()
    dev = Device(allow_loop_limit=True)
    try:
        assert dev.probe == truncated and not dev.closed
    finally:
        dev.close()


def test_real_probe_passes_on_this_device(vk_device):
    assert vk_device.probe.passed, str(vk_device.probe)
