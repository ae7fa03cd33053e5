"""Reciprocals a workgroup's lanes share (vyre_vk.lower.shared_rcp): a speculative loop's divisions by
a u32 counter read (RN(1/b), b) pairs the lanes computed together, each checking its own divisor.

lavapipe's fma() rounds twice, so the shaders run with each ``fma(`` replaced by a correctly rounded
stand-in (test_ieee_fused.FMA_RN, in double) and are compared with the reference evaluator's bits.
Mutants show what each part does: without the exact re-run the shared pairs alone still give the
reference's bits (so the pairs are right), a wrong guess then gives other bits (so the pairs are what
the divisions use), and with the re-run a wrong guess is caught (the divisor check)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ir.optable import BinOp
from vyre_vk.lower import lower
from vyre_vk.lower.shared_rcp import Uniformity
from vyre_vk.ops import get
from vyre_vk.opt import optimize
from vyre_vk.opt.speculate import speculate

from ..opt.test_speculate import _run_glsl_all
from .test_ieee_fused import FMA_RN

F, U = np.float32, np.uint32
SHARED = "vyre_sp_div_uy("


def _norerun(glsl: str) -> str:
    """`glsl` with every speculative loop's exact re-run disabled (at zero, or below 2^-99 with raw loads)."""
    out, k = re.subn(r"if \(vyre_sp_state (== 0u|< 0x0e000000u)\)", "if (false)", glsl)
    assert k >= 1
    return out


def _fused(glsl: str) -> str:
    """`glsl` with lavapipe's fma() replaced by the correctly rounded stand-in."""
    start = glsl.index("float vyre_rcp_rn(float d)")
    return glsl[:start] + FMA_RN + re.sub(r"\bfma\(", "vk_fma_rn(", glsl[start:])


def _welford_stage(n: int) -> Program:
    graph, _ = optimize(get("vyre-libs::math::reduce_variance").build_with(n=n), device_class="nvidia")
    return graph.stages[0]


def _welford_inputs(n: int, chains: int = 256) -> dict:
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(n) * 3 + 1).astype(F).reshape(-1, chains)
    x[:, 1] = 0.0                 # exact zero deltas: that lane re-runs exactly
    x[:, 2] = F(7.5)              # constant column: M2 stays +0
    x[5, 3] = F(2.0 ** 100)       # a huge term
    x[:, 4] = F(2.0 ** -60) * (1 + np.arange(x.shape[0], dtype=F))  # tiny deltas near the window's edge
    return {"input": x.reshape(-1), "var_n_scratch": np.zeros(chains, U),
            "var_m1_scratch": np.zeros(chains, F), "var_m2_scratch": np.zeros(chains, F)}


def _run_stage(dev, glsl: str, stage: Program, inputs: dict) -> dict:
    arrays = [inputs[b.name] for b in sorted(stage.buffers, key=lambda b: b.binding)]
    groups = 256 // stage.workgroup_size[0]
    got = _run_glsl_all(dev, _fused(glsl), arrays, groups)
    return {b.name: g for b, g in zip(sorted(stage.buffers, key=lambda b: b.binding), got)}


def _same(got: dict, want: dict) -> bool:
    return all(got[k].view(U).tolist() == w.view(U).tolist() for k, w in want.items())


@pytest.fixture
def fma_device(vk_device):
    if not vk_device.limits.float64:
        pytest.skip("the correctly rounded fma stand-in needs shaderFloat64")
    return vk_device


def test_reduce_variance_shares_its_reciprocals_with_the_reference_bits(fma_device, monkeypatch):
    """reduce_variance's chain stage for nvidia (spread over 256 chains, unrolled, speculated): the
    divisions of an unrolled iteration read shared pairs, and every chain's n, M1 and M2 are the
    reference's. Unrolled x4 here (the x32 shader takes lavapipe a minute to build with the fma
    stand-in); the default x32 is checked for its shape."""
    monkeypatch.delenv("VYRE_VK_SPEC_SHARED_RCP", raising=False)
    big = lower(_welford_stage(256 * 100), fused_fma=True).glsl
    assert big.count(SHARED) == 33 and big.count("barrier();") == 2  # 32 calls, one definition
    assert "shared vec2 vyre_ysh1[32];" in big  # the rest loop (one division an iteration) does not share
    monkeypatch.setenv("VYRE_VK_UNROLL", "4")
    n = 256 * 13  # the first iteration exact (4 steps), two shared, one step in the rest loop
    stage = _welford_stage(n)
    inputs = _welford_inputs(n)
    want = reference.run(stage, inputs)
    glsl = lower(stage, fused_fma=True).glsl
    assert glsl.count(SHARED) == 5 and glsl.count("barrier();") == 2
    assert _same(_run_stage(fma_device, glsl, stage, inputs), want)
    # without the re-run: the shared pairs alone give the reference's bits on the lanes whose chains
    # stay clear of zeros (lanes 1 and 2 re-run: zero deltas), so the pairs are the right reciprocals
    got = _run_stage(fma_device, _norerun(glsl), stage, inputs)
    clean = [c for c in range(256) if c not in (1, 2)]
    for k in ("var_m1_scratch", "var_m2_scratch"):
        assert got[k].view(U)[clean].tolist() == want[k].view(U)[clean].tolist(), k
    # a guess one step off: every division's divisor check fails...
    guess = re.search(r"float (vk_ysb\d+) = float\(\((v_n_i) \+ \(1u \+ (vk_ysj\d+)\)\)\);", glsl)
    assert guess, "the pairs' divisors are n + 1 + j"
    wrong = glsl.replace(guess.group(0), guess.group(0).replace("(1u + ", "(2u + "))
    bad = _run_stage(fma_device, _norerun(wrong), stage, inputs)
    assert not _same(bad, want)  # ...without the re-run the wrong reciprocals show
    assert _same(_run_stage(fma_device, wrong, stage, inputs), want)  # with it every lane is exact again
    # the knob: the plain division, the same bits
    monkeypatch.setenv("VYRE_VK_SPEC_SHARED_RCP", "0")
    off = lower(stage, fused_fma=True).glsl
    assert SHARED not in off and "barrier" not in off and "vyre_sp_div_u(" in off
    assert _same(_run_stage(fma_device, off, stage, inputs), want)


