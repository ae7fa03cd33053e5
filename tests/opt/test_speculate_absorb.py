"""Absorbed products and where a speculative loop runs its first iteration exactly
(vyre_vk.lower.speculate.absorbing, vyre_vk.opt.speculate.unpeeled).

Absorbed: a product of two values that are not the chain's, used only as an operand of the chain's
add, is plain IEEE ``a * b``; its loop re-runs exactly below an exponent field of ABSORB_FIELD.
The claim behind it (a subnormal product cannot change a sum that ends at least 2^-99 from zero) is
checked in NumPy, whose f32 arithmetic keeps subnormals; lavapipe flushes subnormal results, so on
Vulkan the tests show which lanes re-ran (a mutant scaling the kept result) and that every lane has
the reference's bits."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ir import node as N
from vyre_vk.ir.chains import NO_PEEL, SPECULATE
from vyre_vk.ir.walk import walk_nodes
from vyre_vk.lower import lower
from vyre_vk.lower.speculate import ABSORB_FIELD
from vyre_vk.ops import get
from vyre_vk.opt.speculate import speculate

from .test_speculate import _dot, _fold, _run_glsl

F, U = np.float32, np.uint32
KEPT = "v_acc = vyre_canon(v_acc);"


def test_a_subnormal_product_cannot_change_a_sum_at_least_2_to_the_minus_99():
    """s = RN(c + p), p subnormal: |s| >= 2^-99 implies s == c (the absorbed product's proof), at
    every binade from 2^-101 up and at its edges; below the threshold a subnormal p does change sums
    (what the re-run is for)."""
    rng = np.random.default_rng(11)
    exps = np.arange(-101, 128)
    mant = np.concatenate([[1.0, 1.0 + 2.0 ** -23, 2.0 - 2.0 ** -23], 1.0 + rng.random(40)])
    c = (np.ldexp(mant[None, :], exps[:, None]).astype(F).reshape(-1))
    c = np.concatenate([c, -c])
    p = np.concatenate([np.array([1, 2, 3, 0x7FFFFF, 0x400000], U), rng.integers(1, 0x800000, 60, dtype=U)]).view(F)
    p = np.concatenate([p, -p])
    assert (np.abs(p) < F(2.0 ** -126)).all() and (p != 0).all()
    with np.errstate(all="ignore"):
        s = c[:, None] + p[None, :]
    big = np.abs(s) >= F(2.0 ** -99)
    assert big.sum() > 10000
    assert (s.view(U)[big] == np.broadcast_to(c[:, None], s.shape).view(U)[big]).all()
    assert F(2.0 ** -99).view(U) == ABSORB_FIELD << 23  # the loop's re-run threshold is that 2^-99
    small = F(2.0 ** -120) + np.array([1], U).view(F)[0] * F(2.0 ** 19)  # 2^-120 + 2^-130
    assert small != F(2.0 ** -120)


def test_absorbed_products_rerun_only_near_zero(vk_device, monkeypatch):
    """acc = 1 + sum of x*y per lane, the products absorbed: lane 1 meets a subnormal product (kept,
    the reference's bits), lane 2 a zero product (kept), lane 3 a sum driven to 2^-120 (normal, but
    below 2^-99: re-run), lane 4 to 2^-96 (kept), lane 5 a NaN product (kept, one NaN)."""
    n, lanes = 24, 64
    p = _dot(n, lanes)
    rng = np.random.default_rng(7)
    x = (F(2.0 ** -20) * rng.standard_normal((n, lanes))).astype(F)  # sums stay near 1
    y = rng.standard_normal((n, lanes)).astype(F)
    x[3, 1], y[3, 1] = F(2.0 ** -70), F(2.0 ** -60)     # 2^-130: IEEE's subnormal, the reference's 0
    x[3, 2] = F(0.0)
    for lane, last in ((3, 24 * 5), (4, 24 * 4)):
        x[:, lane], y[:, lane] = F(0.0), F(1.0)
        for j, k in enumerate(range(0, last, 24)):      # 1 -> 2^-24 -> ... -> 2^-last, each exact
            x[5 + j, lane] = -F(2.0 ** -k) * F(1.0 - 2.0 ** -24)
    x[12, 3], y[12, 3] = F(2.0 ** -70), F(2.0 ** -60)   # then a subnormal product at 2^-120
    x[3, 5], y[3, 5] = np.inf, F(0.0)
    x, y = x.reshape(-1), y.reshape(-1)
    want = reference.run(p, {"x": x, "y": y})["out"].view(U)
    assert want[3] == F(2.0 ** -120).view(U) and want[4] == F(2.0 ** -96).view(U)
    monkeypatch.delenv("VYRE_VK_SPEC_ABSORB", raising=False)
    glsl = lower(speculate(p)[0]).glsl
    assert "vyre_sp_mulp(" in glsl and "vyre_fmul(" in glsl  # the exact first iteration and re-run keep it
    assert f"if (vyre_sp_state < {ABSORB_FIELD << 23:#010x}u)" in glsl and glsl.count(KEPT) == 1
    arrays = [x, y, np.zeros(lanes, F)]
    assert _run_glsl(vk_device, glsl, arrays, 2, 1).view(U).tolist() == want.tolist()
    got = _run_glsl(vk_device, glsl.replace(KEPT, "v_acc = vyre_canon(v_acc) * 1.5;"), arrays, 2, 1).view(U)
    reran = got == want
    assert reran[3] and not reran[[0, 1, 2, 4]].any(), reran[:6]
    monkeypatch.setenv("VYRE_VK_SPEC_ABSORB", "0")
    off = lower(speculate(p)[0]).glsl
    assert "vyre_sp_mulp(" not in off and "if (vyre_sp_state == 0u)" in off


def _regions(p: Program) -> list:
    return [n for n in walk_nodes(p.entry) if isinstance(n, N.Region) and n.generator == SPECULATE]


def test_first_iteration_exact_only_where_a_chain_enters_with_a_literal(monkeypatch):
    monkeypatch.delenv("VYRE_VK_SPEC_PEEL", raising=False)
    # acc = 0.0 before the loop (in the guard's block): peeled; loaded: not
    assert [r.source_region for r in _regions(speculate(_fold(8, 4))[0])] == [None]
    assert [r.source_region for r in _regions(speculate(_dot(8, 4))[0])] == [None]
    i = Expr.gid_x()
    load = Expr.load("x", i)
    inner = Node.loop_for("m", Expr.u32(0), Expr.u32(8), [Node.assign("acc", Expr.add(Expr.var("acc"), load))])
    outer = Node.loop_for("t", Expr.u32(0), Expr.u32(4), [inner, Node.store("out", Expr.var("t"), Expr.var("acc"))])

    def prog(init: Expr, loop: N.Node) -> Program:
        return Program.wrapped([BufferDecl.read("x", 0, DataType.F32).with_count(64),
                                BufferDecl.output("out", 1, DataType.F32).with_count(64)], (64, 1, 1),
                               [wrap_anonymous("t::p", [Node.let_bind("acc", init),
                                                        Node.if_then(Expr.lt(i, Expr.u32(64)), [loop])])])
    # the literal reaches the loop through the if's block: peeled
    assert [r.source_region for r in _regions(speculate(prog(Expr.f32(0.0), inner))[0])] == [None]
    assert [r.source_region for r in _regions(speculate(prog(load, inner))[0])] == [NO_PEEL]
    assert speculate(prog(load, inner))[1].endswith("; 1 loop(s) without an exact first iteration "
                                                    "(their chains enter with run-time values)")
    assert "without an exact first iteration" not in speculate(prog(Expr.f32(0.0), inner))[1]
    # inside an enclosing loop that assigns acc (its store keeps it unspeculated): run-time values
    assert [r.source_region for r in _regions(speculate(prog(Expr.f32(0.0), outer))[0])] == [NO_PEEL]
    monkeypatch.setenv("VYRE_VK_SPEC_PEEL", "always")
    assert [r.source_region for r in _regions(speculate(prog(load, inner))[0])] == [None]


@pytest.mark.parametrize("op,params,peeled", [
    ("vyre-libs::nn::linear_relu", dict(in_dim=256, out_dim=64), 0),        # streamed: tiles carry acc
    ("vyre-libs::math::reduce_variance", dict(n=1 << 14), 1),              # Welford from M1 = 0
    ("vyre-libs::nn::flash_attention", dict(seq_len=64, head_dim=16), 3),   # o, l from 0.0
])
def test_registered_ops_peel_where_their_chains_start(monkeypatch, op, params, peeled):
    from vyre_vk.compile import Options, compile_program

    monkeypatch.delenv("VYRE_VK_SPEC_PEEL", raising=False)
    monkeypatch.delenv("VYRE_VK_STREAM", raising=False)
    c = compile_program(get(op).build_with(**params), Options(True, "nvidia"))
    glsl = "".join(s.glsl for s in c.stages)
    assert glsl.count("uint vk_sppe") == peeled


def test_loads_only_summed_skip_the_flush_and_rerun_near_zero(vk_device, monkeypatch):
    """acc = x[0] + x[1] + ... per lane, the loads read without vyre_canon (speculate.raw_loads: a load
    used only as an operand of the chain's add): every lane has the reference's bits; the kept-value
    mutant shows the re-run lanes: lane 1 (subnormal terms only: the reference's sum stays 0) and
    lane 3 (a sum near 2^-110, below 2^-99) re-ran; lane 0 (plain) and lane 2 (a subnormal term
    absorbed by a sum near 1) did not; lane 4's NaN with a payload ends canonical."""
    n, lanes = 24, 64
    p = _fold(n, lanes)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, lanes)).astype(F)
    x[:, 1] = np.array([3], U).view(F)[0]                  # 3 * 2^-149 each
    x[0, 2], x[5, 2] = F(1.0), np.array([7], U).view(F)[0]
    x[:, 3] = F(2.0 ** -130) * 3
    x[0, 3], x[1:, 3] = F(2.0 ** -110), F(2.0 ** -126)      # normal terms near 2^-110
    x[5, 3] = np.array([9], U).view(F)[0]
    x[7, 4] = np.array([0x7FA00001], U).view(F)[0]          # a NaN with a payload
    x = x.reshape(-1)
    want = reference.run(p, {"x": x})["out"].view(U)
    assert want[1] == 0 and want[4] == 0x7FC00000
    monkeypatch.delenv("VYRE_VK_SPEC_RAW", raising=False)
    glsl = lower(speculate(p)[0]).glsl
    assert "vyre_sp_add(v_acc, vk_ldnr_x(" in glsl and "vyre_fadd(v_acc, vk_ldn_x(" in glsl  # flushed in the exact loops
    assert f"if (vyre_sp_state < {ABSORB_FIELD << 23:#010x}u)" in glsl and glsl.count(KEPT) == 1
    arrays = [x, np.zeros(lanes, F)]
    assert _run_glsl(vk_device, glsl, arrays, 1, 1).view(U).tolist() == want.tolist()
    got = _run_glsl(vk_device, glsl.replace(KEPT, "v_acc = vyre_canon(v_acc) * 1.5;"), arrays, 1, 1).view(U)
    reran = got == want
    assert reran[[1, 3]].all() and not reran[[0, 2]].any(), reran[:5]
    monkeypatch.setenv("VYRE_VK_SPEC_RAW", "0")
    off = lower(speculate(p)[0]).glsl
    assert "vk_ldnr_x(" not in off and "if (vyre_sp_state == 0u)" in off


def test_summands_are_values_used_only_by_the_chains_adds():
    """reduce_variance's prefetched inputs (their copies feed only ``x - M1``) qualify; a value that is
    also multiplied does not (a subnormal there can matter)."""
    from vyre_vk.ir.chains import chain_vars, loop_types, summands
    from vyre_vk.opt import optimize
    graph, _ = optimize(get("vyre-libs::math::reduce_variance").build_with(n=256 * 64), device_class="nvidia")
    loops = [r.body[0] for r in _regions(graph.stages[0])]
    env = {"M1_i": DataType.F32, "M2_i": DataType.F32, "n_i": DataType.U32, "local": DataType.U32}
    found = [summands(lp.body, chain_vars(lp, loop_types(lp, env, {}))) for lp in loops]
    assert any({f"ur_pf{k}" for k in range(2, 34)} <= s and "x" in s for s in found), found
    x, m = Expr.var("x"), Expr.var("m")
    body = (Node.let_bind("x", Expr.load("in", Expr.u32(0))), Node.assign("m", Expr.sub(x, m)),
            Node.let_bind("y", x), Node.assign("m", Expr.add(m, Expr.mul(y := Expr.var("y"), y))))
    assert summands(body, frozenset({"m"})) == frozenset()
