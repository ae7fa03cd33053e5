"""privatize: small buffers every invocation rewrites in full stay in registers -- top_k and
softmax_top_k bit-identical with ties and special values on the reference and Vulkan, random
sizes, and one refusal per rule (a program whose invocations could see each other's slots, or the
buffer's initial contents, must keep its memory)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.ops.builder import out_decl, ro_decl, rw_decl
from vyre_vk.opt import optimize
from vyre_vk.opt.privatize import candidates, privatize

from .test_passes import same
from .test_phases_spread import _inputs


def _topk_inputs(p: Program, seed: int, ties: bool) -> dict:
    ins = _inputs(p, np.random.default_rng(seed), specials=not ties)
    for name, x in ins.items():
        if x.dtype == np.float32 and x.size > 8 and ties:
            x[::3] = x[0]  # equal values: the earlier index must win, as in the reference
    return ins


@pytest.mark.parametrize("ties", [False, True], ids=["specials", "ties"])
@pytest.mark.parametrize("op,kw", [("nn::top_k", dict(n=300, k=8)), ("nn::top_k", dict(n=5, k=7)),
                                   ("nn::softmax_top_k", dict(n=129, k=4))])
def test_top_k_family_privatized_bit_identical(op, kw, ties):
    p = get("vyre-libs::" + op).build_with(**kw)
    graph, reports = optimize(p, True)
    assert "kept in registers" in next(r.why for r in reports if r.name == "privatize")
    for s in graph.stages:
        validate(s)
    ins = _topk_inputs(p, kw["n"], ties)
    same(reference.run(p, ins), graph.run_reference(ins))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 200), st.integers(1, 16), st.integers(0, 2**31), st.booleans())
def test_random_top_k_sizes_bit_identical(n, k, seed, ties):
    p = get("vyre-libs::nn::top_k").build_with(n=n, k=k)
    out = privatize(p)
    assert out is not None
    validate(out)
    ins = _topk_inputs(p, seed, ties)
    same(reference.run(p, ins), reference.run(out, ins))


def _slots(read_first: bool = False, names_invocation: bool = False, count: int = 4) -> Program:
    """acc[s] = 0 for every slot, then for i: acc[i % count] += x[i]; out[0] = acc[0]."""
    init = [Node.store("acc", Expr.u32(s), Expr.f32(0.0)) for s in range(count)]
    if read_first:
        init.insert(1, Node.store("out", Expr.u32(0), Expr.load("acc", Expr.u32(3))))
    idx = Expr.rem(Expr.var("i"), Expr.u32(count))
    loop = Node.loop_for("i", Expr.u32(0), Expr.u32(50), [
        Node.store("acc", idx, Expr.add(Expr.load("acc", idx), Expr.load("x", Expr.var("i"))))])
    tail = [Node.store("out", Expr.gid_x() if names_invocation else Expr.u32(0), Expr.load("acc", Expr.u32(0)))]
    return Program.wrapped([ro_decl("x", 0, 50), rw_decl("acc", 1, count), out_decl("out", 2, 1)], (1, 1, 1),
                           [wrap_anonymous("test::slots", init + [loop] + tail)])


def test_dynamic_index_slots_bit_identical():
    p = _slots()
    out = privatize(p)
    assert out is not None and candidates(p)[0] == [("acc", 4)]
    ins = _inputs(p, np.random.default_rng(0), specials=True)
    same(reference.run(p, ins), reference.run(out, ins))


@pytest.mark.parametrize("kwargs,reason", [
    (dict(read_first=True), "no small buffer"),
    (dict(names_invocation=True), "names its invocation"),
    (dict(count=17), "no small buffer"),
])
def test_refusals_keep_the_program(kwargs, reason):
    p = _slots(**kwargs)
    bufs, why = candidates(p)
    assert not bufs and reason in why
    assert privatize(p) is None


def test_vulkan_top_k_privatized_matches_reference(vk_device):
    p = get("vyre-libs::nn::top_k").build_with(n=500, k=8)
    ins = _topk_inputs(p, 9, ties=True)
    k = vk_device.compile(p)
    assert "privatize" in k.explain()
    same(reference.run(p, ins), k.run(ins))
