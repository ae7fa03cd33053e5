"""Issue 13: the reference evaluator's step budget (vyre_vk.reference.budget).

A loop bound read from a buffer holding 0xFFFFFFFF used to run the reference for minutes
(assert_parity and the fuzzer hung on it); it now raises StepBudgetExceeded naming the loop.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.errors import VyreError
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.reference import DEFAULT_MAX_STEPS, MAX_STEPS_ENV, EvalError, StepBudgetExceeded, TrapError
from vyre_vk.reference.budget import UNLIMITED, resolve_max_steps
from vyre_vk.reference.errors import StepBudgetConfigError
from vyre_vk.testing import fuzz
from vyre_vk.testing.parity import assert_parity

U32 = DataType.U32
HUGE = np.array([0xFFFFFFFF], np.uint32)
LANES = 64
REGION = "entry[0].region.body"


@pytest.fixture(autouse=True)
def _no_env_budget(monkeypatch):
    monkeypatch.delenv(MAX_STEPS_ENV, raising=False)


def _program(body: list, extra: tuple = ()) -> Program:
    """`g` = invocation id; `n` (u32 input) and `out` (u32 result, one per lane)."""
    buffers = [BufferDecl.read("n", 0, U32), *extra, BufferDecl.output("out", 9, U32).with_count(LANES)]
    return Program.wrapped(buffers, (LANES, 1, 1),
                           [wrap_anonymous("test::budget", [Node.let_bind("g", Expr.gid_x()), *body])])


def _v(name: str) -> Expr:
    return Expr.var(name)


def _counting_loop(to: Expr, var: str = "i") -> list:
    """acc = acc * 3 + i over [0, to) (a multiply: not the accumulate fast path), stored per lane."""
    return [Node.let_bind("acc", Expr.u32(0)),
            Node.loop_for(var, Expr.u32(0), to,
                          [Node.assign("acc", Expr.add(Expr.mul(_v("acc"), Expr.u32(3)), _v(var)))]),
            Node.store("out", _v("g"), _v("acc"))]


def _counting_want(k: int) -> int:
    acc = 0
    for i in range(k):
        acc = (acc * 3 + i) & 0xFFFFFFFF
    return acc


BUFFER_BOUND = _program(_counting_loop(Expr.load("n", Expr.u32(0))))


def test_buffer_bound_loop_raises_fast_with_the_default_budget():
    start = time.perf_counter()
    with pytest.raises(StepBudgetExceeded) as info:
        reference.run(BUFFER_BOUND, {"n": HUGE})
    assert time.perf_counter() - start < 30
    e = info.value
    assert isinstance(e, EvalError) and isinstance(e, VyreError)
    assert e.where == f"{REGION}[2]" and e.loop_var == "i"
    assert e.budget == DEFAULT_MAX_STEPS and e.steps > DEFAULT_MAX_STEPS
    msg = str(e)
    assert f"loop `i` at {REGION}[2]" in msg and str(DEFAULT_MAX_STEPS) in msg and str(e.steps) in msg
    assert "max_steps" in e.fix and MAX_STEPS_ENV in e.fix


def test_same_program_within_budget_gives_the_plain_result():
    want = _counting_want(50)
    for budget in (None, 0, 10**9):
        out = reference.run(BUFFER_BOUND, {"n": np.array([50], np.uint32)}, max_steps=budget)["out"]
        assert out.tolist() == [want] * LANES


def test_budget_boundary_is_exact():
    """The needed steps (reported by a refusal) pass; one fewer is refused."""
    ins = {"n": np.array([37], np.uint32)}
    with pytest.raises(StepBudgetExceeded) as info:
        reference.run(BUFFER_BOUND, ins, max_steps=1)
    needed = info.value.steps
    assert reference.run(BUFFER_BOUND, ins, max_steps=needed)["out"][0] == _counting_want(37)
    with pytest.raises(StepBudgetExceeded):
        reference.run(BUFFER_BOUND, ins, max_steps=needed - 1)


def test_small_budget_via_keyword():
    with pytest.raises(StepBudgetExceeded, match="budget is 100 "):
        reference.run(BUFFER_BOUND, {"n": np.array([1000], np.uint32)}, max_steps=100)


def test_small_budget_via_environment(monkeypatch):
    ins = {"n": np.array([1000], np.uint32)}
    monkeypatch.setenv(MAX_STEPS_ENV, "100")
    with pytest.raises(StepBudgetExceeded, match="budget is 100 "):
        reference.run(BUFFER_BOUND, ins)
    # the keyword wins over the environment; 0 is unlimited
    assert reference.run(BUFFER_BOUND, ins, max_steps=0)["out"][0] == _counting_want(1000)
    monkeypatch.setenv(MAX_STEPS_ENV, "0")
    assert resolve_max_steps(None) == UNLIMITED


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_budget_values_are_usage_errors(bad, monkeypatch):
    with pytest.raises(StepBudgetConfigError, match="Fix:"):
        reference.run(BUFFER_BOUND, {"n": np.array([3], np.uint32)}, max_steps=bad)
    monkeypatch.setenv(MAX_STEPS_ENV, "lots")
    with pytest.raises(StepBudgetConfigError, match=MAX_STEPS_ENV):
        reference.run(BUFFER_BOUND, {"n": np.array([3], np.uint32)})
    assert not issubclass(StepBudgetConfigError, EvalError)  # the fuzzer must not read it as a trap


def test_nested_loops_multiply():
    """100 x 100 inner iterations: each loop alone fits a budget the pair does not."""
    body = [Node.let_bind("acc", Expr.u32(0)),
            Node.loop_for("i", Expr.u32(0), Expr.load("n", Expr.u32(0)), [
                Node.loop_for("j", Expr.u32(0), Expr.load("n", Expr.u32(0)), [
                    Node.assign("acc", Expr.add(Expr.mul(_v("acc"), Expr.u32(3)), _v("j")))])]),
            Node.store("out", _v("g"), _v("acc"))]
    p = _program(body)
    ins = {"n": np.array([100], np.uint32)}
    with pytest.raises(StepBudgetExceeded) as info:  # the same 100-iteration loop, alone
        reference.run(BUFFER_BOUND, ins, max_steps=1)
    one_inner = info.value.steps
    budget = 20 * one_inner  # room for the outer loop's own charge and 20 inner loops, not 100
    with pytest.raises(StepBudgetExceeded) as info:
        reference.run(p, ins, max_steps=budget)
    e = info.value
    assert e.where == f"{REGION}[2].loop(i).body[0]" and e.loop_var == "j"  # the loop running out
    assert budget < e.steps <= budget + one_inner
    acc = 0
    for _ in range(100):
        for j in range(100):
            acc = (acc * 3 + j) & 0xFFFFFFFF
    assert reference.run(p, ins, max_steps=110 * one_inner)["out"][0] == acc


def test_path_names_the_loop_inside_if_and_block():
    inner = _counting_loop(Expr.load("n", Expr.u32(0)), var="k")
    body = [Node.if_then(Expr.lt(_v("g"), Expr.u32(LANES)), [Node.block(inner)])]
    with pytest.raises(StepBudgetExceeded) as info:
        reference.run(_program(body), {"n": HUGE})
    assert info.value.where == f"{REGION}[1].if.then[0].block.body[1]"
    assert f"loop `k` at {REGION}[1].if.then[0].block.body[1]" in str(info.value)


def _forever_until_n() -> Program:
    """Each lane counts up to n[0] in a forever loop and leaves through Return."""
    return _program([
        Node.let_bind("acc", Expr.u32(0)),
        Node.forever([
            Node.assign("acc", Expr.add(_v("acc"), Expr.u32(1))),
            Node.if_then(Expr.ge(_v("acc"), Expr.load("n", Expr.u32(0))),
                         [Node.store("out", _v("g"), _v("acc")), Node.return_()])])])


def test_forever_loop_leaving_through_return():
    p = _forever_until_n()
    assert reference.run(p, {"n": np.array([7], np.uint32)})["out"].tolist() == [7] * LANES
    start = time.perf_counter()
    with pytest.raises(StepBudgetExceeded) as info:  # Return may end it: charged per iteration
        reference.run(p, {"n": HUGE}, max_steps=20_000)
    assert time.perf_counter() - start < 30
    e = info.value
    assert e.where == f"{REGION}[2]" and "Node.forever loop" in str(e)
    assert 20_000 < e.steps < 20_100  # refused at the first iteration past the budget


def test_reachable_trap_wins_over_the_budget():
    """A Trap in the body may fire before the budget runs out, so the loop is not refused on entry."""
    p = _program([Node.loop_for("i", Expr.u32(0), Expr.load("n", Expr.u32(0)), [
        Node.if_then(Expr.eq(_v("i"), Expr.u32(3)), [Node.trap(_v("i"), "three")]),
        Node.store("out", _v("g"), _v("i"))])])
    with pytest.raises(TrapError, match="three"):
        reference.run(p, {"n": HUGE})


def test_accumulate_fast_path_is_charged():
    """`acc = acc + i` runs as one vectorised pass; it is charged and refused like any loop."""
    p = _program([Node.let_bind("acc", Expr.u32(0)),
                  Node.loop_for("i", Expr.u32(0), Expr.load("n", Expr.u32(0)),
                                [Node.assign("acc", Expr.add(_v("acc"), _v("i")))]),
                  Node.store("out", _v("g"), _v("acc"))])
    ins = {"n": np.array([1000], np.uint32)}
    assert reference.run(p, ins)["out"][0] == sum(range(1000))
    with pytest.raises(StepBudgetExceeded):
        reference.run(p, ins, max_steps=5)
    with pytest.raises(StepBudgetExceeded):  # too wide for the fast path: stepped, refused on entry
        reference.run(p, {"n": HUGE})


def test_per_lane_bounds_skip_gaps_and_empty_ranges():
    """Lane 0 iterates [0, 3), lane 1 [0xFFFFFFF0, 0xFFFFFFF3), the rest have empty ranges:
    only the six live iterations run (the gap between them is skipped, not stepped)."""
    lo = np.zeros(LANES, np.uint32)
    hi = np.zeros(LANES, np.uint32)
    hi[0] = 3
    lo[1], hi[1] = 0xFFFFFFF0, 0xFFFFFFF3
    lo[2:], hi[2:] = 0xFFFFFFFF, 5  # lo >= hi: empty, must not stretch the span
    p = _program([Node.let_bind("acc", Expr.u32(0)),
                  Node.loop_for("i", Expr.load("lo", _v("g")), Expr.load("hi", _v("g")),
                                [Node.assign("acc", Expr.add(Expr.mul(_v("acc"), Expr.u32(3)), _v("i")))]),
                  Node.store("out", _v("g"), _v("acc"))],
                 extra=(BufferDecl.read("lo", 1, U32), BufferDecl.read("hi", 2, U32)))
    start = time.perf_counter()
    out = reference.run(p, {"n": HUGE, "lo": lo, "hi": hi}, max_steps=1000)["out"]
    assert time.perf_counter() - start < 10
    acc1 = 0
    for i in range(0xFFFFFFF0, 0xFFFFFFF3):
        acc1 = (acc1 * 3 + i) & 0xFFFFFFFF
    assert out[0] == _counting_want(3) and out[1] == acc1 and not out[2:].any()


def test_assert_parity_and_fuzzer_take_the_budget():
    """The reference runs first: over budget, assert_parity raises before the device is touched
    and the fuzzer skips the case (the GPU would spin as long)."""
    untouchable = object()  # any use as a device would raise AttributeError
    with pytest.raises(StepBudgetExceeded):
        assert_parity(BUFFER_BOUND, {"n": HUGE}, device=untouchable)
    with pytest.raises(StepBudgetExceeded):
        assert_parity(BUFFER_BOUND, {"n": np.array([1000], np.uint32)}, device=untouchable, max_steps=100)
    outcome = fuzz.check_case(BUFFER_BOUND, {"n": HUGE}, untouchable)
    assert outcome.status == "skipped" and not outcome.failed and "loop `i`" in outcome.detail
    small = fuzz.check_case(BUFFER_BOUND, {"n": np.array([1000], np.uint32)}, untouchable, max_steps=100)
    assert small.status == "skipped"
