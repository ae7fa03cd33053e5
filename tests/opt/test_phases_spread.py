"""split_phases and spread: one workgroup's reductions become a schedule of kernels, and every
result keeps the reference's bits -- on the registered norm/softmax/reduction ops at sizes that
are not multiples of the tile, with special values, on random one-workgroup reduction programs
(drawn, so the passes fire on shapes nobody wrote), and on Vulkan against the program as written.
The refusals each have a test: a rewrite that would change a value must not happen."""
from __future__ import annotations

import os
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.ops.builder import out_decl, ro_decl, strided_accumulate_child, strided_writeback_child
from vyre_vk.ops.primitives import F32_MIN, FIRST_WORKGROUP, max_f32_child, sum_f32_child
from vyre_vk.opt import optimize
from vyre_vk.opt.phases import split_phases
from vyre_vk.opt import spread
from vyre_vk.opt.spread import CHAIN_LANES
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir.walk import node_all_exprs, walk_nodes

from .test_passes import same

F32 = DataType.F32
TWO = ["split_phases", "spread"]
REDUCTIONS = ["nn::softmax", "nn::rms_norm", "nn::layer_norm", "math::reduce_variance", "math::dot"]
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38, 1e-38], np.float32)


def _inputs(p: Program, rng, specials: bool = False) -> dict:
    out = {}
    for b in p.buffers:
        if not b.is_input:
            continue
        if b.element is F32:
            x = (rng.standard_normal(b.count) * 4).astype(np.float32)
            if specials:
                pos = rng.choice(b.count, size=min(b.count, len(SPECIALS)), replace=False)
                x[pos] = SPECIALS[:len(pos)]
        else:
            x = rng.integers(0, 1 << 16, b.count).astype(b.element.numpy)
        out[b.name] = x
    return out


def _check(p: Program, inputs: dict, passes=TWO):
    want = reference.run(p, inputs)
    graph, reports = optimize(p, passes)
    assert not any("reverted" in r.why for r in reports), reports
    for s in graph.stages:
        validate(s)
    same(want, graph.run_reference(inputs))
    return graph, reports


@pytest.mark.parametrize("specials", [False, True], ids=["finite", "specials"])
@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("n", [1, 31, 1000, 4099])
def test_registered_reductions_split_and_spread_bit_identical(op, n, specials):
    entry = get("vyre-libs::" + op)
    p = entry.build_with(n=n)
    rng = np.random.default_rng(n)
    graph, reports = _check(p, _inputs(p, rng, specials=specials and n > 16))
    fired = {r.name for r in reports if r.changed}
    assert "split_phases" in fired and len(graph.stages) >= 2, reports
    assert "spread" in fired, reports


def test_softmax_schedule_is_what_the_docs_say():
    graph, reports = optimize(get("vyre-libs::nn::softmax").build_with(n=5000), TWO)
    # max chains | max tree + store max (one kernel, rejoin.py) | exp map | sum chains | sum tree | write-back
    assert [s.workgroup_size[0] for s in graph.stages] == [CHAIN_LANES, 256, 256, CHAIN_LANES, 256, 256]
    assert sum(isinstance(n, N.Barrier) for n in graph.stages[1].entry[0].body) == 1
    assert {b.name for b in graph.scratch} >= {"softmax_scratch", "softmax_max"}
    assert len(graph.scratch) == 3 and next(b for b in graph.scratch if b.name.startswith("opt_map")).count == 5000
    why = next(r.why for r in reports if r.name == "spread")
    assert "256 chains of 20 steps" in why and "map part" in why and "one invocation per element (5000)" in why


