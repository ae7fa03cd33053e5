"""guard_idle: workgroups that can have no effect exit at once -- cross_entropy bit-identical on the reference and Vulkan, and the refusals: an effect some workgroup past the
bound could have must keep the program as written."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.ops.builder import out_decl, ro_decl
from vyre_vk.opt import optimize
from vyre_vk.opt.idle import guard_idle, idle_bound, repeated

from .test_passes import same
from .test_phases_spread import _inputs


@pytest.mark.parametrize("op,kw", [("nn::cross_entropy", dict(n=3, vocab_size=1000)),
                                   ("nn::cross_entropy", dict(n=1, vocab_size=257))])
def test_registered_ops_guarded_bit_identical(op, kw):
    p = get("vyre-libs::" + op).build_with(**kw)
    inputs = _inputs(p, np.random.default_rng(2))
    if "targets" in inputs:
        inputs["targets"] = inputs["targets"] % np.uint32(kw["vocab_size"])
    graph, reports = optimize(p, ["guard_idle"])
    assert "exit at a workgroup-uniform test" in reports[0].why
    validate(graph.single)
    same(reference.run(p, inputs), graph.run_reference(inputs))


def _program(guard_store: bool = True, trap: bool = False, wg: bool = True) -> Program:
    """Workgroup w < 2 writes out[w]; an optional unguarded store or an integer division by data."""
    val = Expr.load("a", Expr.gid_x())
    if trap:
        val = Expr.cast(DataType.F32, Expr.div(Expr.i32(7), Expr.cast(DataType.I32, val)))  # i32: may trap
    store = Node.store("out", Expr.workgroup_x(), val)
    body = [Node.store("tmp", Expr.local_x(), Expr.f32(1.0)), Node.barrier(),
            Node.if_then(Expr.lt(Expr.workgroup_x(), Expr.u32(2)), [store]) if guard_store else store]
    bufs = [ro_decl("a", 0, 640), out_decl("out", 1, 4)]
    if wg:
        bufs.append(BufferDecl.workgroup("tmp", 64, DataType.F32))
    return Program.wrapped(bufs, (64, 1, 1), [wrap_anonymous("test::idle", body)])


def test_guarded_program_gets_the_early_exit():
    p = _program()
    assert idle_bound(p)[0] == 2
    out = guard_idle(p)
    assert out.entry[0].body[0].cond == Expr.lt(Expr.workgroup_x(), Expr.u32(2))
    inputs = _inputs(p, np.random.default_rng(0))
    same(reference.run(p, inputs), reference.run(out, inputs))


@pytest.mark.parametrize("kwargs,reason", [
    (dict(guard_store=False), "without a workgroup bound"),
    (dict(trap=True), "may trap"),
    (dict(wg=False), "the grid follows the results"),
])
def test_refusals_keep_the_program(kwargs, reason):
    p = _program(**kwargs)
    n, why = idle_bound(p)
    assert n is None and reason in why
    assert guard_idle(p) is None


def test_vulkan_cross_entropy_guarded_matches_reference(vk_device):
    p = get("vyre-libs::nn::cross_entropy").build_with(n=5, vocab_size=3000)
    inputs = _inputs(p, np.random.default_rng(4))
    inputs["targets"] = inputs["targets"] % np.uint32(3000)
    k = vk_device.compile(p)
    assert "guard_idle" in k.explain()
    same(reference.run(p, inputs), k.run(inputs))


REPEATING = ["math::fft::fft_convolve_circular_complex", "math::fft::fft_radix2", "math::fft::fft4_complex",
             "math::fft::scale_conjugate_inverse", "math::linalg::matmul_strassen_2x2", "hash::blake3_compress"]


@pytest.mark.parametrize("op", REPEATING)
def test_ops_every_invocation_repeats_run_once_bit_identical(op):
    """vyre's single-invocation ops (no id anywhere, workgroups of one): the reference runs the grid's
    identical workgroups one after another; only workgroup 0 runs after the pass, same bits."""
    p = get("vyre-libs::" + op).build()
    assert repeated(p)
    inputs = _inputs(p, np.random.default_rng(3))
    graph, reports = optimize(p, ["guard_idle"])
    assert "only workgroup 0 runs" in reports[0].why, reports[0].why
    cond = graph.single.entry[0].body[0].cond
    assert (cond.left, cond.right) == (Expr.workgroup_x(), Expr.u32(1))
    same(reference.run(p, inputs), graph.run_reference(inputs))


def _counter(body) -> Program:
    return Program.wrapped([ro_decl("a", 0, 8), out_decl("out", 1, 8)], (1, 1, 1), [wrap_anonymous("t::c", body)])


def test_repeats_only_where_a_second_run_stores_the_same():
    a0, o = Expr.load("a", Expr.u32(0)), lambda i: Expr.load("out", Expr.u32(i))
    # stored first, then read back and rewritten in place: repeats
    assert repeated(_counter([Node.store("out", Expr.u32(0), a0), Node.store("out", Expr.u32(0), Expr.add(o(0), a0))]))
    # read before this run wrote it: each run adds again (the reference's grid of runs adds 8 times)
    p = _counter([Node.store("out", Expr.u32(0), Expr.add(o(0), a0))])
    assert not repeated(p) and idle_bound(p)[0] is None
    # written only under a branch, then read: not proven
    branch = Node.if_then(Expr.lt(a0, Expr.f32(1.0)), [Node.store("out", Expr.u32(1), a0)])
    assert not repeated(_counter([branch, Node.store("out", Expr.u32(2), o(1))]))
    # an id: the invocations differ
    assert not repeated(_counter([Node.store("out", Expr.gid_x(), a0)]))


def test_vulkan_fft_convolve_runs_once_with_the_reference_bits(vk_device):
    p = get("vyre-libs::math::fft::fft_convolve_circular_complex").build()
    inputs = _inputs(p, np.random.default_rng(6))
    k = vk_device.compile(p)
    assert "only workgroup 0 runs" in k.explain()
    for _ in range(3):
        same(reference.run(p, inputs), k.run(inputs))
