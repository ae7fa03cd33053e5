"""Every optimiser pass keeps the reference result bit-identical: registered ops, the
seed op at several sizes, ~100 random programs, plus one test per safety rule."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.errors import VyreError
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ir import expr as E
from vyre_vk.ir.optable import AtomicOp
from vyre_vk.ir import node as N
from vyre_vk.ops import all_ops, get
from vyre_vk.opt import (PASS_NAMES, coarsen, constant_fold, cse, dce, hoist_invariant, licm, optimize,
                         workgroup_size)
from vyre_vk.ir.walk import walk_nodes
from vyre_vk.reference.eval import EvalError
from vyre_vk.testing.strategies import programs, program_inputs
from vyre_vk.ir.walk import node_exprs, walk_expr

U32, I32, F32 = DataType.U32, DataType.I32, DataType.F32
SEED = "vyre-libs::nn::mlp_backward"
PASS_SETS = [[name] for name in PASS_NAMES] + [list(PASS_NAMES)]


def same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        assert x.tobytes() == y.tobytes(), f"buffer {k} differs: {x[:8]} vs {y[:8]}"


#: Reference outputs by (stage programs' hashes, scratch, inputs' key), this worker's: a registered
#: op's expected outputs are computed once for its 16 pass sets, and a graph that a pass left as it
#: was (or that two pass sets both produce) runs once. The reference is deterministic, so a graph
#: equal by content gives equal bits; a graph a pass changed has another hash and runs.
_OUTPUTS: dict = {}


def _reference_of(stages, scratch, run, key):
    if key is None:
        return run()
    k = (tuple(st_.content_hash() for st_ in stages), repr(tuple(scratch)), key)
    if k not in _OUTPUTS:
        _OUTPUTS[k] = run()
    return _OUTPUTS[k]


def check(program, inputs, passes, key=None, **kw):
    """`key` names `inputs` (e.g. op id and case number) so outputs can be reused (_OUTPUTS)."""
    expected = _reference_of((program,), (), lambda: reference.run(program, inputs), key)
    graph, reports = optimize(program, passes, **kw)
    assert not any("reverted" in r.why for r in reports), reports
    for st_ in graph.stages:
        validate(st_)
    got = _reference_of(graph.stages, graph.scratch, lambda: graph.run_reference(inputs), key)
    same(expected, got)
    return graph, reports


def runnable(program, seed):
    """Inputs for a drawn program, or None when it is invalid or traps on the reference
    (random programs may: those cases say nothing about a pass)."""
    try:
        validate(program)
    except Exception:
        return None
    inputs = program_inputs(program, seed)
    try:
        reference.run(program, inputs)
    except EvalError:
        return None
    return inputs


def seed_inputs(d, h, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal(d, dtype=np.float32),
            "w1": rng.standard_normal(d * h, dtype=np.float32),
            "b1": rng.standard_normal(h, dtype=np.float32),
            "w2": rng.standard_normal(h * d, dtype=np.float32),
            "grad_out": rng.standard_normal(d, dtype=np.float32)}


# ----------------------------------------------------------------------------- registered ops
# Every op through all passes together, by the driver; each pass alone on every op is
# test_protocol.py's test_each_pass_run_alone_keeps_vectors_identical (its rewrite validated and
# compared the same way), and random programs below go through each pass alone by the driver too.
@pytest.mark.parametrize("entry", all_ops(), ids=[e.id for e in all_ops()])
def test_registered_vectors_identical(entry):
    program = entry.build()
    for k, case in enumerate(entry.test_inputs()):
        check(program, case, True, key=(entry.id, k))


@pytest.mark.parametrize("d,h", [(1, 1), (3, 5), (17, 9), (64, 33), (40, 128)])
def test_seed_sizes_identical(d, h):
    program = get(SEED).build_with(model_dim=d, hidden_dim=h)
    graph, reports = check(program, seed_inputs(d, h, d * h), True)
    assert len(graph.stages) == 3  # h and g chains in separate invocations, their combine, the main kernel
    assert [b.count for b in graph.scratch] == [h, 2 * h, 2 * h]


def test_seed_hoist_finds_the_invariant_work():
    program = get(SEED).build_with(model_dim=8, hidden_dim=4)
    h = hoist_invariant(program)
    assert h is not None and h.loop_var == "j" and h.exported == ("gh",)
    moved = [n.name for n in walk_nodes(h.prepass.entry) if isinstance(n, (N.Let, N.Assign))]
    for name in ("h_acc", "d_act", "gh_act", "gh"):
        assert name in moved
    # the main program no longer has the O(M) inner loops: one loop (j) left
    loops = [n.var for n in walk_nodes(h.main.entry) if isinstance(n, N.Loop)]
    assert loops == ["j"]
    assert h.scratch[0].count == 4 and h.scratch[0].element is F32


# ----------------------------------------------------------------------------- random programs
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 3))
def test_random_programs_identical(program, seed):
    inputs = program_inputs(program, seed)
    try:
        expected = reference.run(program, inputs)
    except EvalError:
        return
    for passes in PASS_SETS:
        graph, reports = optimize(program, passes, hoist_min_loops=0)
        assert not any("reverted" in r.why for r in reports), reports
        for s in graph.stages:
            validate(s)
        same(expected, graph.run_reference(inputs))


def _per_invocation_scaffold(draw, max_expr_depth: int):
    """A random program's buffers, an expression generator over its inputs, and a scope with `i`."""
    from vyre_vk.testing.strategies import _Gen, _Scope
    base = draw(programs(max_statements=0, allow_atomics=False, allow_workgroup=False))
    ins = {b.name: b for b in base.buffers if not b.is_result}
    g = _Gen(draw, ins, None, None, max_expr_depth=max_expr_depth)
    scope = _Scope()
    scope.vars.append(("i", U32, True))
    return base, ins, base.buffer("out"), g, scope


