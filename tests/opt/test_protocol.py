"""The pass protocol: every pass in PASS_ORDER has the declared shape, its `applies` is
conservative and its `run` alone (no pipeline) keeps every registered op's vectors
bit-identical; the pipeline's driver honours the stage metadata; bad requests are typed
VyreErrors with a Fix."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.errors import VyreError
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ir.program import Region
from vyre_vk.ops import all_ops, get
from vyre_vk.opt import (PASS_NAMES, PASS_ORDER, PASSES, OptimizerError, Pass, PassBase, PassContext, ProgramGraph,
                         Rewrite, coarsen_factor, dce, optimize)
from vyre_vk.opt.dispatch import COARSEN_GENERATOR
from vyre_vk.opt.pipeline import _run_pass

from .test_passes import SEED, same

NAMES = ("constant_fold", "dce", "single_invocation", "split_phases", "spread", "tabulate", "split_invocations", "keychain", "guard_idle", "privatize", "coalesce", "cse", "licm", "hoist_invariant", "fission", "split_chains", "reassociate", "stream", "unroll", "speculate",
         "workgroup_size", "coarsen")
CTX = PassContext()


def test_pass_order_shape():
    assert PASS_NAMES == NAMES
    assert tuple(PASSES) == NAMES
    for p in PASS_ORDER:
        assert isinstance(p, Pass) and isinstance(p.name, str)
        assert p.kind in ("scalar", "split", "schedule")
        assert callable(p.applies) and callable(p.run) and callable(p.explain)
        assert isinstance(p.repeat, bool) and isinstance(p.tidy, tuple) and set(p.tidy) <= set(NAMES)
        assert p.kind == "split" or (p.max_stages is None and p.max_splits is None and not p.repeat)
    assert [p.name for p in PASS_ORDER if p.kind == "split"] == ["split_phases", "spread", "tabulate", "keychain", "coalesce",
                                                                   "hoist_invariant",
                                                                   "fission", "split_chains"]


def test_passes_still_read_as_their_names():
    # callers written when PASS_ORDER held names (tools/bench/seed_schedules.py) keep working
    assert list(PASS_ORDER) == list(NAMES) and "cse" in PASS_ORDER and str(PASS_ORDER[11]) == "cse"
    assert len([p for p in PASS_ORDER if p != "fission"]) == len(NAMES) - 1
    program = get(SEED).build_with(model_dim=8, hidden_dim=4)
    by_obj = optimize(program, PASS_ORDER[:9])
    assert by_obj == optimize(program, NAMES[:9])


@pytest.mark.parametrize("entry", all_ops(), ids=[e.id for e in all_ops()])
def test_each_pass_run_alone_keeps_vectors_identical(entry):
    """Through the protocol only: where a pass does not apply it must not change anything;
    where it does, its rewrite's stages and scratch form a graph with the same results."""
    program = entry.build()
    cases = list(entry.test_inputs())
    expected: list = []  # the program's own results, computed once (for the first pass that changes it)
    for p in PASS_ORDER:
        r = p.run(program, CTX)
        unchanged = r is None or r.stages == (program,)
        if not p.applies(program, CTX):
            assert unchanged, f"{p.name} changed a program it said it does not apply to"
        if unchanged:
            continue
        assert isinstance(p.explain(r), str) and p.explain(r)
        for st in r.stages:
            validate(st)
        graph = ProgramGraph(program, tuple(r.stages), tuple(r.scratch))
        expected = expected or [ProgramGraph(program, (program,)).run_reference(case) for case in cases]
        for want, case in zip(expected, cases):
            same(want, graph.run_reference(case))


# ----------------------------------------------------------------------------- the driver
def _small() -> Program:
    bufs = [BufferDecl.read("a", 0, DataType.U32).with_count(4),
            BufferDecl.output("out", 1, DataType.U32).with_count(4)]
    return Program.wrapped(bufs, (4, 1, 1), [wrap_anonymous("test::protocol", [
        Node.store("out", Expr.gid_x(), Expr.load("a", Expr.gid_x()))])])


class _Twice(PassBase):
    """Splits any stage into two copies of itself (valid, and easy to count)."""
    name = "twice"
    kind = "split"

    def __init__(self, **meta) -> None:
        self.__dict__.update(meta)

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        return Rewrite((program, program), detail="copied")


def test_driver_repeats_up_to_max_stages():
    stages, scratch, whys = _run_pass(_Twice(repeat=True, max_stages=4), [_small()], CTX)
    assert len(stages) == 4 and whys == ["copied"] * 3 and scratch == []


def test_driver_limits_splits_and_names_stages():
    stages, _, whys = _run_pass(_Twice(max_splits=2), [_small()] * 3, CTX)
    assert len(stages) == 5 and whys == ["stage 0: copied", "stage 1: copied"]


def test_driver_reverts_an_invalid_rewrite():
    class Broken(PassBase):
        name = "broken"

        def run(self, program, ctx):
            return Rewrite((dataclasses.replace(program, workgroup_size=(0, 1, 1)),))

    p = _small()
    stages, _, whys = _run_pass(Broken(), [p], CTX)
    assert stages == [p] and len(whys) == 1 and whys[0].startswith("reverted: broken produced an invalid program")