def _chain(n: int, lanes: int, local: int, steps: tuple[int, ...], guard: int, exit_early: bool = False) -> Program:
    """acc = x[lane] then, per iteration j of a loop over n, for each k in `steps`: c = c + k and
    acc = acc / float(c) + x[...]; lanes with gid.x < guard only (a guard of lanes run)."""
    i, c, acc = Expr.gid_x(), Expr.var("c"), Expr.var("acc")
    body = []
    for s, k in enumerate(steps):
        body.append(Node.assign("c", Expr.add(c, Expr.u32(k))))
        term = Expr.load("x", Expr.add(Expr.mul(Expr.add(Expr.mul(Expr.var("j"), Expr.u32(len(steps))),
                                                         Expr.u32(s)), Expr.u32(lanes)), i))
        body.append(Node.assign("acc", Expr.add(Expr.binop(BinOp.Div, acc, Expr.cast(DataType.F32, c)), term)))
    inner = [Node.let_bind("acc", Expr.load("x", i)), Node.let_bind("c", Expr.u32(0)),
             Node.loop_for("j", Expr.u32(0), Expr.u32(n), body), Node.store("out", i, acc)]
    entry = ([Node.if_then(Expr.ge(i, Expr.u32(guard)), [Node.return_()])] + inner if exit_early
             else [Node.if_then(Expr.lt(i, Expr.u32(guard)), inner)])
    return Program.wrapped(
        [BufferDecl.read("x", 0, DataType.F32).with_count(n * len(steps) * lanes + lanes),
         BufferDecl.output("out", 1, DataType.F32).with_count(lanes)], (local, 1, 1),
        [wrap_anonymous("t::chain", entry)])


@pytest.mark.parametrize("steps", [(1, 1, 1, 1), (1, 1, 3, 2, 5)])
def test_counter_divisions_in_a_loop_share_pairs(fma_device, steps):
    """Several divisions by one counter per iteration, stepped evenly (the offsets an arithmetic
    progression) or not (a constant table): the reference's bits, and the exact re-run not needed."""
    n, lanes = 40, 64
    p = _chain(n, lanes, 32, steps, guard=lanes)
    q = speculate(p)[0]
    glsl = lower(q, fused_fma=True).glsl
    assert glsl.count(SHARED) == len(steps) + 1
    assert ("const uint vk_yo" in glsl) == (steps != (1, 1, 1, 1))
    rng = np.random.default_rng(8)
    x = rng.standard_normal(n * len(steps) * lanes + lanes).astype(F)
    want = reference.run(p, {"x": x})["out"].view(U)
    for text in (glsl, _norerun(glsl)):
        got = _run_glsl_all(fma_device, _fused(text), [x, np.zeros(lanes, F)], lanes // 32)[1]
        assert got.view(U).tolist() == want.tolist()


@pytest.mark.parametrize("guard,local,exit_early,shared", [
    (64, 32, False, True),    # gid.x < 64, local 32: each workgroup all in or all out
    (48, 32, False, False),   # 48 is not a multiple of 32: a workgroup splits there
    (64, 32, True, False),    # a return: some invocations may leave before the barriers
])
def test_sharing_only_in_workgroup_uniform_control_flow(guard, local, exit_early, shared):
    q = speculate(_chain(8, 64, local, (1, 1, 1, 1), guard, exit_early))[0]
    glsl = lower(q, fused_fma=True).glsl
    assert (SHARED in glsl) == shared and ("barrier" in glsl) == shared
    assert "vyre_sp_div_u(" in glsl or shared


def test_uniformity_rules():
    p = Program.wrapped([BufferDecl.output("o", 0, DataType.U32).with_count(4)], (16, 2, 1), [])
    u = Uniformity(p)
    u.bind("g", Expr.gid_x(), set())
    u.bind("w", Expr.add(Expr.u32(3), Expr.u32(4)), set())
    u.bind("l", Expr.load("o", Expr.u32(0)), set())  # a load may differ
    u.bind("a", Expr.u32(1), {"a"})  # assigned somewhere: never uniform
    assert u.uniform(Expr.var("w")) and not u.uniform(Expr.var("l")) and not u.uniform(Expr.var("a"))
    assert u.uniform_test(Expr.lt(Expr.var("g"), Expr.u32(256)))
    assert not u.uniform_test(Expr.lt(Expr.var("g"), Expr.u32(250)))
    assert u.uniform_test(Expr.ge(Expr.gid_x(), Expr.u32(32)))
    assert not u.uniform_test(Expr.lt(Expr.gid_y(), Expr.u32(3)))  # local y is 2
    u.bind("g", Expr.u32(0), set())  # rebound to another kind: neither
    assert not u.uniform_test(Expr.lt(Expr.var("g"), Expr.u32(256))) and not u.uniform(Expr.var("g"))