@st.composite
def elementwise_programs(draw):
    """Random elementwise maps: out[i] = f(inputs at any index, i), guarded or not."""
    base, ins, out, g, scope = _per_invocation_scaffold(draw, 2)
    body = [Node.let_bind("i", Expr.gid_x())]
    stores = [Node.store("out", Expr.var("i"), g.expr(out.element, scope)) for _ in range(draw(st.integers(1, 2)))]
    if draw(st.booleans()):
        body.append(Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(out.count)), stores))
    else:
        body.extend(stores)
    wg = draw(st.sampled_from([(1, 1, 1), (4, 1, 1), (64, 1, 1)]))
    return Program.wrapped(base.buffers, wg, [wrap_anonymous("fuzz::elementwise", body)])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(elementwise_programs(), st.integers(0, 3))
def test_coarsen_random_elementwise_identical(program, seed):
    inputs = program_inputs(program, seed)
    graph, reports = check(program, inputs, ["coarsen", "workgroup_size"])
    from vyre_vk.opt import uses_workgroup_scope
    from vyre_vk.ir.walk import node_all_exprs
    from vyre_vk.opt.analysis import Facts
    facts = Facts(program)
    can_trap = any(facts.may_trap(x) for x in node_all_exprs(program.entry))  # traps name one invocation
    expected = uses_workgroup_scope(program) is None and not can_trap  # LocalId/WorkgroupId pin the layout
    assert [r.changed for r in reports if r.name == "coarsen"] == [expected]


# ----------------------------------------------------------------------------- one rule each
def _prog(body, bufs=None, wg=(64, 1, 1)):
    bufs = bufs or [BufferDecl.read("a", 0, F32).with_count(8), BufferDecl.output("out", 1, F32).with_count(8)]
    return Program.wrapped(bufs, wg, [wrap_anonymous("test::opt", body)])


def test_fold_is_bit_exact_including_canonicalisation():
    tiny = Expr.f32(1e-39)  # subnormal: the reference flushes it
    nan = E.LitF32(0x7FA00001)  # a NaN with a payload: the reference canonicalises it
    prog = _prog([Node.let_bind("i", Expr.gid_x()),
                  Node.store("out", Expr.u32(0), Expr.mul(tiny, Expr.f32(1e30))),
                  Node.store("out", Expr.u32(1), Expr.add(nan, Expr.f32(1.0))),
                  Node.store("out", Expr.u32(2), Expr.fma(Expr.f32(0.1), Expr.f32(10.0), Expr.f32(-1.0))),
                  Node.store("out", Expr.u32(3), Expr.cast(F32, Expr.u32(0xFFFFFFFF)))])
    q, why = constant_fold(prog)
    assert q != prog and "folded" in why
    stores = [n for n in walk_nodes(q.entry) if isinstance(n, N.Store)]
    assert all(isinstance(s.value, E.LitF32) for s in stores)
    assert stores[0].value.bits == 0 and stores[1].value.bits == 0x7FC00000
    same(reference.run(prog, {"a": np.ones(8, np.float32)}), reference.run(q, {"a": np.ones(8, np.float32)}))


def test_fold_keeps_i32_division_by_zero_and_propagates_constants():
    prog = _prog([Node.let_bind("z", Expr.i32(0)),
                  Node.let_bind("q", Expr.div(Expr.i32(1), Expr.var("z"))),
                  Node.let_bind("k", Expr.u32(3)),
                  Node.store("out", Expr.var("k"), Expr.f32(1.0))])
    q, _ = constant_fold(prog)
    divs = [x for n in walk_nodes(q.entry) for e in node_exprs(n) for x in walk_expr(e)
            if isinstance(x, E.BinOpExpr) and x.op is E.BinOp.Div]
    assert divs, "i32 1/0 must stay: the reference aborts on it"
    assert any(isinstance(n, N.Store) and n.index == Expr.u32(3) for n in walk_nodes(q.entry))
    with pytest.raises(EvalError):
        reference.run(q, {"a": np.ones(8, np.float32)})
    q2, _ = dce(q)
    with pytest.raises(EvalError):  # DCE must not remove the trapping let either
        reference.run(q2, {"a": np.ones(8, np.float32)})


