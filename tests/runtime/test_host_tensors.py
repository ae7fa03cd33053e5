"""Small runs on host-visible tensors used in place (no staging copies), and the repeat-run fast path.

Both are latency work for tiny kernels; both must give exactly what the device-local path and the
reference give, re-zero outputs, scratch and trap words on every run, and never bind stale inputs.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
from vyre_vk.ops import get
from vyre_vk.runtime import Device, InputError
from vyre_vk.runtime.device import DEFAULT_HOST_TENSOR_BYTES
from vyre_vk.runtime.kernel import buffer_accesses

OPS = [("vyre-libs::nn::mlp_backward", dict(model_dim=4, hidden_dim=8)), ("vyre-libs::math::reduce_variance", {}),
       ("vyre-libs::nn::softmax", {}), ("vyre-libs::hash::crc32", {}), ("vyre-libs::nn::layer_norm", {})]


def only_plan(kernel):
    (plan,) = kernel._plans.values()
    return plan


def random_inputs(program, rng):
    out = {}
    for b in program.buffers:
        if b.is_workgroup or not b.is_input:
            continue
        dt = np.dtype(b.element.numpy)
        if dt.kind == "f":
            out[b.name] = rng.standard_normal(max(b.count, 1)).astype(dt)
        else:
            out[b.name] = rng.integers(0, 200, max(b.count, 1)).astype(dt)
    return out


@pytest.fixture
def staged_device():
    """A device whose runs always use device-local tensors with staging copies."""
    dev = Device()
    dev.host_tensor_bytes = 0
    yield dev
    dev.close()


@pytest.mark.parametrize("op,kw", OPS, ids=[o for o, _ in OPS])
def test_host_and_staged_paths_give_the_reference_bits(vk_device, staged_device, op, kw):
    entry = get(op)
    program = entry.build_with(**kw) if kw else entry.build()
    rng = np.random.default_rng(7)
    for round_ in range(2):  # twice: outputs and scratch must start from zero again
        inputs = random_inputs(program, rng)
        want = reference.run(program, inputs)
        host_k, staged_k = vk_device.compile(program), staged_device.compile(program)
        got_host, got_staged = host_k.run(inputs), staged_k.run(inputs)
        assert only_plan(host_k).host and not only_plan(staged_k).host
        for name, w in want.items():
            w = np.asarray(w)
            assert got_host[name].view(np.uint8).tobytes() == w.view(np.uint8).tobytes(), (op, name, round_)
            assert got_staged[name].view(np.uint8).tobytes() == w.view(np.uint8).tobytes(), (op, name, round_)


@pytest.mark.parametrize("local", [True, False], ids=["device-local", "knob-off"])
def test_only_buffers_the_host_never_reads_go_device_local(monkeypatch, local):
    """Kernel plans on host tensors put inputs and scratch in device-local host-visible memory (kp patch
    0013: lavapipe's one memory type is both), never a result, trap word or anything the host reads;
    ``VYRE_VK_HOST_DEVICE_LOCAL=0`` puts none there. Either way: the reference's bits, twice."""
    if not local:
        monkeypatch.setenv("VYRE_VK_HOST_DEVICE_LOCAL", "0")
    dev = Device()
    try:
        rng = np.random.default_rng(3)
        for op, kw in OPS:
            entry = get(op)
            program = entry.build_with(**kw) if kw else entry.build()
            k = dev.compile(program)
            for _ in range(2):
                inputs = random_inputs(program, rng)
                got, want = k.run(inputs), reference.run(program, inputs)
                for name, w in want.items():
                    assert got[name].view(np.uint8).tobytes() == np.asarray(w).view(np.uint8).tobytes(), (op, name)
            plan = only_plan(k)
            assert plan.host
            placed = {n for n, t in plan.tensors.items() if t.is_device_local_host()}
            readable = set(plan.downloads) | {n for n in plan.tensors if n.startswith("\0trap")}
            assert not placed & readable, op
            written = {b.name for b in program.buffers if b.is_input and not b.is_workgroup} - set(plan.downloads)
            assert placed == ((written | {s.name for s in k.scratch}) if local else set()), op
    finally:
        dev.close()


def _writer(n: int, bound: Expr, stmt) -> Program:
    """``let i = gid; if i < bound { stmt }`` over u32 buffers a (read) and out (output) of n elements."""
    return Program.wrapped(
        [BufferDecl.read("a", 0, DataType.U32).with_count(n), BufferDecl.output("out", 1, DataType.U32).with_count(n)],
        (64, 1, 1), [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(Expr.var("i"), bound), [stmt])])


