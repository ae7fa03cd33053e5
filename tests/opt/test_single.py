"""single_invocation (vyre_vk/opt/single.py): programs whose invocations all compute the same stores run
as invocation 0 alone -- the reference's values, without the race of many invocations rewriting one
buffer in place (fft_radix2 was 1.2e6 ULP off on the H200 in the fast precision)."""
from __future__ import annotations

import numpy as np

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.opt import optimize
from vyre_vk.opt.single import single_invocation

F32 = DataType.F32


def _prog(body) -> Program:
    return Program.wrapped([BufferDecl.read("x", 0, F32).with_count(4), BufferDecl.output("o", 1, F32).with_count(4)],
                           (1, 1, 1), [wrap_anonymous("t", body)])


def test_in_place_programs_run_once_with_the_reference_values():
    p = get("vyre-libs::math::fft::fft_radix2").build_with(n=16)
    q = single_invocation(p)
    assert q is not None
    x = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    want = reference.run(p, {"input": x})["output"]
    assert np.array_equal(reference.run(q, {"input": x})["output"].view(np.uint32), want.view(np.uint32))
    _, reports = optimize(p, True)
    assert any(r.name == "single_invocation" and r.changed for r in reports)


def test_refused_where_invocations_differ_or_read_what_others_left():
    x0, o0 = Expr.load("x", Expr.u32(0)), Expr.load("o", Expr.u32(0))
    store_then_load = [Node.store("o", Expr.u32(0), x0), Node.store("o", Expr.u32(1), Expr.add(o0, x0))]
    assert single_invocation(_prog(store_then_load)) is not None
    # reads o[0] before storing it: the second invocation would read the first one's result
    assert single_invocation(_prog([Node.store("o", Expr.u32(0), Expr.add(o0, x0))])) is None
    # names its invocation: invocations differ
    assert single_invocation(_prog([Node.store("o", Expr.gid_x(), x0)])) is None
    # a load at a computed index of a stored buffer
    at = Expr.load("o", Expr.add(Expr.u32(0), Expr.u32(0)))
    assert single_invocation(_prog([Node.store("o", Expr.u32(0), x0), Node.store("o", Expr.u32(1), at)])) is None
    # a loop: not straight-line
    loop = Node.loop_for("i", Expr.u32(0), Expr.u32(2), [Node.store("o", Expr.u32(0), x0)])
    assert single_invocation(_prog([loop])) is None