def test_cse_binds_repeats_once():
    i = Expr.var("i")
    x = Expr.mul(Expr.load("a", i), Expr.f32(3.0))
    prog = _prog([Node.let_bind("i", Expr.gid_x()),
                  Node.if_then(Expr.lt(i, Expr.u32(8)), [Node.store("out", i, Expr.add(x, Expr.sub(x, x)))])])
    q, why = cse(prog)
    assert "1 repeated" in why
    lets = [n for n in walk_nodes(q.entry) if isinstance(n, N.Let) and n.name.startswith("cse_")]
    assert len(lets) == 1 and lets[0].value == x
    same(reference.run(prog, {"a": np.arange(8, dtype=np.float32)}), reference.run(q, {"a": np.arange(8, dtype=np.float32)}))


def test_cse_respects_assignments():
    prog = _prog([Node.let_bind("v", Expr.f32(1.0)),
                  Node.store("out", Expr.u32(0), Expr.mul(Expr.var("v"), Expr.f32(2.0))),
                  Node.assign("v", Expr.f32(5.0)),
                  Node.store("out", Expr.u32(1), Expr.mul(Expr.var("v"), Expr.f32(2.0)))])
    q, _ = cse(prog)
    out = reference.run(q, {"a": np.ones(8, np.float32)})["out"]
    assert out[0] == 2.0 and out[1] == 10.0


def test_constant_fold_keeps_dead_atomics_that_decide_the_grid():
    """An atomic makes the grid cover every bound buffer (ir/grid.py): folding away the zero-trip loop
    that holds a program's only atomic ran 4 invocations instead of 16 (hypothesis found it)."""
    from vyre_vk.ir.grid import dispatch_grid

    gid = Expr.gid_x()
    p = Program.wrapped(
        [BufferDecl.read("a", 0, U32).with_count(15), BufferDecl.output("out", 1, U32).with_count(7),
         BufferDecl.read_write("counter", 2, U32).with_count(1)], (4, 2, 1),
        [wrap_anonymous("t", [
            Node.store("out", Expr.bitor(gid, Expr.shl(E.InvocationId(1), Expr.u32(16))), Expr.load("a", Expr.u32(0))),
            Node.if_then_else(Expr.bool(False), [], [Node.loop_for("l", Expr.u32(2), Expr.u32(2), [
                Node.let_bind("old", Expr.atomic(AtomicOp.Add, "counter", Expr.u32(0), Expr.u32(1)))])]),
            Node.loop_for("k", Expr.u32(3), Expr.u32(1), [
                Node.let_bind("old2", Expr.atomic(AtomicOp.Add, "counter", Expr.u32(0), Expr.u32(1)))])])])
    inputs = {"a": np.arange(1, 16, dtype=np.uint32), "counter": np.zeros(1, np.uint32)}
    q, _ = constant_fold(p)
    assert dispatch_grid(q, {}) == dispatch_grid(p, {}) == (2, 2, 1)
    same(reference.run(p, inputs), reference.run(q, inputs))
    check(p, inputs, ["constant_fold"])
    check(p, inputs, True)


def test_licm_does_not_hoist_loads_past_stores_to_the_same_buffer():
    bufs = [BufferDecl.read_write("buf", 0, F32).with_count(4), BufferDecl.output("out", 1, F32).with_count(4)]
    prog = _prog([Node.let_bind("acc", Expr.f32(0.0)),
                  Node.loop_for("k", Expr.u32(0), Expr.u32(3), [
                      Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("buf", Expr.u32(0)))),
                      Node.store("buf", Expr.u32(0), Expr.add(Expr.load("buf", Expr.u32(0)), Expr.f32(1.0)))]),
                  Node.store("out", Expr.u32(0), Expr.var("acc"))], bufs, wg=(1, 1, 1))
    q, _ = licm(prog)
    assert q == prog
    same(reference.run(prog, {"buf": np.ones(4, np.float32)}), reference.run(q, {"buf": np.ones(4, np.float32)}))


