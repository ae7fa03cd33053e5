"""The patched kp and pyshaderc builds: in-process compile, dispatch, barriers, async, resources."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kp
from vyre_vk import spirv
from vyre_vk.runtime import kp_bridge


def run_once(mgr, tensors, words, groups, outputs):
    algo = kp_bridge.algorithm(mgr, tensors, words, groups)
    (mgr.sequence().record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo))
        .record(kp_bridge.sync_local(outputs)).eval())
    return [t.data().copy() for t in outputs]


def test_module_records_its_patches():
    assert set(kp_bridge.REQUIRED_PATCHES) <= set(kp.__vyre_patches__)
    assert kp.__version__ == "0.9.0"


def test_float64_is_enabled_and_reported(device):
    """Patch 0009: lavapipe has shaderFloat64, so the device is created with it and says so; a
    double computation then runs (1/3 in double keeps 29 bits that an f32 does not)."""
    assert device.manager.get_device_properties()["shader_float64"] is True
    glsl = """#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer O { float o[]; };
void main() { double t = double(o[0]) / 3.0LF; o[1] = float((t - 0.333333343267440796LF) * 1e8LF); o[0] = float(t); }
"""
    t = kp_bridge.tensor(device.manager, np.array([1.0, 0.0], np.float32))
    (out,) = run_once(device.manager, [t], spirv.compile_glsl(glsl), (1, 1, 1), [t])
    # f32(1/3), and the double 1/3's distance from it (the literal): only a double holds that
    assert out[0] == np.float32(1 / 3) and out[1] == np.float32((1 / 3 - float(np.float32(1 / 3))) * 1e8)


def test_8bit_storage_is_enabled_and_reported(device):
    """Patch 0010: lavapipe has storageBuffer8BitAccess, so the device is created with it and says so;
    a shader then stores single bytes of a storage buffer, and the neighbouring bytes keep theirs."""
    assert device.manager.get_device_properties()["storage_buffer_8bit"] is True
    glsl = """#version 450
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer O { uint8_t o[]; };
void main() { uint i = gl_LocalInvocationID.x; if (i % 3u != 0u) o[i] = uint8_t(uint(o[i]) + 200u); }
"""
    t = kp_bridge.tensor(device.manager, np.array([0x04030201, 0x08070605], np.uint32))
    (out,) = run_once(device.manager, [t], spirv.compile_glsl(glsl), (1, 1, 1), [t])
    want = np.array([b if i % 3 == 0 else (b + 200) & 0xFF for i, b in enumerate(range(1, 9))], np.uint8)
    assert out.view(np.uint8).tolist() == want.tolist()


def test_bare_dispatch_after_a_transfer_barrier(device):
    """Patch 0011: kp.OpDispatchBare records the bind and the dispatch only. After a staging copy and
    the runtime's transfer barrier, two dependent dispatches ordered by a compute barrier give each
    element's (x + 1) * 3, and the same algorithm dispatched bare again on the results goes on."""
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(constant_id = 0) const uint MUL = 1u;
void main() { uint i = gl_GlobalInvocationID.x; if (i < a.length()) a[i] = a[i] * MUL + (MUL == 1u ? 1u : 0u); }
"""
    mgr = device.manager
    x = np.arange(1000, dtype=np.uint32)
    t = kp_bridge.tensor(mgr, x)
    words = spirv.compile_glsl(glsl)
    add = kp_bridge.algorithm(mgr, [t], words, (16, 1, 1), [1])
    mul = kp_bridge.algorithm(mgr, [t], words, (16, 1, 1), [3])
    seq = (mgr.sequence().record(kp_bridge.sync_device([t])).record(kp_bridge.transfer_barrier([t]))
           .record(kp_bridge.dispatch(add, ordered=True)).record(kp_bridge.compute_barrier([t]))
           .record(kp_bridge.dispatch(mul, ordered=True)).record(kp_bridge.sync_local([t])))
    assert isinstance(kp_bridge.dispatch(add, ordered=True), kp.OpDispatchBare)
    seq.eval()
    np.testing.assert_array_equal(t.data(), (x + 1) * 3)
    t.data()[:] = x
    seq.eval()  # replayed: the staging copy, both dispatches and the download again
    np.testing.assert_array_equal(t.data(), (x + 1) * 3)
    # patch 0012: the same order through one global barrier each (no tensor named)
    glob = (mgr.sequence().record(kp_bridge.sync_device([t])).record(kp_bridge.transfer_barrier([t]))
            .record(kp_bridge.dispatch(add, ordered=True))
            .record(kp.OpGlobalBarrier(kp.ACCESS_SHADER_WRITE, kp.ACCESS_SHADER_READ | kp.ACCESS_SHADER_WRITE,
                                       kp.STAGE_COMPUTE_SHADER, kp.STAGE_COMPUTE_SHADER))
            .record(kp_bridge.dispatch(mul, ordered=True)).record(kp_bridge.sync_local([t])))
    t.data()[:] = x + 5
    glob.eval()
    np.testing.assert_array_equal(t.data(), (x + 6) * 3)
    for o in (seq, glob, add, mul, t):
        o.destroy()


def test_device_local_host_tensor(device):
    """Patch 0013: a host tensor re-allocated in device-local host-visible memory starts at zero, takes
    the host's writes, and a dispatch reads them (lavapipe's one memory type is device-local and
    host-visible, so it lands there). A device tensor is refused; the plain host tensor stays put."""
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < o.length()) o[i] = a[i] * 3u + 1u; }
"""
    mgr = device.manager
    x = np.arange(7, 7 + 300, dtype=np.uint32)
    a = kp_bridge.tensor(mgr, x, host=True)
    assert not a.is_device_local_host()
    assert a.prefer_device_local_host()
    assert a.is_device_local_host() and a.size() == x.size
    np.testing.assert_array_equal(a.data(), np.zeros_like(x))  # re-allocated: the old data is gone
    a.data()[...] = x
    o = kp_bridge.tensor(mgr, np.zeros_like(x), host=True)
    algo = kp_bridge.algorithm(mgr, [a, o], spirv.compile_glsl(glsl), (5, 1, 1))
    seq = mgr.sequence().record(kp_bridge.dispatch(algo, ordered=True)).record(kp_bridge.host_read_barrier([o]))
    seq.eval()
    np.testing.assert_array_equal(o.data(), x * 3 + 1)
    a.data()[...] = x + 2  # the host's next write is what the replay reads
    seq.eval()
    np.testing.assert_array_equal(o.data(), (x + 2) * 3 + 1)
    assert not o.is_device_local_host()
    d = kp_bridge.tensor(mgr, x)  # device-local with a staging twin: not a host tensor
    assert not d.prefer_device_local_host() and not d.is_device_local_host()
    # kp_bridge's write_only tensor: placed there and holding the data it was made with
    w = kp_bridge.tensor(mgr, x, host=True, write_only=True)
    assert w.is_device_local_host()
    np.testing.assert_array_equal(w.data(), x)
    for t in (seq, algo, a, o, d, w):
        t.destroy()


