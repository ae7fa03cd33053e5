"""The fast precision's split-K sums (vyre_vk/opt/reassociate.py): where the pass fires, that the exact
precision never runs it, and that its sums stay within the recursive-summation bound against float64
(docs/PRECISION.md), on random sums and on the registered ops it rewrites."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.opt import optimize
from vyre_vk.opt.analysis import Facts
from vyre_vk.opt.reassociate import SPLIT_K, accumulators, reassociate
from vyre_vk.ir import node as N
from vyre_vk.ir.walk import walk_nodes

from tests.ops.precision import FAST_EXTRA_ULP, fast_errors

F32, U32 = DataType.F32, DataType.U32
U = 2.0 ** -24


def sum_program(n: int, term: str, init: float = 0.0) -> Program:
    """out[0] = init + sum_i term(x[i], y[i]) in one invocation, serially."""
    v, i = Expr.var, Expr.var("i")
    x, y = Expr.load("x", i), Expr.load("y", i)
    t = {"x": x, "x*y": Expr.mul(x, y), "x*x+y": Expr.add(Expr.mul(x, x), y)}[term]
    return Program.wrapped(
        [BufferDecl.read("x", 0, F32).with_count(n), BufferDecl.read("y", 1, F32).with_count(n),
         BufferDecl.output("out", 2, F32).with_count(1)], (1, 1, 1),
        [wrap_anonymous("test::sum", [
            Node.let_bind("acc", Expr.f32(init)),
            Node.loop_for("i", Expr.u32(0), Expr.u32(n), [Node.let_bind("t", t), Node.assign("acc", Expr.add(v("acc"), v("t")))]),
            Node.store("out", Expr.u32(0), v("acc"))])])


def terms64(term: str, x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    return {"x": x, "x*y": x * y, "x*x+y": x * x + y}[term]


def gamma(k: int) -> float:
    return k * U / (1 - k * U)


@pytest.mark.parametrize("seed", range(12))
def test_random_sums_stay_within_the_recursive_summation_bound(seed, vk_device):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2 * SPLIT_K, 3000))
    term = ["x", "x*y", "x*x+y"][seed % 3]
    init = np.float32(rng.standard_normal())
    p = sum_program(n, term, init=float(init))
    x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    q, why = reassociate(p)
    assert why.startswith("fast precision: split f32 sums") and q != p
    validate(q)
    t = terms64(term, x, y)
    want = float(init) + float(np.sum(t))  # float64
    # n + 1 values summed in any order: gamma_n * sum |.|; each term's own one or two roundings fit in
    # gamma_(n+3) once |x*x| joins the magnitudes (x*x+y rounds x*x first)
    mag = abs(float(init)) + float(np.sum(np.abs(t))) + (float(np.sum(x.astype(np.float64) ** 2)) if term == "x*x+y" else 0)
    bound = gamma(n + 3) * mag
    ins = {"x": x, "y": y}
    serial = float(reference.run(p, ins)["out"][0])
    split = float(reference.run(q, ins)["out"][0])
    on_vulkan = float(vk_device.compile(p, precision="fast").run(ins)["out"][0])
    for got in (serial, split, on_vulkan):
        assert abs(got - want) <= bound, (got, want, bound)


def test_exact_precision_never_reassociates():
    p = get("vyre-libs::nn::linear_relu").build_with(in_dim=512, out_dim=64)
    graph, reports = optimize(p, True)
    assert not any(r.name == "reassociate" and r.changed for r in reports)
    fast, reports = optimize(p, True, precision="fast")
    assert any(r.name == "reassociate" and r.changed for r in reports)
    with pytest.raises(Exception, match="precision 'loose' is not 'exact' or 'fast'. Fix:"):
        optimize(p, True, precision="loose")


def test_accumulators_are_only_plain_f32_sums():
    def loop_of(body, acc_type=F32):
        p = Program.wrapped([BufferDecl.read("x", 0, F32).with_count(64), BufferDecl.output("o", 1, F32).with_count(64)],
                            (1, 1, 1), [wrap_anonymous("t", [
                                Node.let_bind("acc", Expr.f32(0.0) if acc_type is F32 else Expr.u32(0)),
                                Node.let_bind("m", Expr.f32(0.0)),
                                Node.loop_for("i", Expr.u32(0), Expr.u32(64), body),
                                Node.store("o", Expr.u32(0), Expr.add(Expr.var("acc"), Expr.var("m")))])])
        loop = next(n for n in walk_nodes(p.entry) if isinstance(n, N.Loop))
        return accumulators(loop, Facts(p))

    v, x = Expr.var, Expr.load("x", Expr.var("i"))
    assert loop_of([Node.assign("acc", Expr.add(v("acc"), x))]) == ["acc"]
    assert loop_of([Node.if_then(Expr.lt(v("i"), Expr.u32(9)), [Node.assign("acc", Expr.add(v("acc"), x))])]) == ["acc"]
    assert loop_of([Node.assign("acc", Expr.add(x, v("acc")))]) == []                     # not acc + t
    assert loop_of([Node.assign("acc", Expr.add(v("acc"), Expr.mul(x, v("acc"))))]) == []  # t reads acc
    assert loop_of([Node.assign("acc", Expr.add(v("acc"), x)), Node.assign("m", Expr.max(v("m"), v("acc")))]) == []
    assert loop_of([Node.assign("acc", Expr.add(v("acc"), x)), Node.store("o", v("i"), x)]) == []  # writes memory
    assert loop_of([Node.assign("acc", Expr.add(v("acc"), Expr.u32(1)))], acc_type=U32) == []  # integers: exact


# the registered ops it rewrites, at sizes where their loops are long enough to split
SIZES = [("vyre-libs::nn::rms_norm", {"n": 8192}), ("vyre-libs::nn::softmax", {"n": 8192}),
         ("vyre-libs::nn::layer_norm", {"n": 8192}), ("vyre-libs::nn::linear_relu", {"in_dim": 512, "out_dim": 40}),
         ("vyre-libs::nn::cross_entropy", {"n": 3, "vocab_size": 4096}),
         ("vyre-libs::math::reduce_mean", {"n": 8192}), ("vyre-libs::nn::attention", {"seq_len": 32, "head_dim": 64})]


@pytest.mark.parametrize("op,params", SIZES, ids=[op for op, _ in SIZES])
def test_registered_ops_it_rewrites_stay_within_the_fast_contract(vk_device, op, params):
    p = get(op).build_with(**{**_oracle_params(op), **params})
    _, reports = optimize(p, True, device_class=vk_device.device_class, precision="fast")
    assert any(r.name == "reassociate" and r.changed for r in reports), op
    r = fast_errors(op, vk_device, seeds=(0,), params=params)
    assert r.ints_equal and r.fast <= r.window + FAST_EXTRA_ULP and r.fast <= r.exact + FAST_EXTRA_ULP, r


def _oracle_params(op: str) -> dict:
    from tests.ops.oracles import ORACLES
    return dict(ORACLES[op].params)


def test_emit_explain_says_why_it_fired(capsys, tmp_path):
    from vyre_vk.cli import main

    assert main(["emit", "vyre-libs::nn::linear_relu", "--arg", "in_dim=512", "--arg", "out_dim=64", "--precision",
                 "fast", "--explain", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "* reassociate: changed (" in out and "fast precision: split f32 sums into 4 partial sums added pairwise" in out
    assert main(["emit", "vyre-libs::nn::linear_relu", "--arg", "in_dim=512", "--arg", "out_dim=64", "--explain",
                 "-o", str(tmp_path)]) == 0
    assert "* reassociate" not in capsys.readouterr().out