def test_licm_does_not_hoist_traps_out_of_zero_trip_loops():
    bufs = [BufferDecl.read("d", 0, I32).with_count(1), BufferDecl.output("out", 1, I32).with_count(1)]
    prog = _prog([Node.let_bind("s", Expr.i32(0)),
                  Node.loop_for("k", Expr.u32(0), Expr.u32(0), [
                      Node.assign("s", Expr.div(Expr.i32(7), Expr.load("d", Expr.u32(0))))]),
                  Node.store("out", Expr.u32(0), Expr.var("s"))], bufs, wg=(1, 1, 1))
    q, _ = licm(prog)
    loop = next(n for n in walk_nodes(q.entry) if isinstance(n, N.Loop))
    outside = [x for n in q.entry[0].body if not isinstance(n, N.Loop) for e in node_exprs(n) for x in walk_expr(e)]
    assert not any(isinstance(x, E.BinOpExpr) and x.op is E.BinOp.Div for x in outside)
    assert any(isinstance(x, E.BinOpExpr) and x.op is E.BinOp.Div
               for n in loop.body for e in node_exprs(n) for x in walk_expr(e))
    assert reference.run(q, {"d": np.zeros(1, np.int32)})["out"][0] == 0  # 0 trips: no 7/0


def test_licm_hoists_pure_invariants_and_keeps_f32_order():
    i = Expr.var("i")
    inv = Expr.add(Expr.mul(Expr.load("a", i), Expr.f32(0.1)), Expr.f32(0.7))
    prog = _prog([Node.let_bind("i", Expr.gid_x()), Node.let_bind("acc", Expr.f32(0.0)),
                  Node.loop_for("k", Expr.u32(0), Expr.u32(5), [
                      Node.assign("acc", Expr.add(Expr.var("acc"), inv))]),
                  Node.store("out", Expr.u32(0), Expr.var("acc"))])
    q, why = licm(prog)
    assert "moved 1" in why
    loop = next(n for n in walk_nodes(q.entry) if isinstance(n, N.Loop))
    assert all(not isinstance(x, E.Load) for n in loop.body for e in node_exprs(n) for x in walk_expr(e))
    a = np.linspace(-3, 3, 8, dtype=np.float32)
    same(reference.run(prog, {"a": a}), reference.run(q, {"a": a}))


def test_workgroup_size_keeps_declared_size_when_observed():
    for body in ([Node.store("out", Expr.local_x(), Expr.f32(1.0))],
                 [Node.barrier(), Node.store("out", Expr.u32(0), Expr.f32(1.0))],
                 [Node.store("out", Expr.workgroup_x(), Expr.f32(1.0))]):
        p = _prog(body)
        q, _ = workgroup_size(p, 256)
        assert q == p
    p = _prog([Node.store("out", Expr.gid_x(), Expr.f32(1.0))], wg=(4, 2, 1))
    assert workgroup_size(p, 256)[0] == p


def test_workgroup_size_keeps_the_invocation_set_for_unguarded_tails():
    # 8 outputs at local size 4 -> 8 invocations; at 256 the extra ids must not store
    bufs = [BufferDecl.read("a", 0, U32).with_count(8), BufferDecl.output("out", 1, U32).with_count(8)]
    p = _prog([Node.store("out", Expr.rem(Expr.gid_x(), Expr.u32(8)), Expr.gid_x())], bufs, wg=(4, 1, 1))
    q, why = workgroup_size(p, 256)
    assert q.workgroup_size == (256, 1, 1) and "global ids unchanged" in why
    same(reference.run(p, {"a": np.zeros(8, np.uint32)}), reference.run(q, {"a": np.zeros(8, np.uint32)}))
    # runtime-sized result buffer: the guard is computed from buf_len
    bufs = [BufferDecl.read_write("rw", 0, U32).with_count(1)]
    p = _prog([Node.store("rw", Expr.rem(Expr.gid_x(), Expr.u32(5)), Expr.gid_x())], bufs, wg=(4, 1, 1))
    q, _ = workgroup_size(p, 256)
    for n in (1, 5, 9, 300):
        same(reference.run(p, {"rw": np.zeros(n, np.uint32)}), reference.run(q, {"rw": np.zeros(n, np.uint32)}))


def test_coarsen_only_elementwise():
    i = Expr.var("i")
    ew = _prog([Node.let_bind("i", Expr.gid_x()),
                Node.if_then(Expr.lt(i, Expr.u32(8)), [Node.store("out", i, Expr.sqrt(Expr.load("a", i)))])])
    q, why = coarsen(ew)
    assert q != ew and "4 elements per invocation" in why
    a = np.arange(8, dtype=np.float32)
    same(reference.run(ew, {"a": a}), reference.run(q, {"a": a}))
    shifted = _prog([Node.let_bind("i", Expr.gid_x()),
                     Node.store("out", Expr.add(i, Expr.u32(1)), Expr.load("out", i))])
    assert coarsen(shifted)[0] == shifted


