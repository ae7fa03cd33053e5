"""Issue 13, runtime: each hostile finding below failed (crash, hang, silent wrong answer or raw
exception) before its fix; each test pins the fixed behaviour."""
from __future__ import annotations

import gc
import multiprocessing as mp

import numpy as np
import pytest

import vyre_vk
from vyre_vk import reference, spirv
from vyre_vk.errors import EnvironmentProblem, InputError, VyreError
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.runtime import Device, DeviceError, LaunchError, ProgramCompileError, device as device_mod
from vyre_vk.compile import DeviceLimits, clear_cache

U32 = DataType.U32


def add_program(k: int = 0) -> Program:
    """b[i] = a[i] + b[i] + k over the lanes of b (a read-only, b read_write)."""
    i = Expr.var("i")
    body = [Node.let_bind("i", Expr.gid_x()),
            Node.if_then(Expr.lt(i, Expr.buf_len("b")), [Node.store(
                "b", i, Expr.add(Expr.add(Expr.load("a", i), Expr.load("b", i)), Expr.u32(k)))])]
    return Program.wrapped([BufferDecl.read("a", 0, U32), BufferDecl.read_write("b", 1, U32)], (64, 1, 1),
                           [wrap_anonymous("test::add", body)])


def shared_program(count: int) -> Program:
    body = [Node.store("s", Expr.local_x(), Expr.u32(1)), Node.store("o", Expr.local_x(), Expr.u32(2))]
    return Program.wrapped([BufferDecl.workgroup("s", count, U32), BufferDecl.output("o", 0, U32).with_count(4)],
                           (4, 1, 1), [wrap_anonymous("test::shared", body)])


def assert_typed(excinfo) -> None:
    assert isinstance(excinfo.value, VyreError)
    assert excinfo.value.fix, str(excinfo.value)


A = np.arange(1, 9, dtype=np.uint32)


# ---- crashes: nothing bound
@pytest.mark.parametrize("program", [
    Program.empty(),
    Program.wrapped([BufferDecl.workgroup("s", 4, U32)], (4, 1, 1),
                    [wrap_anonymous("t", [Node.store("s", Expr.local_x(), Expr.u32(1))])]),
], ids=["empty", "workgroup-only"])
@pytest.mark.parametrize("optimize", [False, True])
def test_program_without_storage_buffers_returns_nothing(vk_device, program, optimize):
    assert reference.run(program, {}) == {}
    assert vk_device.compile(program, optimize=optimize).run({}) == {}


# ---- hangs: fork after use
def _child_run(q) -> None:
    try:
        got = vyre_vk.run(add_program(), {"a": A, "b": A.copy()})["b"]
        q.put(("fresh", got.tolist()))
    except Exception as e:  # pragma: no cover - reported to the parent
        q.put(("fresh-error", repr(e)))
    try:
        vyre_vk.runtime.default_device  # noqa: B018
        _INHERITED.compile(add_program(1))
        q.put(("inherited", "usable"))
    except DeviceError as e:
        q.put(("inherited", "spawn" in str(e) and bool(e.fix)))


_INHERITED: Device | None = None


def test_fork_after_use_gives_the_child_a_fresh_device_and_a_typed_error_for_inherited_ones():
    global _INHERITED
    parent = vyre_vk.run(add_program(), {"a": A, "b": A.copy()})["b"]
    _INHERITED = vyre_vk.runtime.default_device()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_child_run, args=(q,))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0, "the forked child hung or died"
    assert q.get(timeout=5) == ("fresh", (2 * A).tolist())
    assert q.get(timeout=5) == ("inherited", True)
    np.testing.assert_array_equal(parent, 2 * A)
    np.testing.assert_array_equal(vyre_vk.run(add_program(), {"a": A, "b": A.copy()})["b"], 2 * A)


# ---- silent wrong answers: aliasing one DeviceArray
def test_one_device_array_in_a_read_and_a_written_buffer_is_refused(vk_device):
    da = vk_device.array(A)
    with pytest.raises(InputError, match="same DeviceArray") as e:
        vk_device.compile(add_program()).run({"a": da, "b": da})
    assert_typed(e)
    # the copy the hint asks for gives the reference's answer
    got = vk_device.compile(add_program()).run({"a": da, "b": vk_device.array(da.numpy())})["b"]
    np.testing.assert_array_equal(got, reference.run(add_program(), {"a": A, "b": A.copy()})["b"])


# ---- device limits
@pytest.mark.parametrize("count", [9000, 10_000_000, 2**32 - 1], ids=["36KB", "40MB", "2^32-1"])
@pytest.mark.parametrize("optimize", [False, True])
def test_workgroup_memory_over_the_device_limit_is_a_launch_error(vk_device, count, optimize):
    with pytest.raises(LaunchError, match="maxComputeSharedMemorySize") as e:
        vk_device.compile(shared_program(count), optimize=optimize)
    assert_typed(e)


def test_workgroup_memory_at_the_limit_runs(vk_device):
    count = vk_device.limits.shared_memory_bytes // 4
    out = vk_device.compile(shared_program(count), optimize=False).run({})
    np.testing.assert_array_equal(out["o"], [2, 2, 2, 2])