def partial_writer(n: int) -> Program:
    """out[i] = a[i] only where a[i] != 0: the rest of `out` must read as zero on every run."""
    i = Expr.var("i")
    return _writer(n, Expr.u32(n), Node.if_then(Expr.ne(Expr.load("a", i), Expr.u32(0)), [Node.store("out", i, Expr.load("a", i))]))


def test_outputs_start_zero_on_every_host_run(vk_device):
    kernel = vk_device.compile(partial_writer(100))
    ones = np.arange(1, 101, dtype=np.uint32)
    assert kernel.run({"a": ones})["out"].tolist() == ones.tolist()
    assert only_plan(kernel).host
    half = ones.copy()
    half[::2] = 0
    assert kernel.run({"a": half})["out"].tolist() == half.tolist()  # not last run's odd elements


def test_big_run_time_bounded_and_resident_runs_keep_device_tensors(vk_device):
    big = vk_device.compile(partial_writer(DEFAULT_HOST_TENSOR_BYTES // 4))  # a + out: twice the limit
    a = np.arange(DEFAULT_HOST_TENSOR_BYTES // 4, dtype=np.uint32)
    assert big.run({"a": a})["out"].tolist() == a.tolist() and not only_plan(big).host
    # a loop up to the buffer's length: how often it reads host memory is unknown before the run
    i = Expr.var("i")
    summed = Program.wrapped(
        [BufferDecl.read("a", 0, DataType.U32).with_count(8), BufferDecl.output("out", 1, DataType.U32).with_count(1)],
        (1, 1, 1),
        [Node.let_bind("s", Expr.u32(0)),
         Node.loop_for("i", Expr.u32(0), Expr.buf_len("a"), [Node.assign("s", Expr.add(Expr.var("s"), Expr.load("a", i)))]),
         Node.store("out", Expr.u32(0), Expr.var("s"))])
    kernel = vk_device.compile(summed, optimize=False)
    assert kernel._accesses == [None]
    assert kernel.run({"a": np.arange(8, dtype=np.uint32)})["out"].tolist() == [28] and not only_plan(kernel).host
    small = vk_device.compile(partial_writer(16))
    res = vk_device.array(np.arange(16, dtype=np.uint32))
    assert small.run({"a": res})["out"].tolist() == list(range(16)) and not only_plan(small).host


def test_buffer_accesses_counts_literal_loops_and_nesting():
    k = Expr.var("k")
    inner = Node.loop_for("j", Expr.u32(0), Expr.u32(3), [Node.store("o", k, Expr.load("a", k))])
    outer = Node.loop_for("k", Expr.u32(2), Expr.u32(7), [inner, Node.store("o", k, Expr.u32(1))])
    assert buffer_accesses((outer,)) == 5 * (3 * 2 + 1)
    assert buffer_accesses((Node.if_then(Expr.load("a", k), [outer]),)) == 1 + 35


def test_repeat_run_fast_path_rebinds_whenever_the_inputs_change(vk_device):
    kernel = vk_device.compile(partial_writer(64))
    a = np.arange(64, dtype=np.uint32)
    assert kernel.run({"a": a})["out"].tolist() == a.tolist()
    assert kernel._repeat is not None
    a[3] = 99  # the same array object, new contents: read again, not cached
    assert kernel.run({"a": a})["out"][3] == 99
    assert kernel.run({"a": a[::-1].copy()})["out"].tolist() == a[::-1].tolist()
    assert kernel.run({"a": a.astype(">u4")})["out"].tolist() == a.tolist()  # converted by the binder
    with pytest.raises(InputError, match="expected dtype uint32, got int64"):
        kernel.run({"a": a.astype(np.int64)})
    strided = np.arange(128, dtype=np.uint32)[::2]
    assert kernel.run({"a": strided})["out"].tolist() == strided.tolist()
    with pytest.raises(InputError, match="has 10 elements"):
        kernel.run({"a": np.arange(10, dtype=np.uint32)})
    with pytest.raises(InputError, match="no such buffer"):
        kernel.run({"a": a, "b": a})
    bigger = np.arange(200, dtype=np.uint32)  # a new size signature, then back to the first
    assert kernel.run({"a": bigger})["out"].tolist() == bigger[:64].tolist()
    kept = kernel._repeat
    kernel.release()
    assert kept({"a": bigger}) is None  # a closure kept past its plan's destruction replays nothing
    assert kernel.run({"a": a})["out"].tolist() == a.tolist()


def adder(n: int) -> Program:
    """out[i] = a[i] + b[i], f32 (tools/bench/run.py's elementwise program): two inputs for the fast
    path's per-input checks."""
    spec = importlib.util.spec_from_file_location("bench_run", Path(__file__).parents[2] / "tools/bench/run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.elementwise_program(n)


@pytest.mark.parametrize("staged", [False, True], ids=["host", "staged"])
def test_repeat_run_fast_path_replays_any_strides_and_falls_back_mid_check(vk_device, staged_device, staged):
    """A strided 1-D array replays the kept plan (copied into its view as the binder would copy it);
    another shape, or a later input the fast path refuses after writing an earlier one, falls back
    to binding, which rewrites every input: the results are always this run's."""
    kernel = (staged_device if staged else vk_device).compile(adder(64))
    a, b = np.arange(64, dtype=np.float32), np.full(64, 0.5, np.float32)
    assert kernel.run({"a": a, "b": b})["out"].tolist() == (a + b).tolist()
    fast, runs = kernel._repeat, kernel.stats.runs
    strided = np.arange(128, dtype=np.float32)[::-2]
    assert kernel.run({"a": strided, "b": b})["out"].tolist() == (strided + b).tolist()
    assert kernel._repeat is fast and kernel.stats.runs == runs + 1  # replayed, not rebound
    swapped = (b * 3).astype(">f4")  # the binder converts it; the fast path refuses it after writing `a`
    assert kernel.run({"a": a * 2, "b": swapped})["out"].tolist() == (a * 2 + b * 3).tolist()
    assert kernel.run({"a": a.reshape(8, 8), "b": b})["out"].tolist() == (a + b).tolist()  # flattened by the binder
    with pytest.raises(InputError, match="expected dtype float32, got float64"):
        kernel.run({"a": a, "b": b.astype(np.float64)})
    kernel.run({"a": a, "b": b})
    assert kernel.run({"a": a + 1, "b": b})["out"].tolist() == (a + 1 + b).tolist()
    assert kernel.stats.plans_built == 1


@pytest.mark.parametrize("allowed", [0, 1], ids=["first", "second"])
def test_a_device_that_refuses_host_tensors_falls_back_to_staging(monkeypatch, allowed):
    """The driver refuses a host-visible tensor (the first, or the second after one was made): the
    plan finishes on device-local tensors, a mixed plan included, with the reference's results."""
    from vyre_vk.runtime import kp_bridge

    real, made = kp_bridge.tensor, []

    def refusing(mgr, data, host=False, write_only=False):
        if host:
            if len(made) >= allowed:
                raise RuntimeError("no host-visible memory type (simulated)")
            made.append(1)
        return real(mgr, data, host, write_only)

    monkeypatch.setattr(kp_bridge, "tensor", refusing)
    dev = Device()
    try:
        kernel = dev.compile(partial_writer(64))
        for k in range(3):
            a = np.arange(64, dtype=np.uint32) * (k + 1)
            a[::3] = 0
            assert kernel.run({"a": a})["out"].tolist() == reference.run(partial_writer(64), {"a": a})["out"].tolist()
        assert not only_plan(kernel).host and dev.host_tensor_bytes == 0 and len(made) == allowed
    finally:
        dev.close()


def full_writer(n: int) -> Program:
    """out[i] = a[i] + 1 for every i below len(out): no starting value of `out` is ever seen."""
    i = Expr.var("i")
    return _writer(n, Expr.buf_len("out"), Node.store("out", i, Expr.add(Expr.load("a", i), Expr.u32(1))))


@pytest.mark.parametrize("staged", [False, True], ids=["host", "staged"])
def test_outputs_a_stage_rewrites_in_full_are_not_zeroed_or_uploaded(vk_device, staged_device, staged):
    """vyre_vk.ir.coverage proves `out` rewritten (coarsened x4 as the optimiser leaves it): the plan
    neither zeroes nor uploads it, and every run still returns that run's values; a partial writer's
    `out` is still zeroed (test_outputs_start_zero_on_every_host_run checks its values)."""
    dev = staged_device if staged else vk_device
    kernel = dev.compile(full_writer(100))
    for k in range(3):
        a = np.arange(100, dtype=np.uint32) * np.uint32(k + 2)
        assert kernel.run({"a": a})["out"].tolist() == (a + 1).tolist()
    plan = only_plan(kernel)
    assert plan.host is not staged and "out" not in plan.uploads and "a" in plan.uploads
    partial = dev.compile(partial_writer(100))
    partial.run({"a": np.arange(100, dtype=np.uint32)})
    assert "out" in only_plan(partial).uploads