def test_numpy_2_works_with_kp(device):
    assert int(np.__version__.split(".")[0]) >= 2
    t = kp_bridge.tensor(device.manager, np.arange(5, dtype=np.int32))
    np.testing.assert_array_equal(t.data(), np.arange(5, dtype=np.int32))
    assert t.data().dtype == np.int32


def test_in_process_shader_is_exact(device):
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) buffer B { uint b[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(b.length())) { uint v = a[i] * 2654435761u; b[i] = v ^ (v >> 13u) ^ (i << 3u); }
}
"""
    n = 10_007
    a = np.random.default_rng(1).integers(0, 2**32, n, dtype=np.uint32)
    mgr = device.manager
    ta, tb = kp_bridge.tensor(mgr, a), kp_bridge.tensor(mgr, np.zeros(n, np.uint32))
    (got,) = run_once(mgr, [ta, tb], spirv.compile_glsl(glsl), (-(-n // 64), 1, 1), [tb])
    v = a * np.uint32(2654435761)
    expected = v ^ (v >> np.uint32(13)) ^ (np.arange(n, dtype=np.uint32) << np.uint32(3))
    np.testing.assert_array_equal(got, expected)


SUBGROUP_GLSL = """#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) buffer B { uint b[]; };
layout(std430, binding = 2) buffer S { uint s[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    b[i] = subgroupAdd(a[i]);
    if (i == 0u) { s[0] = gl_SubgroupSize; }
}
"""


def test_subgroup_add_needs_vulkan_1_1_target():
    with pytest.raises(spirv.ShaderCompileError, match="SPIR-V 1.3"):
        spirv.compile_glsl(SUBGROUP_GLSL, target_env="vulkan1.0", cache=False)


def test_subgroup_add_compiles_for_vulkan_1_1_and_runs(device):
    words = spirv.compile_glsl(SUBGROUP_GLSL, target_env="vulkan1.1")
    assert words[4:8] == (0x00010300).to_bytes(4, "little")  # SPIR-V 1.3 module header
    n = 256
    a = np.random.default_rng(2).integers(0, 1000, n, dtype=np.uint32)
    mgr = device.manager
    ta, tb, ts = (kp_bridge.tensor(mgr, v) for v in (a, np.zeros(n, np.uint32), np.zeros(1, np.uint32)))
    got, size = run_once(mgr, [ta, tb, ts], words, (n // 64, 1, 1), [tb, ts])
    sg = int(size[0])
    assert sg >= 1 and 64 % sg == 0, sg
    # Subgroups of a 1-D workgroup are consecutive invocations.
    expected = np.repeat(a.reshape(-1, sg).sum(axis=1, dtype=np.uint32), sg)
    np.testing.assert_array_equal(got, expected)


def test_dependent_dispatches_with_memory_barrier(device):
    # Second dispatch reads what the first wrote, through a different index
    # (neighbour), so a missing barrier on a parallel GPU would read stale data.
    first = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer B { uint b[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(a.length())) { b[i] = a[i] * 3u + 1u; } }
"""
    second = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint b[]; };