# ----------------------------------------------------------------------------- refusals
def _reduction(n: int = 300, tile: int = 64, scope_guarded: bool = True, carry: bool = False,
               early_store: bool = False) -> Program:
    """A softmax-like one-workgroup program, with one hazard switched on."""
    op = "test::reduction"
    body = [Node.let_bind("local", Expr.local_x())]
    if carry:  # a loaded value carried over a barrier: not a pure function of the invocation
        body.append(Node.let_bind("first", Expr.load("input", Expr.u32(0))))
    body += [strided_accumulate_child(op, tile, -(-n // tile), n, "acc", Expr.f32(F32_MIN), "scratch",
                                      lambda i, a: Expr.select(Expr.gt(Expr.load("input", i), a), Expr.load("input", i), a)),
             Node.barrier(),
             max_f32_child(op, tile, "scratch", FIRST_WORKGROUP)]
    if early_store:
        body.append(Node.store("output", Expr.u32(0), Expr.f32(1.0)))
    if not scope_guarded:  # every workgroup reads the scratch
        body.append(Node.let_bind("peek", Expr.load("scratch", Expr.u32(0))))
    body += [Node.barrier(),
             strided_writeback_child(op, tile, -(-n // tile), n, "output",
                                     [Node.let_bind("m", Expr.load("scratch", Expr.u32(0)))]
                                     + ([Node.let_bind("f", Expr.var("first"))] if carry else []),
                                     lambda i: Expr.sub(Expr.load("input", i),
                                                        Expr.var("m") if not carry else Expr.var("f")))]
    return Program.wrapped([ro_decl("input", 0, n), BufferDecl.workgroup("scratch", tile, F32), out_decl("output", 1, n)],
                           (tile, 1, 1), [wrap_anonymous(op, body)])


def test_reduction_fixture_splits():
    stages, scratch, why = split_phases(_reduction())
    assert len(stages) == 3 and [b.name for b in scratch] == ["scratch"], why
    _check(_reduction(), _inputs(_reduction(), np.random.default_rng(1)))


@pytest.mark.parametrize("hazard,reason", [
    (dict(scope_guarded=False), "outside workgroup 0"),
    (dict(carry=True), "carried from one phase into another"),
    (dict(early_store=True), "result used before the last phase"),
])
def test_refusals_keep_the_program(hazard, reason):
    p = _reduction(**hazard)
    stages, scratch, why = split_phases(p)
    assert stages == [p] and not scratch and reason in why
    _check(p, _inputs(p, np.random.default_rng(2)))  # and the pipeline still agrees with the reference


def test_two_dimensional_workgroup_is_refused():
    p = _reduction()
    p2 = Program(p.buffers, (32, 2, 1), p.entry, p.entry_op_id)
    assert split_phases(p2)[2] == "2-D/3-D workgroup"


# ----------------------------------------------------------------------------- random reductions
@st.composite
def one_workgroup_reductions(draw):
    """softmax-shaped programs: strided folds (sum/max/product-with-exp), trees, write-backs."""
    tile = draw(st.sampled_from([32, 64, 128, 256]))
    n = draw(st.integers(1, 3 * tile + 7) | st.integers(1, 40 * tile))
    chunks = -(-n // tile)
    op = "test::random_reduction"
    folds = {
        "sum": (Expr.f32(0.0), lambda i, a: Expr.add(a, Expr.load("input", i))),
        "max": (Expr.f32(F32_MIN), lambda i, a: Expr.select(Expr.gt(Expr.load("input", i), a), Expr.load("input", i), a)),
        "expsum": (Expr.f32(0.0), lambda i, a: Expr.add(a, Expr.exp(Expr.sub(Expr.load("input", i), Expr.f32(1.5))))),
        "sq": (Expr.f32(0.0), lambda i, a: Expr.fma(Expr.load("input", i), Expr.load("input", i), a)),
        "div": (Expr.f32(1.0), lambda i, a: Expr.add(a, Expr.div(Expr.load("input", i), Expr.f32(3.0)))),
    }
    fold = draw(st.sampled_from(sorted(folds)))
    init, step = folds[fold]
    tree = max_f32_child if fold == "max" else sum_f32_child
    back = draw(st.sampled_from(["scale", "sub", "exp"]))
    value = {"scale": lambda i: Expr.mul(Expr.load("input", i), Expr.var("r")),
             "sub": lambda i: Expr.sub(Expr.load("input", i), Expr.var("r")),
             "exp": lambda i: Expr.div(Expr.exp(Expr.sub(Expr.load("input", i), Expr.var("r"))), Expr.f32(7.0))}[back]
    body = [Node.let_bind("local", Expr.local_x()),
            strided_accumulate_child(op, tile, chunks, n, "acc", init, "scratch", step),
            Node.barrier(), tree(op, tile, "scratch", FIRST_WORKGROUP), Node.barrier(),
            strided_writeback_child(op, tile, chunks, n, "output", [Node.let_bind("r", Expr.load("scratch", Expr.u32(0)))],
                                    value)]
    p = Program.wrapped([ro_decl("input", 0, n), BufferDecl.workgroup("scratch", tile, F32), out_decl("output", 1, n)],
                        (tile, 1, 1), [wrap_anonymous(op, body)])
    return p, draw(st.integers(0, 2**31)), draw(st.sampled_from([False, False, True]))


@settings(max_examples=60, deadline=None)
@given(one_workgroup_reductions(), st.sampled_from(["2", "3", "16"]))
def test_random_one_workgroup_reductions_bit_identical(case, unroll):
    p, seed, specials = case
    with mock.patch.dict(os.environ, {"VYRE_VK_UNROLL": unroll}):  # small factors: several blocks, then the rest
        graph, reports = _check(p, _inputs(p, np.random.default_rng(seed), specials), passes=True)
    assert {"split_phases", "spread"} <= {r.name for r in reports if r.changed}, reports


def test_chain_loads_are_issued_ahead_by_unroll():
    """rms_norm at 80 x 256 + 5: the spread chain's loop (``let idx = chunk * 256 + local``, then a
    guarded fold) is unrolled x32 (nvidia's factor) by the unroll pass with idx inlined into the
    prefetched loads: blocks of 32 chunks whose 32 loads come first, then the last 17 as written."""
    graph, reports = optimize(get("vyre-libs::nn::rms_norm").build_with(n=80 * 256 + 5),
                              ["split_phases", "spread", "unroll"], device_class="nvidia")
    assert "unrolled x32" in next(r.why for r in reports if r.name == "unroll")
    chain = graph.stages[0]
    outer = [n for n in chain.entry[0].body[1].then if isinstance(n, N.Loop)]
    assert [(lp.from_.value, lp.to.value) for lp in outer] == [(0, 2), (64, 81)]
    body = outer[0].body
    prefetch = [n for n in body if isinstance(n, N.Let) and isinstance(n.value, E.Load)]
    assert len(prefetch) == 32 and body.index(prefetch[-1]) < next(k for k, n in enumerate(body) if isinstance(n, N.Block))
    assert sum(isinstance(n, N.Block) for n in body) == 32


# ----------------------------------------------------------------------------- Vulkan
@pytest.mark.parametrize("op", REDUCTIONS)
def test_vulkan_spread_schedule_matches_as_written_and_reference(vk_device, op):
    p = get("vyre-libs::" + op).build_with(n=3001)
    inputs = _inputs(p, np.random.default_rng(7), specials=op != "nn::softmax")  # inf would make softmax all NaN
    fast = vk_device.compile(p)
    assert len(fast.stages) >= 2 and "spread" in fast.explain()
    want = reference.run(p, inputs)
    same(want, vk_device.compile(p, optimize=False).run(inputs))
    same(want, fast.run(inputs))


def test_phases_left_in_workgroup_zero_run_as_one_kernel_with_barriers():
    """reduce_variance's 8-level merge tree and its final store: 9 one-workgroup kernels before
    rejoin.py, one kernel with 8 barriers after; same bits (and on Vulkan, above)."""
    p = get("vyre-libs::math::reduce_variance").build_with(n=1000)
    graph, reports = _check(p, _inputs(p, np.random.default_rng(3)))
    assert len(graph.stages) == 2
    body = graph.stages[1].entry[0].body
    assert [type(n).__name__ for n in body] == ["Block", "Barrier"] * 8 + ["Block"]
    assert "joined into one kernel each (9 kernels)" in next(r.why for r in reports if r.name == "spread")
    # a stage that also acts outside workgroup 0 is never joined
    from vyre_vk.opt.rejoin import rejoin, workgroup_zero_only
    assert workgroup_zero_only(graph.stages[1]) and not workgroup_zero_only(graph.stages[0])
    assert rejoin([graph.stages[0], graph.stages[1]])[1] is None
