"""fission: independent loop chains of a one-value-per-invocation program run in separate
invocations, then a combine kernel; results bit-identical on the reference and on Vulkan."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.opt import PASS_NAMES, fission, optimize

from .test_passes import _per_invocation_scaffold, runnable, same

U32, I32, F32 = DataType.U32, DataType.I32, DataType.F32
GID = Expr.gid_x()


def two_chains(n: int = 40, length: int = 24, lo: int = 3, combine=None, store_index=GID) -> Program:
    """per j: a = sum_m x[m] * w[m*L + j], b = sum_k y[k] * v[j*n + k]; out[j] = combine(a, b)."""
    j, m, k = Expr.var("j"), Expr.var("m"), Expr.var("k")
    jj = Expr.sub(j, Expr.u32(lo))
    body = [
        Node.let_bind("a", Expr.f32(0.5)),
        Node.loop_for("m", Expr.u32(0), Expr.u32(n), [Node.assign("a", Expr.add(Expr.var("a"), Expr.mul(
            Expr.load("x", m), Expr.load("w", Expr.add(Expr.mul(m, Expr.u32(length)), jj)))))]),
        Node.let_bind("da", Expr.max(Expr.mul(Expr.f32(0.5), Expr.var("a")), Expr.var("a"))),
        Node.let_bind("b", Expr.f32(0.0)),
        Node.loop_for("k", Expr.u32(0), Expr.u32(n), [Node.assign("b", Expr.add(Expr.var("b"), Expr.mul(
            Expr.load("y", k), Expr.load("v", Expr.add(Expr.mul(jj, Expr.u32(n)), k)))))]),
        Node.let_bind("r", combine if combine is not None else Expr.mul(Expr.var("da"), Expr.var("b"))),
        Node.store("out", store_index, Expr.var("r")),
    ]
    entry = [Node.let_bind("j", Expr.add(GID, Expr.u32(lo))), Node.if_then(Expr.lt(GID, Expr.u32(length)), body)]
    bufs = [BufferDecl.storage("x", 0, BufferAccess.ReadOnly, F32).with_count(n),
            BufferDecl.storage("w", 1, BufferAccess.ReadOnly, F32).with_count(n * length),
            BufferDecl.storage("y", 2, BufferAccess.ReadOnly, F32).with_count(n),
            BufferDecl.storage("v", 3, BufferAccess.ReadOnly, F32).with_count(n * length),
            BufferDecl.output("out", 4, F32).with_count(length)]
    return Program.wrapped(bufs, (64, 1, 1), [wrap_anonymous("test::two_chains", entry)])


def inputs_for(p: Program, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {b.name: rng.standard_normal(b.count).astype(np.float32) for b in p.buffers if b.is_input}


def test_two_chains_split_into_two_ranges_and_a_combine():
    p = two_chains()
    _, res = fission(p)
    assert res is not None
    a, b, scratch, why = res
    validate(a)
    validate(b)
    assert "2 independent loop chains {a, da} {b}" in why and "a combine kernel loads da, b" in why
    assert [s.count for s in scratch] == [48, 48]  # K*L elements, so the grid covers both chains
    assert {s.name for s in scratch} <= {x.name for x in a.buffers} & {x.name for x in b.buffers}
    graph, reports = optimize(p, ["fission"])
    assert len(graph.stages) == 2 and reports[0].changed
    ins = inputs_for(p)
    same(reference.run(p, ins), graph.run_reference(ins))


@pytest.mark.parametrize("mutate", ["shared_var", "outer_assign", "store_not_at_gid", "one_chain"])
def test_no_split_when_chains_are_not_independent(mutate):
    if mutate == "shared_var":  # the second chain reads the first: one component
        p = two_chains(combine=Expr.var("b"))
        j, k = Expr.var("j"), Expr.var("k")
        body = list(p.entry[0].body[1].then)
        body[4] = Node.loop_for("k", Expr.u32(0), Expr.u32(40), [Node.assign("b", Expr.add(Expr.var("b"), Expr.var("a")))])
        entry = [p.entry[0].body[0], Node.if_then(p.entry[0].body[1].cond, body)]
        p = Program.wrapped(p.buffers, p.workgroup_size, [wrap_anonymous("test::linked", entry)])
        del j, k
    elif mutate == "outer_assign":  # a chain writes j itself
        p = two_chains()
        body = list(p.entry[0].body[1].then)
        body.insert(0, Node.assign("j", Expr.u32(0)))
        entry = [p.entry[0].body[0], Node.if_then(p.entry[0].body[1].cond, body)]
        p = Program.wrapped(p.buffers, p.workgroup_size, [wrap_anonymous("test::outer", entry)])
    elif mutate == "store_not_at_gid":
        p = two_chains(store_index=Expr.var("j"))
    else:
        p = two_chains(combine=Expr.var("da"))  # b unused: dce removes its chain below
        p = optimize(p, ["dce"])[0].stages[0]
    validate(p)
    _, res = fission(p)
    assert res is None


def test_seed_op_on_vulkan_bit_identical_with_fission(vk_device):
    from vyre_vk.ops import get
    p = get("vyre-libs::nn::mlp_backward").build_with(model_dim=48, hidden_dim=200)
    rng = np.random.default_rng(3)
    ins = {"x": rng.standard_normal(48, dtype=np.float32), "w1": rng.standard_normal(48 * 200, dtype=np.float32),
           "b1": rng.standard_normal(200, dtype=np.float32), "w2": rng.standard_normal(200 * 48, dtype=np.float32),
           "grad_out": rng.standard_normal(48, dtype=np.float32)}
    graph, reports = optimize(p, True)
    assert next(r for r in reports if r.name == "fission").changed
    want = reference.run(p, ins)["grad_x"]
    assert vk_device.compile(p).run(ins)["grad_x"].tobytes() == want.tobytes()


# ----------------------------------------------------------------------------- random chains
@st.composite
def chain_programs(draw):
    """let j = gid + lo; if gid < L { K random chains (let c = e(j); loop m_c { c = e(c, j, m_c) });
    lets mixing them; store out[gid] = e(all) }."""
    base, ins, out, g, scope = _per_invocation_scaffold(draw, 2)
    scope.vars[:] = [("j", U32, True)]
    body, names = [], []
    for c in range(draw(st.integers(1, 3))):
        t = draw(st.sampled_from([U32, I32, F32]))
        body.append(Node.let_bind(f"c{c}", g.expr(t, scope)))
        inner = scope.child()
        inner.vars.append((f"m{c}", U32, True))
        inner.vars.append((f"c{c}", t, False))
        body.append(Node.loop_for(f"m{c}", Expr.u32(0), Expr.u32(draw(st.integers(0, 5))),
                                  [Node.assign(f"c{c}", g.expr(t, inner))]))
        names.append((f"c{c}", t))
    tail = scope.child()
    tail.vars.extend((n, t, False) for n, t in names)
    body.append(Node.let_bind("r", g.expr(out.element, tail)))
    length = draw(st.integers(1, out.count))
    lo = draw(st.integers(0, 2))
    entry = [Node.let_bind("j", Expr.add(GID, Expr.u32(lo)) if lo else GID),
             Node.if_then(Expr.lt(GID, Expr.u32(length)), body + [Node.store("out", GID, Expr.var("r"))])]
    return Program.wrapped(base.buffers, draw(st.sampled_from([(1, 1, 1), (4, 1, 1), (64, 1, 1)])),
                           [wrap_anonymous("fuzz::chains", entry)])


SPLIT = []


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(chain_programs(), st.integers(0, 3))
def test_random_chains_identical(program, seed):
    inputs = runnable(program, seed)
    if inputs is None:
        return
    expected = reference.run(program, inputs)
    for passes in (["fission"], list(PASS_NAMES)):
        graph, reports = optimize(program, passes)
        assert not any("reverted" in r.why for r in reports), reports
        for s in graph.stages:
            validate(s)
        same(expected, graph.run_reference(inputs))
        if passes == ["fission"]:
            SPLIT.append(len(graph.stages) > 1)


def test_fission_fired_on_random_chains():
    if not SPLIT:
        pytest.skip("runs after test_random_chains_identical")
    assert sum(SPLIT) >= len(SPLIT) // 5, f"split in {sum(SPLIT)} of {len(SPLIT)}"
