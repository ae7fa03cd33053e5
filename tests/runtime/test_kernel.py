"""Device.compile / Kernel: the seed op on Vulkan, pipeline reuse, caches, input checking."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kp
import vyre_vk
from vyre_vk import reference, spirv
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
from vyre_vk.ops import get
from vyre_vk.runtime import InputError, Kernel, LaunchError
from vyre_vk.testing.vectors import check_op

SEED = "vyre-libs::nn::mlp_backward"


def seed_inputs(rng, d, h):
    return {"x": rng.standard_normal(d, dtype=np.float32),
            "w1": rng.standard_normal(d * h, dtype=np.float32),
            "b1": rng.standard_normal(h, dtype=np.float32),
            "w2": rng.standard_normal(h * d, dtype=np.float32),
            "grad_out": rng.standard_normal(d, dtype=np.float32)}


def ulp_of(x: float) -> float:
    return float(np.spacing(np.float32(abs(x))))


def test_seed_registered_vector_passes_on_vulkan(vk_device):
    (case,) = check_op(get(SEED), vk_device)
    assert case.vulkan.ok and case.reference.ok
    assert case.outputs["grad_x"].tolist() == [2.0, 4.0]


def test_fifty_random_seed_cases_match_reference_within_4_ulp(vk_device):
    rng = np.random.default_rng(1234)
    entry = get(SEED)
    for _ in range(50):
        d, h = int(rng.integers(1, 65)), int(rng.integers(1, 257))
        program = entry.build_with(model_dim=d, hidden_dim=h)
        inputs = seed_inputs(rng, d, h)
        want = reference.run(program, inputs)["grad_x"]
        got = vk_device.compile(program).run(inputs)["grad_x"]
        scale = float(np.max(np.abs(want)))
        assert np.all(np.abs(got - want) <= 4 * ulp_of(scale)), (d, h, np.max(np.abs(got - want)), scale)


def test_thousand_runs_reuse_one_pipeline(vk_device):
    program = get(SEED).build_with(model_dim=8, hidden_dim=16)
    calls_before = spirv.stats.shaderc_calls
    kernel = vk_device.compile(program)
    assert vk_device.compile(program) is kernel  # cached by content hash
    algorithms = []
    rng = np.random.default_rng(0)
    inputs = seed_inputs(rng, 8, 16)
    want = reference.run(program, inputs)["grad_x"]
    kernel.run(inputs)
    plans, runs = kernel.stats.plans_built, kernel.stats.runs
    spy = kp.Manager.algorithm
    try:
        kp.Manager.algorithm = lambda self, *a, **k: algorithms.append(a) or spy(self, *a, **k)
        for _ in range(1000):
            got = kernel.run(inputs)["grad_x"]
    finally:
        kp.Manager.algorithm = spy
    assert algorithms == []                    # no new kp.Algorithm
    assert kernel.stats.plans_built == plans   # the pipelines and recorded sequence are reused
    assert kernel.stats.runs == runs + 1000
    assert spirv.stats.shaderc_calls - calls_before <= len(kernel.stages)  # each stage compiled at most once
    np.testing.assert_array_equal(got, kernel.run(inputs)["grad_x"])
    assert np.max(np.abs(got - want)) <= 4 * ulp_of(float(np.max(np.abs(want))))


def test_new_sizes_build_a_new_plan_and_old_ones_are_kept(vk_device):
    program = Program.wrapped(
        [BufferDecl.read("src", 0, DataType.U32), BufferDecl.read_write("dst", 1, DataType.U32)], (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.store("dst", Expr.var("i"), Expr.add(Expr.load("src", Expr.var("i")), Expr.u32(7)))])
    kernel = vk_device.compile(program)
    for n in (10, 1000, 10):
        src = np.arange(n, dtype=np.uint32)
        out = kernel.run({"src": src, "dst": np.zeros(n, np.uint32)})
        np.testing.assert_array_equal(out["dst"], src + 7)
    assert kernel.stats.plans_built == 2


def test_second_process_hits_the_disk_cache(tmp_path):
    code = textwrap.dedent("""
        import os, sys
        from vyre_vk import spirv
        from vyre_vk.ops import get
        from vyre_vk.lower import lower
        spirv.compile_glsl(lower(get("vyre-libs::nn::mlp_backward").build_with(model_dim=3)).glsl)
        print(spirv.stats.shaderc_calls, spirv.stats.disk_hits)
    """)
    env = {**os.environ, "VYRE_VK_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.split() == ["1", "0"]
    assert second.stdout.split() == ["0", "1"]  # no shaderc call in the second process
    assert len(list(tmp_path.rglob("*.spv"))) == 1


def test_corrupt_cache_entry_is_recompiled(tmp_path, monkeypatch):
    monkeypatch.setenv("VYRE_VK_CACHE_DIR", str(tmp_path))
    src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { }\n// corrupt-cache test\n"
    good = spirv.compile_glsl(src)
    (entry,) = tmp_path.rglob("*.spv")
    entry.write_bytes(b"garbage")
    spirv.clear_memory_cache()
    calls = spirv.stats.shaderc_calls
    assert spirv.compile_glsl(src) == good
    assert spirv.stats.shaderc_calls == calls + 1
    assert entry.read_bytes() == good


@pytest.fixture
def seed_kernel(vk_device) -> Kernel:
    return vk_device.compile(get(SEED).build())


def good_inputs():
    return {"x": np.ones(2, np.float32), "w1": np.ones(4, np.float32), "b1": np.ones(2, np.float32),
            "w2": np.ones(4, np.float32), "grad_out": np.ones(2, np.float32)}


@pytest.mark.parametrize("mutate, buffer, message", [
    (lambda d: d.update(x=np.ones(2, np.float64)), "x", "expected dtype float32, got float64"),
    (lambda d: d.update(w1=np.ones(4, np.int32)), "w1", "expected dtype float32, got int32"),
    (lambda d: d.update(b1=np.ones(1, np.float32)), "b1", "has 1 elements, the program declares 2"),
    (lambda d: d.pop("w2"), "w2", "no input given (expected f32[4] (float32))"),
    (lambda d: d.update(bogus=np.ones(2, np.float32)), "bogus", "the program has no such buffer"),
    (lambda d: d.update(grad_x=np.ones(2, np.float32)), "grad_x", "is an output the runtime allocates"),
    (lambda d: d.update(x=[1.5, "a"]), "x", "convert"),
    (lambda d: d.update(x=np.zeros(0, np.float32)), "x", "is empty"),
])
def test_bad_inputs_raise_before_upload(seed_kernel, mutate, buffer, message):
    inputs = good_inputs()
    mutate(inputs)
    runs = seed_kernel.stats.runs
    with pytest.raises(InputError, match="Fix:") as err:
        seed_kernel.run(inputs)
    assert err.value.buffer == buffer
    assert message in str(err.value)
    assert seed_kernel.stats.runs == runs  # nothing reached the device


def test_lists_convert_only_when_lossless(seed_kernel):
    inputs = good_inputs()
    inputs["x"] = [1.0, 2.0]
    assert seed_kernel.run(inputs)["grad_x"].shape == (2,)


def test_grid_over_device_limit_is_a_typed_error(seed_kernel):
    limit = seed_kernel.device.properties["max_work_group_count"][0]
    with pytest.raises(LaunchError, match="maxComputeWorkGroupCount"):
        seed_kernel.run(good_inputs(), grid=(limit + 1, 1, 1))


def test_one_shot_run_uses_the_default_device():
    out = vyre_vk.run(get(SEED).build(), good_inputs())
    want = reference.run(get(SEED).build(), good_inputs())
    np.testing.assert_array_equal(out["grad_x"], want["grad_x"])


def test_closed_device_refuses_work():
    from vyre_vk.runtime import Device, DeviceError

    dev = Device()
    kernel = dev.compile(get(SEED).build())
    assert kernel.run(good_inputs())["grad_x"].shape == (2,)  # a live plan, then close
    dev.close()
    dev.close()  # idempotent
    with pytest.raises(DeviceError, match="closed"):
        kernel.run(good_inputs())


def test_device_arrays_stay_resident_and_give_the_same_result(vk_device):
    program = get(SEED).build_with(model_dim=16, hidden_dim=32)
    rng = np.random.default_rng(7)
    inputs = seed_inputs(rng, 16, 32)
    kernel = vk_device.compile(program)
    want = kernel.run(inputs)["grad_x"]
    resident = dict(inputs, w1=vk_device.array(inputs["w1"]), w2=vk_device.array(inputs["w2"]))
    plans = kernel.stats.plans_built
    for _ in range(3):
        np.testing.assert_array_equal(kernel.run(resident)["grad_x"], want)
    assert kernel.stats.plans_built == plans + 1  # one plan for this resident set
    np.testing.assert_array_equal(resident["w1"].numpy(), inputs["w1"])
    other = dict(resident, w1=vk_device.array(inputs["w1"] * 2))
    assert not np.array_equal(kernel.run(other)["grad_x"], want)


def test_device_array_dtype_is_checked(vk_device):
    kernel = vk_device.compile(get(SEED).build())
    inputs = good_inputs()
    inputs["w1"] = vk_device.array(np.ones(4, np.int32))
    with pytest.raises(InputError, match="DeviceArray holds int32"):
        kernel.run(inputs)


def test_i32_division_by_zero_traps_like_the_reference(vk_device):
    from vyre_vk.reference import EvalError
    from vyre_vk.runtime import KernelTrapError

    i = Expr.var("i")
    program = Program.wrapped(
        [BufferDecl.read("a", 0, DataType.I32).with_count(64), BufferDecl.read("b", 1, DataType.I32).with_count(64),
         BufferDecl.output("q", 2, DataType.I32).with_count(64)], (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.store("q", i, Expr.div(Expr.load("a", i), Expr.load("b", i)))])
    a = np.arange(64, dtype=np.int32) - 32
    b = np.full(64, 3, np.int32)
    kernel = vk_device.compile(program, optimize=False)
    optimized = vk_device.compile(program)  # trapping programs are not coarsened
    np.testing.assert_array_equal(kernel.run({"a": a, "b": b})["q"], reference.run(program, {"a": a, "b": b})["q"])
    b[17] = 0
    with pytest.raises(EvalError):
        reference.run(program, {"a": a, "b": b})
    for k in (kernel, optimized):
        with pytest.raises(KernelTrapError, match="at invocation 17, address") as err:
            k.run({"a": a, "b": b})
        assert err.value.invocation == 17 and err.value.code == 1
    b[17] = 5  # the trap word is cleared for the next run
    np.testing.assert_array_equal(kernel.run({"a": a, "b": b})["q"], reference.run(program, {"a": a, "b": b})["q"])


def test_untouched_read_write_f32_comes_back_canonical(vk_device):
    # The reference canonicalises f32 on read (NaN payloads -> 0x7FC00000, subnormals -> 0).
    program = Program.wrapped(
        [BufferDecl.read_write("y", 0, DataType.F32).with_count(4)], (64, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.if_then(Expr.eq(Expr.var("i"), Expr.u32(0)), [Node.store("y", Expr.u32(0), Expr.f32(1.0))])])
    y = np.array([5.0, 0, 0, 2.0], np.float32)
    y.view(np.uint32)[1] = 0x7F800001   # signalling NaN payload
    y.view(np.uint32)[2] = 0x00000003   # subnormal
    got = vk_device.compile(program).run({"y": y})["y"]
    want = reference.run(program, {"y": y})["y"]
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist() == [0x3F800000, 0x7FC00000, 0, 0x40000000]


def test_grid_override_reuses_its_plan(vk_device):
    kernel = vk_device.compile(get(SEED).build(), optimize=False)
    kernel.run(good_inputs(), grid=(3, 1, 1))
    plans = kernel.stats.plans_built
    for _ in range(5):
        kernel.run(good_inputs(), grid=(3, 1, 1))
    assert kernel.stats.plans_built == plans
    kernel.run(good_inputs(), grid=(2, 1, 1))
    assert kernel.stats.plans_built == plans + 1
