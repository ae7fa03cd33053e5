"""The optimiser treats subgroup expressions as workgroup-scoped: a program that has one keeps its
declared workgroup size (subgroup k is lanes [32k, 32k+32) of *that* workgroup), no collective
is hoisted out of its loop or out of the program into a pre-pass, and every pass set leaves the
reference results bit-identical."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.opt import PASS_NAMES, hoist_invariant, licm, optimize, workgroup_size
from vyre_vk.ir.walk import walk_nodes
from vyre_vk.ir.walk import node_exprs, walk_expr

U32, F32 = DataType.U32, DataType.F32
u, v = Expr.u32, Expr.var
SUBGROUP_EXPRS = {
    "ballot": lambda: Expr.subgroup_ballot(Expr.gt(v("x"), u(5))),
    "shuffle": lambda: Expr.subgroup_shuffle(v("x"), u(3)),
    "reduce": lambda: Expr.subgroup_add(v("x")),
    "local_id": lambda: Expr.subgroup_local_id(),
    "size": lambda: Expr.subgroup_size(),
}


def _prog(value: Expr, wg: int = 64, n: int = 128) -> Program:
    """An elementwise-looking program (no local id, barrier or workgroup memory) except for `value`."""
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("x", Expr.load("a", v("g"))),
            Node.store("out", v("g"), Expr.add(v("x"), value))]
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(n), BufferDecl.output("out", 1, U32).with_count(n)],
                           (wg, 1, 1), [wrap_anonymous("test::subgroup", body)])


def _loop_prog(n: int = 64) -> Program:
    """A literal-bound loop whose body's collective depends only on the loop variable (invariant
    in every sense the hoisting passes use, except that it reads other lanes)."""
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("acc", u(0)),
            Node.loop_for("j", u(0), u(6), [
                Node.let_bind("s", Expr.subgroup_add(Expr.mul(v("j"), u(3)))),
                Node.let_bind("t", Expr.subgroup_shuffle(u(7), u(0))),
                Node.assign("acc", Expr.add(v("acc"), Expr.add(v("s"), v("t"))))]),
            Node.store("out", v("g"), v("acc"))]
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(n), BufferDecl.output("out", 1, U32).with_count(n)],
                           (64, 1, 1), [wrap_anonymous("test::subgroup", body)])


def _collectives(p: Program) -> list:
    return [x for n in walk_nodes(p.entry) for e in node_exprs(n) for x in walk_expr(e)
            if isinstance(x, E.SUBGROUP_COLLECTIVES + (E.SubgroupLocalId, E.SubgroupSize))]


@pytest.mark.parametrize("kind", sorted(SUBGROUP_EXPRS))
def test_workgroup_size_pass_keeps_the_declared_size(kind):
    p = _prog(SUBGROUP_EXPRS[kind]())
    validate(p)
    q, why = workgroup_size(p, 256)
    assert q == p, why
    # the control: the same program without the subgroup expression is resized
    assert workgroup_size(_prog(u(1)), 256)[0].workgroup_size == (256, 1, 1)


@pytest.mark.parametrize("device_class", ["default", "nvidia", "llvmpipe"])
@pytest.mark.parametrize("kind", sorted(SUBGROUP_EXPRS))
def test_full_pipeline_keeps_size_and_collectives_in_one_stage(kind, device_class):
    p = _prog(SUBGROUP_EXPRS[kind](), wg=48, n=100)
    graph, _ = optimize(p, True, device_class=device_class)
    assert len(graph.stages) == 1
    assert graph.stages[0].workgroup_size == (48, 1, 1)
    assert len(_collectives(graph.stages[0])) == 1
    a = np.random.default_rng(0).integers(0, 50, 100).astype(np.uint32)
    want = reference.run(p, {"a": a})
    np.testing.assert_array_equal(graph.run_reference({"a": a})["out"], want["out"])


def test_hoisting_passes_leave_collectives_in_their_loop():
    p = _loop_prog()
    validate(p)
    assert hoist_invariant(p) is None  # nothing else in the loop to move: no pre-pass at all
    q, _ = licm(p)
    loop = next(n for n in walk_nodes(q.entry) if isinstance(n, N.Loop))
    inside = [x for n in walk_nodes(loop.body) for e in node_exprs(n) for x in walk_expr(e)
              if isinstance(x, E.SUBGROUP_COLLECTIVES)]
    assert len(inside) == 2 and len(_collectives(q)) == 2


@pytest.mark.parametrize("passes", [[p] for p in PASS_NAMES] + [list(PASS_NAMES)],
                         ids=[p for p in PASS_NAMES] + ["all"])
def test_every_pass_set_keeps_results_and_the_program(passes):
    p = _loop_prog()
    graph, _ = optimize(p, passes)
    assert all(s.workgroup_size == (64, 1, 1) for s in graph.stages)
    assert not any(_collectives(s) for s in graph.stages[:-1])  # no collective in a pre-pass
    a = np.zeros(64, np.uint32)
    want = reference.run(p, {"a": a})["out"]
    assert want.tolist() == [32 * 3 * sum(range(6)) + 6 * 7] * 64
    np.testing.assert_array_equal(graph.run_reference({"a": a})["out"], want)