def _map_program(n):
    """out[i] = a[i] + 1 over u32 buffers of n elements (n = 0: runtime-sized, `out` read_write)."""
    i = Expr.var("i")
    bufs = ([BufferDecl.read("a", 0, DataType.U32).with_count(n), BufferDecl.output("out", 1, DataType.U32).with_count(n)]
            if n else [BufferDecl.read("a", 0, DataType.U32), BufferDecl.read_write("out", 1, DataType.U32)])
    return Program.wrapped(bufs, (64, 1, 1), [Node.let_bind("i", Expr.gid_x()), Node.if_then(
        Expr.lt(i, Expr.buf_len("out")), [Node.store("out", i, Expr.add(Expr.load("a", i), Expr.u32(1)))])])


@pytest.mark.parametrize("n,cls,coarsened", [(64, "nvidia", False), ((1 << 17) - 1, "nvidia", False),
                                             (1 << 17, "nvidia", True), (0, "nvidia", True),
                                             (64, "default", True), (64, "llvmpipe", True)])
def test_coarsen_leaves_small_maps_alone_where_measured(n, cls, coarsened):
    """nvidia: a map with fewer than COARSEN_MIN_INVOCATIONS elements is launch-bound, so it is not
    coarsened (a data-sized one is not assumed small); other classes coarsen as before. Either way the
    reference's bits."""
    from vyre_vk.opt.dispatch import COARSEN_MIN_INVOCATIONS, coarsen_factor

    assert COARSEN_MIN_INVOCATIONS["nvidia"] == 1 << 17
    p = _map_program(n)
    graph, reports = optimize(p, device_class=cls)
    (stage,) = graph.stages
    assert (coarsen_factor(stage) == 4) is coarsened
    assert [r.changed for r in reports if r.name == "coarsen"] == [coarsened]
    a = np.arange(n or 300, dtype=np.uint32) * 7
    inputs = {"a": a} if n else {"a": a, "out": np.zeros(300, np.uint32)}
    same(reference.run(p, inputs), graph.run_reference(inputs))


def test_optimize_rejects_unknown_pass_and_reports_every_pass():
    with pytest.raises(ValueError, match="unknown optimiser pass") as err:
        optimize(get(SEED).build(), ["nope"])
    assert isinstance(err.value, VyreError) and "constant_fold" in err.value.fix
    _, reports = optimize(get(SEED).build())
    assert [r.name for r in reports] == list(PASS_NAMES)
    assert all((r.why != "") == r.changed for r in reports)
    graph, reports = optimize(get(SEED).build(), False)
    assert graph.single == get(SEED).build() and reports == []


@st.composite
def seed_like_programs(draw):
    """Random programs shaped like the seed op: per-invocation accumulation over a loop `j`
    whose body mixes j-only values (hoistable, incl. inner accumulate loops) and
    invocation-dependent ones, so hoist_invariant fires with varied splits."""
    base, ins, out, g, scope = _per_invocation_scaffold(draw, 2)
    jscope = scope.child()
    jscope.vars.append(("j", U32, True))
    body = []
    for k in range(draw(st.integers(1, 4))):
        t = draw(st.sampled_from([U32, I32, F32]))
        name = f"h{k}"
        body.append(Node.let_bind(name, g.expr(t, jscope)))
        if draw(st.booleans()):
            inner = jscope.child()
            inner.vars.append((f"m{k}", U32, True))
            body.append(Node.loop_for(f"m{k}", Expr.u32(0), Expr.u32(draw(st.integers(0, 3))), [
                Node.assign(name, g.expr(t, inner))]))
        jscope.vars.append((name, t, False))
        if draw(st.booleans()):  # an invocation-dependent statement in the middle
            body.append(Node.assign("acc", Expr.add(Expr.var("acc"), g.expr(out.element, jscope))))
    body.append(Node.assign("acc", Expr.add(Expr.var("acc"), g.expr(out.element, jscope))))
    zero = {U32: Expr.u32(0), I32: Expr.i32(0), F32: Expr.f32(0.0)}[out.element]
    lo, n = draw(st.integers(0, 2)), draw(st.integers(1, 6))
    entry = [Node.let_bind("i", Expr.gid_x()),
             Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(out.count)), [
                 Node.let_bind("acc", zero),
                 Node.loop_for("j", Expr.u32(lo), Expr.u32(lo + n), body),
                 Node.store("out", Expr.var("i"), Expr.var("acc"))])]
    return Program.wrapped(base.buffers, draw(st.sampled_from([(1, 1, 1), (4, 1, 1), (64, 1, 1)])),
                           [wrap_anonymous("fuzz::seedlike", entry)])


HOISTED = []


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed_like_programs(), st.integers(0, 3))
def test_hoist_random_seed_like_identical(program, seed):
    inputs = program_inputs(program, seed)
    try:
        expected = reference.run(program, inputs)
    except EvalError:
        return
    for passes in (["hoist_invariant"], list(PASS_NAMES)):
        graph, reports = optimize(program, passes, hoist_min_loops=0)
        assert not any("reverted" in r.why for r in reports), reports
        for s in graph.stages:
            validate(s)
        same(expected, graph.run_reference(inputs))
        HOISTED.append(len(graph.stages) > 1)


