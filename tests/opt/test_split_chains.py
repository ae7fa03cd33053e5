"""The fast precision's two-stage grid reductions (vyre_vk/opt/split_chains.py, welford.py): where the
pass fires and how it lays pieces out, that the exact precision never runs it, which folds it refuses,
and that the results stay within the fast contract against float64 (docs/PRECISION.md), adversarial
inputs included."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk.ir import DataType, Expr
from vyre_vk.ir import node as N
from vyre_vk.ops import get
from vyre_vk.opt import optimize
from vyre_vk.opt.analysis import Facts
from vyre_vk.opt.split_chains import Chain, order_free, pieces, row_walk
from vyre_vk.opt.welford import match_welford
from vyre_vk.ir.program import BufferDecl, Program

from tests.ops.oracles import ORACLES
from tests.ops.precision import FAST_EXTRA_ULP, fast_errors

PASSES = ["split_phases", "spread", "split_chains"]
U = 2.0 ** -24


def _fired(op: str, passes=True, **params) -> list[str]:
    _, reports = optimize(get(op).build_with(**params), passes, precision="fast")
    return [r.why for r in reports if r.name == "split_chains" and r.changed]


def test_fires_on_long_folds_and_never_in_exact():
    rms = _fired("vyre-libs::nn::rms_norm", n=1 << 20)[0]
    assert "256 folds of 4096 steps cut into 64 pieces of 64 (16384 invocations), then partials folded" in rms
    soft = _fired("vyre-libs::nn::softmax", n=1 << 20)[0]
    assert soft.count("partials folded in piece order") == 2  # the max fold and the sum fold
    var = _fired("vyre-libs::math::reduce_variance", n=1 << 24)[0]
    assert "256 folds of 65536 steps cut into 256 pieces of 256 (65536 invocations), then Welford states merged" in var
    gemv = _fired("vyre-libs::nn::linear_relu", in_dim=4096, out_dim=4096)[0]
    assert "4096 folds of 4096 steps cut into 16 pieces of 256" in gemv
    rows = _fired("vyre-libs::nn::mlp_backward", model_dim=2048, hidden_dim=8192)[0]  # gx walks rows of w1
    assert "2048 folds of 8192 steps cut into 32 interleaved pieces of 256" in rows
    # fission's kernel: its two row sums (h over w1's columns, gh along w2's rows) split one by one
    assert ("component 0: fast precision: 8192 folds of 2048 steps cut into 8 pieces of 256" in rows
            and "component 1: fast precision: 8192 folds of 2048 steps cut into 8 interleaved pieces" in rows)
    assert "Welford states merged pairwise (Chan et al.), first in groups of 16 (4096 invocations)" in var
    assert _fired("vyre-libs::nn::rms_norm", n=4096) == []  # 16 chunks per lane: left whole
    _, reports = optimize(get("vyre-libs::nn::rms_norm").build_with(n=1 << 20), True)
    assert not any(r.name == "split_chains" and r.changed for r in reports)


def test_pieces():
    assert [pieces(c, 256) for c in (63, 64, 4096, 65536, 1 << 20)] == [1, 2, 64, 256, 256]
    assert pieces(1 << 20, 4096) == 16 and pieces(4096, 1 << 16) == 1  # N*P near TARGET_LANES


def _chain(pre, step, index=None) -> tuple[Chain, Facts]:
    loop = N.Loop("c", Expr.u32(0), Expr.u32(128), (
        N.Let("idx", index or Expr.add(Expr.mul(Expr.var("c"), Expr.u32(32)), Expr.var("l"))),
        N.If(Expr.lt(Expr.var("idx"), Expr.u32(4096)), tuple(step), ())))
    ch = Chain("l", 32, (), tuple(pre), loop, ())
    p = Program.wrapped([BufferDecl.read("x", 0, DataType.F32).with_count(4096),
                         BufferDecl.output("o", 1, DataType.F32).with_count(32)], (32, 1, 1),
                        [N.Let("l", Expr.gid_x()), *pre, loop])
    return ch, Facts(p)


def test_row_walks_interleave():
    x = [N.Assign("a", Expr.add(Expr.var("a"), Expr.load("x", Expr.var("idx"))))]
    assert not row_walk(_chain([N.Let("a", Expr.f32(0.0))], x)[0])  # x[c*32 + l]: i fastest
    row = Expr.add(Expr.mul(Expr.var("l"), Expr.u32(128)), Expr.var("c"))  # x[l*128 + c]: a row per output
    assert row_walk(_chain([N.Let("a", Expr.f32(0.0))], x, row)[0])


def test_steps_it_regroups_and_steps_it_refuses():
    v, x = Expr.var, Expr.load("x", Expr.var("idx"))
    f0, f1 = N.Let("a", Expr.f32(0.0)), N.Let("a", Expr.f32(1.0))

    def free(pre, *step):
        return order_free(*_chain(pre, step))

    assert free([f0], N.Assign("a", Expr.add(v("a"), x)))["a"].add
    assert free([f1], N.Assign("a", Expr.add(v("a"), x)))["a"].add           # stage B starts from the init
    assert not free([f1], N.Assign("a", Expr.max(v("a"), x)))["a"].add       # idempotent: pieces start from it
    fold = free([f1], N.Assign("a", Expr.select(Expr.gt(x, v("a")), x, v("a"))))["a"]
    assert fold.combine(v("a"), v("b")) == Expr.select(Expr.gt(v("b"), v("a")), v("b"), v("a"))
    assert free([f0], N.Assign("a", Expr.mul(v("a"), x))) is None             # not an order-free op
    assert free([f0], N.Assign("a", Expr.add(x, v("a")))) is None             # not acc (+) t
    assert free([f0], N.Assign("a", Expr.add(v("a"), Expr.mul(x, v("a"))))) is None  # t reads acc
    assert free([f0], N.Let("t", v("a")), N.Assign("a", Expr.add(v("a"), x))) is None  # a let reads acc
    assert free([f0], N.If(Expr.gt(v("a"), x), (N.Assign("a", Expr.add(v("a"), x)),), ())) is None  # so does a test
    assert free([f0], N.Assign("a", Expr.add(v("a"), x)), N.Assign("a", Expr.add(v("a"), x))) is None
    assert free([f0], N.Assign("a", Expr.select(Expr.gt(x, v("a")), v("a"), x))) is None  # a mixed select
    # Welford's step is not order-free, but is Welford
    welford = [N.Let("n", Expr.u32(0)), N.Let("m1", Expr.f32(0.0)), N.Let("m2", Expr.f32(0.0))]
    step = [N.Let("x", x), N.Assign("n", Expr.add(v("n"), Expr.u32(1))), N.Let("d", Expr.sub(v("x"), v("m1"))),
            N.Assign("m1", Expr.add(v("m1"), Expr.div(v("d"), Expr.cast(DataType.F32, v("n"))))),
            N.Let("d2", Expr.sub(v("x"), v("m1"))), N.Assign("m2", Expr.add(v("m2"), Expr.mul(v("d"), v("d2"))))]
    assert free(welford, *step) is None
    w = match_welford(*_chain(welford, step))
    assert (w.n, w.m1, w.m2) == ("n", "m1", "m2")
    bad = step[:5] + [N.Assign("m2", Expr.add(v("m2"), Expr.mul(v("d"), v("d"))))]  # not Welford's M2
    assert match_welford(*_chain(welford, bad)) is None
    # cse's lets and renamed temporaries: the same update, run symbolically
    cse = step[:2] + [N.Let("t0", Expr.sub(v("x"), v("m1"))), N.Let("d", v("t0"))] + step[3:]
    assert match_welford(*_chain(welford, cse)) == w


def _variance(n: int, x: np.ndarray, precision: str) -> float:
    g, _ = optimize(get("vyre-libs::math::reduce_variance").build_with(n=n), True, precision=precision)
    return float(g.run_reference({"input": x})["output"][0])


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_variance_merges_stay_within_the_bound(offset):
    """Welford pieces merged by Chan's formula against float64, a large mean included (where sums of
    squares cancel): relative error within 64 eps * sqrt(kappa), kappa = 1 + mean^2/var, and never
    more than 64 eps worse than the exact precision's serial chains (measured: 1.4 and 41 eps fast,
    1.4 and 328 eps exact)."""
    n = 200_000
    x = (offset + np.random.default_rng(7).standard_normal(n) * 3.0).astype(np.float32)
    want = float(np.var(x.astype(np.float64)))
    kappa = 1 + float(np.mean(x.astype(np.float64))) ** 2 / want
    fast, exact = (abs(_variance(n, x, prec) - want) / want / U for prec in ("fast", "exact"))
    assert fast <= 64 * kappa ** 0.5 and fast <= exact + 64, (fast, exact, kappa)


SIZES = [("vyre-libs::nn::rms_norm", {"n": 40_000}), ("vyre-libs::nn::softmax", {"n": 40_000}),
         ("vyre-libs::nn::layer_norm", {"n": 40_000}), ("vyre-libs::math::reduce_mean", {"n": 40_000}),
         ("vyre-libs::math::reduce_variance", {"n": 70_000}), ("vyre-libs::math::dot", {"n": 40_000}),
         ("vyre-libs::nn::linear_relu", {"in_dim": 512, "out_dim": 40}),
         ("vyre-libs::nn::linear_4bit", {"in_dim": 512, "out_dim": 40}),
         ("vyre-libs::nn::mlp_backward", {"model_dim": 16, "hidden_dim": 512}),
         ("vyre-libs::nn::mlp_backward", {"model_dim": 128, "hidden_dim": 64}),   # fission's components
         ("vyre-libs::math::reduce_variance", {"n": 1 << 18}),                     # Welford groups of 16
         ("vyre-libs::nn::attention", {"seq_len": 64, "head_dim": 8}),
         ("vyre-libs::quant::int4_batched_matmul_top1_f32_scaled", {"batch": 2, "rows": 8, "cols": 512})]


@pytest.mark.parametrize("op,params", SIZES, ids=[op for op, _ in SIZES])
def test_registered_ops_it_rewrites_stay_within_the_fast_contract(vk_device, op, params):
    assert _fired(op, **{**ORACLES[op].params, **params}), op
    r = fast_errors(op, vk_device, seeds=(0, 1), params=params)
    assert r.ints_equal and r.fast <= r.window + FAST_EXTRA_ULP and r.fast <= r.exact + FAST_EXTRA_ULP, r


def test_emit_explain_says_why_it_fired(capsys, tmp_path):
    from vyre_vk.cli import main

    args = ["emit", "vyre-libs::nn::linear_relu", "--arg", "in_dim=1024", "--arg", "out_dim=64", "--explain", "-o",
            str(tmp_path)]
    assert main(args + ["--precision", "fast"]) == 0
    out = capsys.readouterr().out
    assert "* split_chains: changed (fast precision: 64 folds of 1024 steps cut into 32 pieces of 32" in out
    assert main(args) == 0
    assert "* split_chains" not in capsys.readouterr().out
    assert main(["emit", "vyre-libs::math::fft::fft_radix2", "--explain", "-o", str(tmp_path)]) == 0
    assert "* single_invocation: changed (no invocation id" in capsys.readouterr().out