def test_optimiser_schedule_over_the_limits_falls_back_to_the_program_as_written(vk_device, monkeypatch):
    program = get("vyre-libs::nn::mlp_backward").build_with(model_dim=64, hidden_dim=4096)
    assert max(np.prod(s.workgroup_size) for s in __import__("vyre_vk.opt", fromlist=["x"]).optimize(
        program, True, device_class="llvmpipe")[0].stages) > 64  # the schedule widens workgroups
    monkeypatch.setattr(vk_device, "limits", DeviceLimits(workgroup_invocations=64, name="a 64-lane device"))
    monkeypatch.setattr(vk_device, "_kernels", type(vk_device._kernels)())
    kernel = vk_device.compile(program)
    assert all(np.prod(s.lowered.workgroup_size) <= 64 for s in kernel.stages)


# ---- raw exceptions
@pytest.mark.parametrize("inputs", [5, "ab", b"ab", 1.5, np.arange(3, dtype=np.uint32)], ids=repr)
def test_inputs_that_are_not_a_dict_or_list_are_input_errors(vk_device, inputs):
    with pytest.raises(InputError) as e:
        vk_device.compile(add_program()).run(inputs)
    assert_typed(e)


@pytest.mark.parametrize("grid", [("a", 1, 1), 5, (0, 1, 1), (1, 1), (True, 1, 1), (1.5, 1, 1), (2**40, 1, 1)],
                         ids=repr)
def test_bad_grid_overrides_are_launch_errors(vk_device, grid):
    with pytest.raises(LaunchError) as e:
        vk_device.compile(add_program(), optimize=False).run({"a": A, "b": A.copy()}, grid=grid)
    assert_typed(e)


@pytest.mark.parametrize("dtype", [">u4", "<u4"])
def test_byte_swapped_input_gives_the_right_answer(vk_device, dtype):
    got = vk_device.compile(add_program()).run({"a": A.astype(dtype), "b": A.copy()})["b"]
    np.testing.assert_array_equal(got, 2 * A)
    got = vk_device.compile(add_program()).run({"a": vk_device.array(A.astype(dtype)), "b": A.copy()})["b"]
    np.testing.assert_array_equal(got, 2 * A)


def test_wrong_width_message_names_both_dtypes(vk_device):
    with pytest.raises(InputError, match="expected dtype uint32, got float32"):
        vk_device.compile(add_program()).run({"a": A.astype(np.float32), "b": A.copy()})


@pytest.mark.parametrize("data", [np.zeros(3), np.zeros(0, np.float32), np.zeros(3, np.int64), [1, 2]],
                         ids=["float64", "empty", "int64", "list"])
def test_bad_device_arrays_are_input_errors(vk_device, data):
    with pytest.raises(InputError) as e:
        vk_device.array(data)
    assert_typed(e)


def test_device_array_from_another_device_names_both_devices(vk_device):
    with Device() as other:
        da = other.array(A)
        with pytest.raises(InputError) as e:
            vk_device.compile(add_program()).run({"a": da, "b": A.copy()})
        assert repr(other) in str(e.value) and repr(vk_device) in str(e.value) and repr(other) != repr(vk_device)
    assert_typed(e)


@pytest.mark.parametrize("value", ["abc", "-5", "1e9"])
def test_bad_spin_wait_is_an_environment_error(monkeypatch, value):
    monkeypatch.setenv("VYRE_VK_SPIN_WAIT_US", value)
    with pytest.raises(EnvironmentProblem) as e:
        Device()
    assert_typed(e)


def test_compile_errors_name_the_node_optimised_or_not(vk_device, monkeypatch):
    def broken(source, *, name="x", target_env="vulkan1.1", **kw):
        line = source.splitlines().index(next(ln for ln in source.splitlines() if "+" in ln)) + 1
        raise spirv.ShaderCompileError(f"ERROR: {name}:{line}: error: 'x' : injected", source, name)

    monkeypatch.setattr(spirv, "compile_glsl", broken)
    clear_cache()
    for optimize in (False, True):
        monkeypatch.setattr(vk_device, "_kernels", type(vk_device._kernels)())
        with pytest.raises(ProgramCompileError) as e:
            vk_device.compile(add_program(7), optimize=optimize)
        assert e.value.node_path and "entry" in e.value.node_path, str(e.value)


# ---- resources
def test_kernel_cache_is_bounded_and_evicted_kernels_still_run(monkeypatch):
    monkeypatch.setenv("VYRE_VK_MAX_KERNELS", "3")
    with Device() as dev:
        kernels = [dev.compile(add_program(k), optimize=False) for k in range(6)]
        assert len(dev._kernels) == 3
        for k, kernel in enumerate(kernels):  # evicted ones rebuild their pipelines
            np.testing.assert_array_equal(kernel.run({"a": A, "b": A.copy()})["b"], 2 * A + k)
        dev.forget(kernels[-1])
        assert all(v is not kernels[-1] for v in dev._kernels.values())


def test_bad_kernel_cap_is_an_environment_error(monkeypatch):
    monkeypatch.setenv("VYRE_VK_MAX_KERNELS", "0")
    with pytest.raises(DeviceError, match="VYRE_VK_MAX_KERNELS") as e:
        Device()
    assert_typed(e)


def test_devices_dropped_without_close_are_released():
    gc.collect()
    before = len(device_mod._open_devices)
    for k in range(8):
        dev = Device()
        dev.compile(add_program(k)).run({"a": A, "b": A.copy()})  # a kernel: a device<->kernel cycle
        del dev
    assert len(device_mod._open_devices) <= before + device_mod.COLLECT_AFTER_OPEN_DEVICES
    gc.collect()
    assert len(device_mod._open_devices) <= before