def test_hoist_fired_on_random_programs():
    if not HOISTED:
        pytest.skip("runs after test_hoist_random_seed_like_identical")
    assert sum(HOISTED) >= len(HOISTED) // 10, f"hoisted in {sum(HOISTED)} of {len(HOISTED)}"


# ----------------------------------------------------------------------------- parallelism-aware local size
def test_few_invocations_get_smaller_workgroups_on_gpus(monkeypatch):
    from vyre_vk.opt.dispatch import MIN_WORKGROUPS
    monkeypatch.setenv("VYRE_VK_STREAM", "0")  # the chain-per-invocation schedule this sizes (stream: test_stream.py)
    program = get(SEED).build_with(model_dim=2048, hidden_dim=8192)
    graph, reports = optimize(program, device_class="nvidia")
    # fission stage: 2 x 8192 invocations -> 64 wide (256 workgroups); combine: 8192 -> 32 wide;
    # main: 2048 -> 16 wide (128)
    assert [s.workgroup_size[0] for s in graph.stages] == [64, 32, 16]
    assert "ids >= 2048 do nothing" in next(r.why for r in reports if r.name == "workgroup_size")
    # CPU devices and unknown GPUs keep the table's local size
    assert MIN_WORKGROUPS["llvmpipe"][0] == 1
    assert [s.workgroup_size[0] for s in optimize(program, device_class="llvmpipe")[0].stages] == [256, 256, 256]


@pytest.mark.parametrize("d,h", [(1, 1), (17, 9), (40, 128), (300, 64)])
def test_seed_small_workgroups_identical(monkeypatch, d, h):
    monkeypatch.setenv("VYRE_VK_STREAM", "0")  # as above: workgroup_size's sizes, not stream's
    program = get(SEED).build_with(model_dim=d, hidden_dim=h)
    graph, _ = check(program, seed_inputs(d, h, d + h), True, device_class="nvidia")
    assert all(s.workgroup_size[0] < 64 for s in graph.stages) or d * h > 64 * 132


def test_smaller_workgroup_needs_idle_tail():
    from vyre_vk.opt.dispatch import inert_from
    # gid >= 8 still stores (out[gid % 8]): the 64 original invocations must all run,
    # so the local size may grow (guarded) but never shrink below 64
    bufs = [BufferDecl.read("a", 0, U32).with_count(8), BufferDecl.output("out", 1, U32).with_count(8)]
    p = _prog([Node.store("out", Expr.rem(Expr.gid_x(), Expr.u32(8)), Expr.gid_x())], bufs, wg=(64, 1, 1))
    assert inert_from(p) is None
    q, _ = workgroup_size(p, 256, min_workgroups=132, min_local=16)
    assert q.workgroup_size[0] >= 64
    same(reference.run(p, {"a": np.zeros(8, np.uint32)}), reference.run(q, {"a": np.zeros(8, np.uint32)}))
    # guarded at a bound above the output length: not provably idle from n on
    i = Expr.var("i")
    p = _prog([Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(9)), [
        Node.store("out", Expr.u32(0), i)])], bufs)
    assert inert_from(p) == 9 and workgroup_size(p, 256, 132, 16)[0].workgroup_size[0] >= 64
    # guarded at n: shrinks
    p = _prog([Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(8)), [
        Node.store("out", i, i)])], bufs)
    q, why = workgroup_size(p, 256, 132, 16)
    assert q.workgroup_size[0] == 16 and "ids >= 8 do nothing" in why
    same(reference.run(p, {"a": np.zeros(8, np.uint32)}), reference.run(q, {"a": np.zeros(8, np.uint32)}))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 3))
def test_random_programs_identical_gpu_classes(program, seed):
    inputs = program_inputs(program, seed)
    try:
        expected = reference.run(program, inputs)
    except EvalError:
        return
    for cls in ("nvidia", "amd"):
        graph, reports = optimize(program, True, device_class=cls, hoist_min_loops=0)
        assert not any("reverted" in r.why for r in reports), reports
        same(expected, graph.run_reference(inputs))