def _dead_after_hoisting() -> Program:
    """for j: let h = a[j]; let g = h * 2; acc += g * i; h = i  -- h is exported (the rest assigns
    it) but no longer read once h and g are hoisted: the main stage's `let h` is then dead."""
    i, j, h, g, acc = (Expr.var(n) for n in ("i", "j", "h", "g", "acc"))
    fi = Expr.cast(DataType.F32, i)
    bufs = [BufferDecl.read("a", 0, DataType.F32).with_count(4),
            BufferDecl.output("out", 1, DataType.F32).with_count(8)]
    return Program.wrapped(bufs, (8, 1, 1), [wrap_anonymous("test::tidy", [
        Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(8)), [
            Node.let_bind("acc", Expr.f32(0.0)),
            Node.loop_for("j", Expr.u32(0), Expr.u32(4), [
                Node.let_bind("h", Expr.load("a", j)), Node.let_bind("g", Expr.mul(h, Expr.f32(2.0))),
                Node.assign("acc", Expr.add(acc, Expr.mul(g, fi))), Node.assign("h", fi)]),
            Node.store("out", i, acc)])])])


def test_tidy_runs_after_a_change_only_when_chosen():
    program = _dead_after_hoisting()
    with_dce, reports = optimize(program, ["hoist_invariant", "dce"], hoist_min_loops=0)
    # dce runs in its own place (before hoisting), then again, unreported, on the split stages
    hoisted, _ = optimize(dce(program)[0], ["hoist_invariant"], hoist_min_loops=0)
    assert len(hoisted.stages) > 1
    assert list(with_dce.stages) == [dce(s)[0] for s in hoisted.stages] != list(hoisted.stages)
    assert [r.name for r in reports] == ["dce", "hoist_invariant"] and not reports[0].changed
    inputs = {"a": np.arange(4, dtype=np.float32)}
    same(reference.run(program, inputs), with_dce.run_reference(inputs))


# ----------------------------------------------------------------------------- typed errors
@pytest.mark.parametrize("passes", [["nope"], "cse", 5, [["cse"]]])
def test_bad_pass_requests_are_optimizer_errors(passes):
    with pytest.raises(OptimizerError) as err:
        optimize(_small(), passes)
    assert isinstance(err.value, VyreError) and isinstance(err.value, ValueError) and err.value.fix


@pytest.mark.parametrize("kw", [{"local_size": -1}, {"local_size": 2.5}, {"hoist_min_loops": None}])
def test_bad_knobs_are_optimizer_errors(kw):
    with pytest.raises(OptimizerError, match="Fix:"):
        optimize(_small(), True, **kw)


@pytest.mark.parametrize("value", ["abc", "0", "-3"])
def test_bad_unroll_override_is_an_optimizer_error(monkeypatch, value):
    monkeypatch.setenv("VYRE_VK_UNROLL", value)
    with pytest.raises(OptimizerError, match="VYRE_VK_UNROLL"):
        optimize(_small(), ["unroll"])
    optimize(_small(), ["cse"])  # only a run that asks for unroll reads it


def test_a_foreign_coarsen_region_is_an_optimizer_error():
    p = _small()
    q = Program(p.buffers, p.workgroup_size, (Region(COARSEN_GENERATOR + ":x", None, p.entry[0].body),))
    with pytest.raises(OptimizerError, match="rename the region"):
        coarsen_factor(q)


def test_schedule_is_validated_once_and_reverted_whole_without_per_pass_checks(monkeypatch):
    """Outside the tests a pass's output is not validated pass by pass: the final schedule is,
    once, and an invalid one gives back the program as written with a `schedule` report."""
    from vyre_vk.opt import pipeline

    class Broken(PassBase):
        name = "cse"  # stands in for a real pass of PASS_ORDER

        def run(self, program, ctx):
            return Rewrite((dataclasses.replace(program, workgroup_size=(0, 1, 1)),))

    monkeypatch.setenv("VYRE_VK_CHECK_PASSES", "0")
    monkeypatch.setattr(pipeline, "PASS_ORDER", (Broken(),))
    p = _small()
    graph, reports = pipeline.optimize(p, ["cse"])
    assert graph.stages == (p,) and reports[-1].name == "schedule" and "invalid program" in reports[-1].why
    monkeypatch.setenv("VYRE_VK_CHECK_PASSES", "1")
    graph, reports = pipeline.optimize(p, ["cse"])
    assert graph.stages == (p,) and reports[0].why.startswith("reverted: cse produced an invalid program")


def test_passes_off_knob(monkeypatch):
    """$VYRE_VK_PASSES_OFF takes passes out of the default set (an A/B knob for tools/bench runs);
    an unknown name is a typed error with a Fix, and an explicit pass list ignores it."""
    program = get("vyre-libs::nn::flash_attention").build_with(seq_len=64, head_dim=64)  # copies >= MIN_COPY
    graph, reports = optimize(program)
    assert {"keychain", "coalesce"} <= {r.name for r in reports if r.changed}
    monkeypatch.setenv("VYRE_VK_PASSES_OFF", "keychain, coalesce")
    graph_off, reports_off = optimize(program)
    assert not {"keychain", "coalesce"} & {r.name for r in reports_off}
    assert len(graph_off.stages) == len(graph.stages) - 5  # the copy of k, two map and two chain kernels
    assert any(r.name == "keychain" and r.changed for r in optimize(program, ["split_phases", "spread", "tabulate",
                                                                               "split_invocations", "keychain"])[1])
    monkeypatch.setenv("VYRE_VK_PASSES_OFF", "keychian")
    with pytest.raises(OptimizerError, match="keychian.*Fix:"):
        optimize(program)