layout(std430, binding = 1) buffer C { uint c[]; };
void main() {
    uint i = gl_GlobalInvocationID.x; uint n = uint(b.length());
    if (i < n) { c[i] = b[i] + b[(i + 1u) % n]; }
}
"""
    n = 4099
    a = np.arange(n, dtype=np.uint32)
    mgr = device.manager
    ta, tb, tc = (kp_bridge.tensor(mgr, np.zeros(n, np.uint32) if k else a) for k in range(3))
    groups = (-(-n // 64), 1, 1)
    a1 = kp_bridge.algorithm(mgr, [ta, tb], spirv.compile_glsl(first), groups)
    a2 = kp_bridge.algorithm(mgr, [tb, tc], spirv.compile_glsl(second), groups)
    seq = mgr.sequence()
    (seq.record(kp_bridge.sync_device([ta, tb, tc])).record(kp_bridge.dispatch(a1))
        .record(kp_bridge.compute_barrier([tb])).record(kp_bridge.dispatch(a2))
        .record(kp_bridge.sync_local([tc])).eval())
    b = a * 3 + 1
    np.testing.assert_array_equal(tc.data(), b + np.roll(b, -1))


def test_memory_barrier_flags_are_vulkan_values():
    # VkAccessFlagBits / VkPipelineStageFlagBits from the Vulkan spec.
    assert (kp.ACCESS_SHADER_READ, kp.ACCESS_SHADER_WRITE) == (0x20, 0x40)
    assert (kp.STAGE_COMPUTE_SHADER, kp.STAGE_TRANSFER) == (0x800, 0x1000)


def test_eval_async_returns_before_completion_and_await_completes(device):
    # A kernel long enough that a synchronous eval_async (stock 0.9.0) would
    # already be finished when it returns.
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
void main() {
    uint i = gl_GlobalInvocationID.x; uint v = a[i];
    for (uint k = 0u; k < 20000u; ++k) { v = v * 1664525u + 1013904223u; }
    a[i] = v;
}
"""
    n = 64 * 64
    mgr = device.manager
    ta = kp_bridge.tensor(mgr, np.arange(n, dtype=np.uint32))
    algo = kp_bridge.algorithm(mgr, [ta], spirv.compile_glsl(glsl), (n // 64, 1, 1))
    seq = mgr.sequence()
    seq.record(kp_bridge.sync_device([ta])).record(kp_bridge.dispatch(algo)).record(kp_bridge.sync_local([ta]))
    seq.eval_async()
    assert seq.is_running()  # stock kp ran eval() here, so it would be False
    seq.eval_await()
    assert not seq.is_running()
    v = np.arange(n, dtype=np.uint32)
    for _ in range(20000):
        v = v * np.uint32(1664525) + np.uint32(1013904223)
    np.testing.assert_array_equal(ta.data(), v)


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_thousand_evals_keep_fds_and_rss_flat(device):
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(a.length())) { a[i] += 1u; } }
"""
    mgr = device.manager
    ta = kp_bridge.tensor(mgr, np.zeros(256, np.uint32))
    algo = kp_bridge.algorithm(mgr, [ta], spirv.compile_glsl(glsl), (4, 1, 1))
    seq = mgr.sequence()
    seq.record(kp_bridge.sync_device([ta])).record(kp_bridge.dispatch(algo)).record(kp_bridge.sync_local([ta]))
    for _ in range(50):  # warm up allocators and the driver's JIT
        seq.eval()
    fds0, rss0 = len(os.listdir("/proc/self/fd")), _rss_kib()
    for _ in range(1000):
        seq.eval()
    fds1, rss1 = len(os.listdir("/proc/self/fd")), _rss_kib()
    assert fds1 == fds0
    assert rss1 - rss0 < 4 * 1024, f"RSS grew by {rss1 - rss0} KiB over 1000 evals"
    # sync_device re-uploads the staging copy each time, which the GPU increments
    # and syncs back: the value counts evals exactly.
    np.testing.assert_array_equal(ta.data(), np.full(256, 1050, np.uint32))


def test_doctor_reports_loop_probe_passed():
    out = subprocess.run([sys.executable, "-m", "vyre_vk.cli", "doctor"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "loop probe passed: counted 100,000 of 100,000" in out.stdout
    assert "0001-sequence-reuse-fence" in out.stdout


def test_replayed_sequence_gives_fresh_timestamps(device):
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
void main() { uint v = a[gl_GlobalInvocationID.x]; for (uint k = 0u; k < 2000u; ++k) { v = v * 3u + 1u; }
              a[gl_GlobalInvocationID.x] = v; }
"""
    mgr = device.manager
    ta = kp_bridge.tensor(mgr, np.zeros(4096, np.uint32))
    algo = kp_bridge.algorithm(mgr, [ta], spirv.compile_glsl(glsl), (64, 1, 1))
    seq = mgr.sequence(0, 1).record(kp_bridge.dispatch(algo))
    seq.eval()
    first = seq.get_timestamps()
    seq.eval()
    second = seq.get_timestamps()
    assert len(first) == len(second) == 2
    assert first[1] > first[0] and second[1] > second[0]
    assert second[0] > first[1]  # the replay wrote new values into reset queries