# ----------------------------------------------------------------------------- unroll (load prefetch)
@st.composite
def reduction_programs(draw):
    """out[i] = fold over m in lo..lo+n of random expressions of (i, m, acc, lets, loads)."""
    base, ins, out, g, scope = _per_invocation_scaffold(draw, 3)
    scope.vars.append(("acc", out.element, False))
    inner = scope.child()
    inner.vars.append(("m", U32, True))
    body = []
    src = draw(st.sampled_from(sorted(ins)))  # one load at an index from m, so most loops qualify
    body.append(Node.let_bind("ld", Expr.load(src, Expr.add(Expr.var("m"), Expr.u32(draw(st.integers(0, 3)))))))
    inner.vars.append(("ld", ins[src].element, False))
    for k in range(draw(st.integers(0, 2))):
        t = draw(st.sampled_from([U32, I32, F32]))
        body.append(Node.let_bind(f"t{k}", g.expr(t, inner)))
        inner.vars.append((f"t{k}", t, False))
    step = Node.assign("acc", Expr.add(Expr.var("acc"), g.expr(out.element, inner)))
    body.append(Node.if_then(g.expr(DataType.Bool, inner), [step]) if draw(st.booleans()) else step)
    zero = {U32: Expr.u32(0), I32: Expr.i32(0), F32: Expr.f32(0.0), DataType.Bool: Expr.bool(False)}.get(out.element)
    if zero is None:
        zero = Expr.u32(0)
    lo, n = draw(st.integers(0, 3)), draw(st.sampled_from([0, 5, 16, 33, 40, 47]))
    entry = [Node.let_bind("i", Expr.gid_x()),
             Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(out.count)), [
                 Node.let_bind("acc", zero),
                 Node.loop_for("m", Expr.u32(lo), Expr.u32(lo + n), body),
                 Node.store("out", Expr.var("i"), Expr.var("acc"))])]
    return Program.wrapped(base.buffers, (64, 1, 1), [wrap_anonymous("fuzz::reduction", entry)])


UNROLLED = []


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(reduction_programs(), st.integers(0, 3))
def test_unroll_random_reductions_identical(program, seed):
    inputs = runnable(program, seed)
    if inputs is None:
        return
    graph, reports = check(program, inputs, ["unroll"])
    UNROLLED.append(reports[0].changed)
    check(program, inputs, list(PASS_NAMES))


def test_unroll_fired_on_random_reductions():
    if not UNROLLED:
        pytest.skip("runs after test_unroll_random_reductions_identical")
    assert sum(UNROLLED) >= len(UNROLLED) // 5, f"unrolled in {sum(UNROLLED)} of {len(UNROLLED)}"


