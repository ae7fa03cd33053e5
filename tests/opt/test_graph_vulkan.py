"""Optimised programs on Vulkan (lavapipe in CI): the seed op as a two-kernel graph, the
graph's barriers, and the dispatch-changing passes."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ir.types import BufferAccess
from vyre_vk.ops import get
from vyre_vk.opt import ProgramGraph, optimize
from vyre_vk.compile import from_graph, record_ops
from vyre_vk.runtime.kernel import Kernel
from vyre_vk.testing.parity import compare
from vyre_vk.testing.vectors import expected_arrays

F32, U32 = DataType.F32, DataType.U32
SEED = "vyre-libs::nn::mlp_backward"


def test_record_ops_barriers_exactly_on_hazards():
    r, w = frozenset, frozenset
    # chain: stage 1 reads what stage 0 wrote
    assert record_ops([(r({"a", "s"}), w({"s"})), (r({"s", "o"}), w({"o"}))]) == [
        ("dispatch", 0), ("barrier", ("s",)), ("dispatch", 1)]
    # independent stages: no barrier
    assert record_ops([(r({"a", "s"}), w({"s"})), (r({"a", "t"}), w({"t"}))]) == [("dispatch", 0), ("dispatch", 1)]
    # write-after-read: stage 1 overwrites what stage 0 read
    assert record_ops([(r({"a", "s"}), w({"s"})), (r({"a"}), w({"a"}))]) == [
        ("dispatch", 0), ("barrier", ("a",)), ("dispatch", 1)]
    # two producers, one consumer: one barrier covering both, after both
    ops = record_ops([(r({"a", "s"}), w({"s"})), (r({"a", "t"}), w({"t"})), (r({"s", "t", "o"}), w({"o"}))])
    assert ops == [("dispatch", 0), ("dispatch", 1), ("barrier", ("s", "t")), ("dispatch", 2)]


def test_seed_registered_vector_optimised(vk_device):
    entry = get(SEED)
    program = entry.build()
    k = vk_device.compile(program, optimize=True)
    assert k.compiled.optimized and len(k.stages) == 3  # fission: h and g chains, combine, main
    gh, fa, fb = (s.name for s in k.scratch)
    assert k.ops == [("dispatch", 0), ("barrier", tuple(sorted((fa, fb)))), ("dispatch", 1), ("barrier", (gh,)),
                     ("dispatch", 2)]
    for case, exp in zip(entry.test_inputs(), entry.expected_output()):
        got = k.run(case)
        assert got["grad_x"].tolist() == [2.0, 4.0]
        assert compare(program, expected_arrays(entry, program, exp), got).ok


@pytest.mark.parametrize("d,h", [(1, 3), (7, 5), (65, 40), (130, 257), (300, 64)])
def test_seed_random_sizes_parity(vk_device, d, h):
    program = get(SEED).build_with(model_dim=d, hidden_dim=h)
    rng = np.random.default_rng(d * 1000 + h)
    inputs = {"x": rng.standard_normal(d, dtype=np.float32),
              "w1": rng.standard_normal(d * h, dtype=np.float32) / np.float32(np.sqrt(d)),
              "b1": rng.standard_normal(h, dtype=np.float32),
              "w2": rng.standard_normal(h * d, dtype=np.float32) / np.float32(np.sqrt(h)),
              "grad_out": rng.standard_normal(d, dtype=np.float32)}
    expected = reference.run(program, inputs)
    k = vk_device.compile(program, optimize=True)
    got = k.run(inputs)
    report = compare(program, expected, got)
    assert report.ok, report.mismatches
    # same operations in the same order: on lavapipe the optimised graph is bit-exact too
    assert got["grad_x"].tobytes() == expected["grad_x"].tobytes()
    assert k.run(inputs)["grad_x"].tobytes() == got["grad_x"].tobytes()  # replayed plan


def _stage(name, bufs, body, wg=64):
    return Program.wrapped(bufs, (wg, 1, 1), [wrap_anonymous(name, body)])


def test_graph_barrier_on_vulkan(vk_device):
    """Two producers fill scratch buffers, a consumer adds them: one barrier, right values."""
    n = 1000
    i = Expr.var("i")
    guard = lambda body: [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(n)), body)]  # noqa: E731
    a = BufferDecl.read("a", 0, F32).with_count(n)
    s1w = BufferDecl("s1", 1, BufferAccess.ReadWrite, F32, n, pipeline_live_out=True)
    s2w = BufferDecl("s2", 1, BufferAccess.ReadWrite, F32, n, pipeline_live_out=True)
    p0 = _stage("t::double", [a, s1w], guard([Node.store("s1", i, Expr.mul(Expr.load("a", i), Expr.f32(2.0)))]))
    p1 = _stage("t::square", [a, s2w], guard([Node.store("s2", i, Expr.mul(Expr.load("a", i), Expr.load("a", i)))]))
    main = Program.wrapped([a, BufferDecl.output("out", 1, F32).with_count(n),
                            BufferDecl.read("s1", 2, F32).with_count(n), BufferDecl.read("s2", 3, F32).with_count(n)],
                           (64, 1, 1), [wrap_anonymous("t::sum", guard([Node.store("out", i, Expr.add(
                               Expr.load("s1", i), Expr.load("s2", i)))]))])
    original = Program.wrapped([a, BufferDecl.output("out", 1, F32).with_count(n)], (64, 1, 1),
                               [wrap_anonymous("t::orig", guard([Node.store("out", i, Expr.add(
                                   Expr.mul(Expr.load("a", i), Expr.f32(2.0)),
                                   Expr.mul(Expr.load("a", i), Expr.load("a", i))))]))])
    graph = ProgramGraph(original, (p0, p1, main), (BufferDecl.read("s1", 0, F32).with_count(n),
                                                     BufferDecl.read("s2", 0, F32).with_count(n)))
    g = Kernel(vk_device, from_graph(graph))
    assert g.ops == [("dispatch", 0), ("dispatch", 1), ("barrier", ("s1", "s2")), ("dispatch", 2)]
    x = np.random.default_rng(3).standard_normal(n, dtype=np.float32)
    want = reference.run(original, {"a": x})["out"]
    for _ in range(3):
        got = g.run({"a": x})["out"]
        assert got.tobytes() == want.tobytes()
        assert got.tobytes() == graph.run_reference({"a": x})["out"].tobytes()
    plan = next(iter(g._plans.values()))
    assert plan.ops == g.ops  # what was recorded into the kp sequence


def test_elementwise_passes_on_vulkan(vk_device):
    n = 1001
    i = Expr.var("i")
    p = Program.wrapped([BufferDecl.read("a", 0, F32).with_count(n), BufferDecl.output("y", 1, F32).with_count(n)],
                        (64, 1, 1), [wrap_anonymous("t::ew", [Node.let_bind("i", Expr.gid_x()), Node.if_then(
                            Expr.lt(i, Expr.u32(n)), [Node.store("y", i, Expr.fma(Expr.load("a", i), Expr.f32(3.0),
                                                                                  Expr.f32(1.0)))])])])
    graph, reports = optimize(p, {"workgroup_size", "coarsen"})
    assert all(r.changed for r in reports)
    k = vk_device.compile(p, optimize={"workgroup_size", "coarsen"})
    assert k.stages[0].factor == 4 and k.stages[0].program.workgroup_size == (256, 1, 1)
    x = np.random.default_rng(5).standard_normal(n, dtype=np.float32)
    want = reference.run(p, {"a": x})
    got = k.run({"a": x})
    assert compare(p, want, got).ok
    # a grid override is in the original program's workgroups: answered by the plain kernel
    assert compare(p, reference.run(p, {"a": x}, grid=(4, 1, 1)), k.run({"a": x}, grid=(4, 1, 1))).ok


def test_compile_optimize_returns_kernel_when_nothing_changes(vk_device):
    p = Program.wrapped([BufferDecl.output("y", 0, U32).with_count(64)], (64, 1, 1),
                        [wrap_anonymous("t::local", [Node.store("y", Expr.local_x(), Expr.local_x())])])
    k = vk_device.compile(p, optimize=True)
    assert isinstance(k, Kernel)
    assert vk_device.compile(p, optimize=True) is k
    assert k.run({})["y"].tolist() == list(range(64))


@pytest.mark.parametrize("d,h", [(7, 5), (130, 257)])
def test_seed_gpu_class_workgroups_on_vulkan(vk_device, d, h):
    """The nvidia table's small workgroups (run here on lavapipe): same bits."""
    program = get(SEED).build_with(model_dim=d, hidden_dim=h)
    rng = np.random.default_rng(d + h)
    inputs = {"x": rng.standard_normal(d, dtype=np.float32), "w1": rng.standard_normal(d * h, dtype=np.float32),
              "b1": rng.standard_normal(h, dtype=np.float32), "w2": rng.standard_normal(h * d, dtype=np.float32),
              "grad_out": rng.standard_normal(d, dtype=np.float32)}
    graph, reports = optimize(program, True, device_class="nvidia")
    assert [s.workgroup_size[0] for s in graph.stages] == [16, 16, 16]
    got = Kernel(vk_device, from_graph(graph, reports)).run(inputs)
    assert got["grad_x"].tobytes() == reference.run(program, inputs)["grad_x"].tobytes()
