"""The fast precision's two-stage grid reductions (vyre_vk/opt/split_chains.py, welford.py): where the
pass fires, that the exact precision never runs it, which steps it refuses, and that the results stay
within the fast contract against float64 (docs/PRECISION.md), adversarial inputs included."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk.ir import DataType, Expr
from vyre_vk.ir import node as N
from vyre_vk.ops import get
from vyre_vk.opt import optimize
from vyre_vk.opt.analysis import Facts
from vyre_vk.opt.split_chains import Chain, order_free, pieces
from vyre_vk.opt.welford import match_welford
from vyre_vk.ir.program import BufferDecl, Program

from tests.ops.precision import FAST_EXTRA_ULP, fast_errors

PASSES = ["split_phases", "spread", "split_chains"]
U = 2.0 ** -24


def _fired(op: str, **params) -> list[str]:
    _, reports = optimize(get(op).build_with(**params), PASSES, precision="fast")
    return [r.why for r in reports if r.name == "split_chains" and r.changed]


def test_fires_on_one_workgroup_reductions_and_never_in_exact():
    assert "64 pieces of 64 (16384 invocations), then partials folded" in _fired("vyre-libs::nn::rms_norm", n=1 << 20)[0]
    soft = _fired("vyre-libs::nn::softmax", n=1 << 20)[0]
    assert soft.count("partials folded in piece order") == 2  # the max fold and the sum fold
    assert "Welford states merged pairwise" in _fired("vyre-libs::math::reduce_variance", n=1 << 24)[0]
    assert "256 pieces of 256 (65536 invocations)" in _fired("vyre-libs::math::reduce_variance", n=1 << 24)[0]
    assert _fired("vyre-libs::nn::rms_norm", n=4096) == []  # 16 chunks per lane: left whole
    _, reports = optimize(get("vyre-libs::nn::rms_norm").build_with(n=1 << 20), PASSES)
    assert not any(r.name == "split_chains" and r.changed for r in reports)


def test_pieces():
    assert [pieces(c, 256) for c in (63, 64, 4096, 65536, 1 << 20)] == [1, 8, 64, 256, 256]
    assert pieces(1 << 20, 4096) == 16  # at most MAX_LANES invocations


def _chain(pre, step) -> tuple[Chain, Facts]:
    loop = N.Loop("c", Expr.u32(0), Expr.u32(128), (
        N.Let("idx", Expr.add(Expr.mul(Expr.var("c"), Expr.u32(32)), Expr.var("l"))),
        N.If(Expr.lt(Expr.var("idx"), Expr.u32(4096)), tuple(step), ())))
    ch = Chain("l", 32, tuple(pre), loop, ())
    p = Program.wrapped([BufferDecl.read("x", 0, DataType.F32).with_count(4096),
                         BufferDecl.output("o", 1, DataType.F32).with_count(32)], (32, 1, 1),
                        [N.Let("l", Expr.gid_x()), *pre, loop])
    return ch, Facts(p)


def test_steps_it_regroups_and_steps_it_refuses():
    v, x = Expr.var, Expr.load("x", Expr.var("idx"))
    f0, f1 = N.Let("a", Expr.f32(0.0)), N.Let("a", Expr.f32(1.0))

    def free(pre, *step):
        return order_free(*_chain(pre, step))

    assert set(free([f0], N.Assign("a", Expr.add(v("a"), x)))) == {"a"}
    assert set(free([f1], N.Assign("a", Expr.max(v("a"), x)))) == {"a"}       # idempotent: any init
    assert set(free([f1], N.Assign("a", Expr.select(Expr.gt(x, v("a")), x, v("a"))))) == {"a"}
    assert free([f1], N.Assign("a", Expr.add(v("a"), x))) is None             # init added P times
    assert free([f0], N.Assign("a", Expr.mul(v("a"), x))) is None             # not an order-free op
    assert free([f0], N.Assign("a", Expr.add(x, v("a")))) is None             # not acc (+) t
    assert free([f0], N.Assign("a", Expr.add(v("a"), Expr.mul(x, v("a"))))) is None  # t reads acc
    assert free([f0], N.Let("t", v("a")), N.Assign("a", Expr.add(v("a"), x))) is None  # a let reads acc
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
         ("vyre-libs::math::reduce_variance", {"n": 70_000})]


@pytest.mark.parametrize("op,params", SIZES, ids=[op for op, _ in SIZES])
def test_registered_ops_it_rewrites_stay_within_the_fast_contract(vk_device, op, params):
    assert _fired(op, **params), op
    r = fast_errors(op, vk_device, seeds=(0, 1), params=params)
    assert r.ints_equal and r.fast <= r.window + FAST_EXTRA_ULP and r.fast <= r.exact + FAST_EXTRA_ULP, r