@pytest.mark.parametrize("spin", ["0", "200", "100000"])
def test_spin_wait_window_keeps_results_right(spin):
    # Patch 0006 polls the fence before blocking; with it off, short, or longer than the
    # work, every eval must still wait for completion. (Default on lavapipe: off.)
    code = """
import numpy as np
from vyre_vk.runtime import Device, kp_bridge
from vyre_vk import spirv
glsl = '''#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
void main() { uint v = a[gl_GlobalInvocationID.x]; for (uint k = 0u; k < 5000u; ++k) { v = v * 5u + 3u; }
              a[gl_GlobalInvocationID.x] = v; }
'''
import kp, os
with Device() as dev:
    assert kp.spin_wait_us() == int(os.environ["VYRE_VK_SPIN_WAIT_US"])
    mgr = dev.manager
    t = kp_bridge.tensor(mgr, np.arange(4096, dtype=np.uint32))
    algo = kp_bridge.algorithm(mgr, [t], spirv.compile_glsl(glsl), (64, 1, 1))
    seq = mgr.sequence().record(kp_bridge.sync_device([t])).record(kp_bridge.dispatch(algo)).record(kp_bridge.sync_local([t]))
    seq.eval()
    v = np.arange(4096, dtype=np.uint32)
    for _ in range(5000):
        v = v * np.uint32(5) + np.uint32(3)
    assert np.array_equal(t.data(), v)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "VYRE_VK_SPIN_WAIT_US": spin},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_spin_wait_is_off_on_cpu_devices_by_default(device, monkeypatch):
    monkeypatch.delenv("VYRE_VK_SPIN_WAIT_US", raising=False)
    assert kp_bridge.set_spin_wait("llvmpipe (LLVM 15.0.6, 256 bits)") == 0 == kp.spin_wait_us()
    assert kp_bridge.set_spin_wait("NVIDIA H200") == kp_bridge.DEFAULT_SPIN_WAIT_US == kp.spin_wait_us()
    kp_bridge.set_spin_wait(device.name)


def test_no_vulkan_driver_is_an_error_not_an_abort(tmp_path):
    env = {**os.environ, "VK_DRIVER_FILES": str(tmp_path / "none.json"), "VK_ICD_FILENAMES": str(tmp_path / "none.json")}
    out = subprocess.run([sys.executable, "-m", "vyre_vk.cli", "doctor"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 3, out.stdout + out.stderr  # 134 would be the loader's abort
    assert "vkCreateInstance failed" in out.stderr and "Fix:" in out.stderr  # errors on stderr
    code = "from vyre_vk.runtime import Device\ntry:\n    Device()\nexcept Exception as e:\n    print(type(e).__name__)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "KomputeError", out.stdout + out.stderr


def test_device_limits_are_reported(device):
    """Patch 0008: the limits vyre-vk checks before a dispatch come from the driver."""
    props = device.properties
    assert props["max_compute_shared_memory_size"] >= 16384  # Vulkan's guaranteed minimum
    assert props["max_storage_buffer_range"] >= 2**27
    assert props["max_per_stage_descriptor_storage_buffers"] >= 4
    assert device.limits.shared_memory_bytes == props["max_compute_shared_memory_size"]