def test_unroll_rules():
    from vyre_vk.opt.unroll import unroll_loads
    i, m = Expr.var("i"), Expr.var("m")
    bufs = [BufferDecl.read("a", 0, F32).with_count(40), BufferDecl.output("out", 1, F32).with_count(8)]

    def red(n, step, extra=()):
        return _prog([Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(8)), [
            Node.let_bind("acc", Expr.f32(0.0)), Node.loop_for("m", Expr.u32(1), Expr.u32(1 + n), [*extra, step]),
            Node.store("out", i, Expr.var("acc"))])], bufs)

    a = np.random.default_rng(2).standard_normal(40).astype(np.float32)
    # 37 iterations: 2 x 16 unrolled + a 5-iteration rest; out-of-bounds loads (m + i > 39) read 0
    p = red(37, Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", Expr.add(m, i)))))
    q, why = unroll_loads(p)
    assert "loop m (37 iterations, 1 load(s) each)" in why
    loops = [n for n in walk_nodes(q.entry) if isinstance(n, N.Loop)]
    assert [(lp.from_.value, lp.to.value) for lp in loops] == [(0, 2), (33, 38)]
    same(reference.run(p, {"a": a}), reference.run(q, {"a": a}))
    # a load indexed by what the body computes is not prefetched (it stays in its copy)
    t = Expr.var("t")
    p = red(40, Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", t))),
            [Node.let_bind("t", Expr.rem(Expr.add(m, Expr.cast(U32, Expr.load("a", m))), Expr.u32(40)))])
    q, why = unroll_loads(p)
    assert "1 load(s) each" in why
    same(reference.run(p, {"a": a}), reference.run(q, {"a": a}))
    # an index let of pure arithmetic (`let j = (m % 20) * 2`) is inlined in a spread fold chain (only
    # there: elsewhere the newly unrolled programs were not measured), and its guarded load prefetched
    from vyre_vk.ir.program import Region
    from vyre_vk.opt.spread import SPREAD_GENERATOR
    j = Expr.var("j")
    p = red(40, Node.if_then(Expr.lt(j, Expr.u32(39)), [
        Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", j)))]),
        [Node.let_bind("j", Expr.mul(Expr.rem(m, Expr.u32(20)), Expr.u32(2)))])
    assert unroll_loads(p) == (p, "")
    p = Program(p.buffers, p.workgroup_size, (Region(SPREAD_GENERATOR, None, p.entry[0].body),), p.entry_op_id)
    q, why = unroll_loads(p)
    assert "loop m (40 iterations, 1 load(s) each)" in why
    pre = [n for n in walk_nodes(q.entry) if isinstance(n, N.Let) and isinstance(n.value, E.Load)]
    assert len(pre) == 16 and all(not any(isinstance(x, E.Var) and x.name == "j" for x in walk_expr(n.value))
                                  for n in pre)
    same(reference.run(p, {"a": a}), reference.run(q, {"a": a}))
    # a loop that stores, or too short, is left alone
    p = red(20, Node.store("out", i, Expr.load("a", m)))
    assert unroll_loads(p)[0] == p
    p = red(31, Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", m))))
    assert unroll_loads(p)[0] == p


def test_unroll_loads_in_flight_budget():
    """With a budget of loads in flight, a light loop gets budget / (its loads) copies when that is
    more than the factor; a heavy body (a division) or a short loop keeps the factor; same bits."""
    from vyre_vk.opt.unroll import unroll_loads
    i, m, acc = Expr.var("i"), Expr.var("m"), Expr.var("acc")
    bufs = [BufferDecl.read("a", 0, F32).with_count(80), BufferDecl.output("out", 1, F32).with_count(8)]

    from vyre_vk.ir.program import Region
    from vyre_vk.opt.spread import SPREAD_GENERATOR

    def red(n, value):  # a fold chain as spread makes them (the budget applies to those only)
        p = _prog([Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(8)), [
            Node.let_bind("acc", Expr.f32(0.0)), Node.loop_for("m", Expr.u32(1), Expr.u32(1 + n), [
                Node.assign("acc", value)]), Node.store("out", i, acc)])], bufs)
        return Program(p.buffers, p.workgroup_size, (Region(SPREAD_GENERATOR, None, p.entry[0].body),), p.entry_op_id)

    a = {"a": np.random.default_rng(3).standard_normal(80).astype(np.float32)}
    one = red(70, Expr.add(acc, Expr.load("a", Expr.add(m, i))))
    two = red(70, Expr.add(acc, Expr.mul(Expr.load("a", m), Expr.load("a", Expr.add(m, i)))))
    heavy = red(70, Expr.add(acc, Expr.div(Expr.load("a", Expr.add(m, i)), Expr.f32(3.0))))
    for p, budget, copies in ((one, 32, 32), (two, 32, 16), (two, 8, 4), (heavy, 32, 4), (one, 0, 4)):
        q, why = unroll_loads(p, 4, inflight=budget)
        blocks = [n for n in walk_nodes(q.entry) if isinstance(n, N.Loop)][0]
        prefetched = [n for n in blocks.body if isinstance(n, N.Let) and isinstance(n.value, E.Load)]
        per = 1 if p is one else 2 if p is two else 1
        assert len(prefetched) == copies * per, (budget, why)
        assert (f"x{copies}: {per} load(s) per iteration" in why) == (copies > 4)
        same(reference.run(p, a), reference.run(q, a))
    # 70 iterations are too few for 64 copies (two blocks at least): the factor stays
    assert "per iteration" not in unroll_loads(one, 4, inflight=64)[1]
    # outside a fold chain (not measured there: hash, decode, parsing loops) the factor stays
    plain = Program(one.buffers, one.workgroup_size, (Region("t::plain", None, one.entry[0].body),), one.entry_op_id)
    assert "per iteration" not in unroll_loads(plain, 4, inflight=32)[1]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(programs(allow_traps=True))
def test_pure_subtrees_agrees_with_is_pure(program):
    """cse counts candidates with the one-pass purity walk; it must match the per-node rule."""
    from vyre_vk.opt.analysis import Facts
    facts = Facts(program)
    for n in walk_nodes(program.entry):
        for e in node_exprs(n):
            pairs = facts.pure_subtrees(e)
            assert [x for x, _ in pairs][-1] == e and len(pairs) == sum(1 for _ in walk_expr(e))
            for x, ok in pairs:
                assert ok == facts.is_pure(x)


def test_dce_is_linear_on_a_ten_thousand_let_chain():
    """The hostile suite's let-chain-10000 hung in dce (a walk of the rest per let: quadratic)."""
    import time

    body = [Node.let_bind("v0", Expr.gid_x())]
    body += [Node.let_bind(f"v{k}", Expr.add(Expr.var(f"v{k - 1}"), Expr.u32(1))) for k in range(1, 10_000)]
    body += [Node.let_bind("dead", Expr.var("v5")), Node.store("o", Expr.u32(0), Expr.var("v9999"))]
    p = Program.wrapped([BufferDecl.output("o", 0, DataType.U32).with_count(1)], (1, 1, 1),
                        [wrap_anonymous("t::chain", body)])
    t0 = time.perf_counter()
    graph, reports = optimize(p, ["dce"])
    assert time.perf_counter() - t0 < 10
    assert reports[0].why.startswith("removed 1 dead")
    kept = graph.stages[0].entry[0].body
    assert len(kept) == 10_001 and all(getattr(n, "name", None) != "dead" for n in kept)
