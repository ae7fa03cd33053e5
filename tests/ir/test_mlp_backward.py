"""The seed op nn::mlp_backward on the reference: fixture, NumPy formula, speed."""
import time

import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ir import Expr, validate
from vyre_vk.ir.node import Let
from vyre_vk.ops.nn.backward.mlp_backward import OP_ID, mlp_backward

from .helpers import ulp_ok

NAMES = ("x", "w1", "b1", "w2", "grad_out", "grad_x")


def numpy_mlp_backward(x, w1, b1, w2, dy, d, h, wrong=False):
    """Independent float64 formula: W1 is (d, h), W2 is (h, d)."""
    W1 = w1.astype(np.float64).reshape(d, h)
    W2 = w2.astype(np.float64).reshape(h, d)
    hid = b1.astype(np.float64) + x.astype(np.float64) @ W1
    d_act = np.maximum(0.5 * hid, hid if wrong else 2.0 * hid)
    return W1 @ ((W2 @ dy.astype(np.float64)) * d_act)


def test_registered_case_is_exactly_2_4():
    e = ops.get(OP_ID)
    assert e.category == "nn"
    p = e.build()
    validate(p)
    assert p.workgroup_size == (64, 1, 1)
    assert p.entry[0].generator == OP_ID
    (case,) = e.test_inputs()
    (expected,) = e.expected_output()
    out = reference.run(p, case)
    assert out["grad_x"].tolist() == [2.0, 4.0]
    assert out["grad_x"].dtype == np.float32
    assert [out["grad_x"].tobytes()] == expected


def test_logical_and_dict_inputs_agree_with_legacy_form():
    e = ops.get(OP_ID)
    case = e.test_inputs()[0]
    p = e.build()
    logical = reference.run(p, case[:5])["grad_x"]
    as_dict = reference.run(p, {n: np.frombuffer(b, np.float32) for n, b in zip(NAMES[:5], case)})["grad_x"]
    assert logical.tolist() == as_dict.tolist() == [2.0, 4.0]


def _random_case(rng, d, h):
    # Dyadic values k/4 in [-2, 2]: products and partial sums are (almost always) exact in
    # float32, so the 4-ULP window tests the program's structure, not summation order.
    q = lambda n: (rng.integers(-8, 9, n) / 4).astype(np.float32)  # noqa: E731
    return q(d), q(d * h), q(h), q(h * d), q(d)


def _wrong_program(d, h):
    """d_act = max(0.5h, h) instead of max(0.5h, 2h)."""
    p = mlp_backward(*NAMES, d, h)
    region = p.entry[0]
    ifn = region.body[1]
    loop = ifn.then[1]
    body = list(loop.body)
    assert body[2].name == "d_act"
    body[2] = Let("d_act", Expr.max(Expr.mul(Expr.f32(0.5), Expr.var("h_acc")), Expr.var("h_acc")))
    import dataclasses
    loop2 = dataclasses.replace(loop, body=tuple(body))
    ifn2 = dataclasses.replace(ifn, then=(ifn.then[0], loop2, ifn.then[2]))
    region2 = dataclasses.replace(region, body=(region.body[0], ifn2))
    return dataclasses.replace(p, entry=(region2,))


def test_fifty_random_cases_match_numpy_formula_within_4_ulp_and_wrong_program_fails():
    rng = np.random.default_rng(1234)
    wrong_detected = 0
    for case in range(50):
        d = int(rng.integers(1, 65))
        h = int(rng.integers(1, 257))
        x, w1, b1, w2, dy = _random_case(rng, d, h)
        expected = numpy_mlp_backward(x, w1, b1, w2, dy, d, h)
        out = reference.run(mlp_backward(*NAMES, d, h), [x, w1, b1, w2, dy])["grad_x"]
        assert out.shape == (d,)
        assert ulp_ok(out, expected), (case, d, h, np.max(np.abs(out - expected)))
        wrong = reference.run(_wrong_program(d, h), [x, w1, b1, w2, dy])["grad_x"]
        if not ulp_ok(wrong, expected):
            wrong_detected += 1
    # The wrong derivative agrees only where no hidden unit is positive; random data has some.
    assert wrong_detected >= 45


def test_wrong_program_fails_the_check_on_a_fixed_case():
    d, h = 4, 8
    rng = np.random.default_rng(7)
    x, w1, b1, w2, dy = _random_case(rng, d, h)
    b1 = np.abs(b1) + 1  # make hidden units positive so 2h vs h matters
    x = np.abs(x)
    w1 = np.abs(w1)
    expected = numpy_mlp_backward(x, w1, b1, w2, dy, d, h)
    wrong = reference.run(_wrong_program(d, h), [x, w1, b1, w2, dy])["grad_x"]
    assert not ulp_ok(wrong, expected)
    assert ulp_ok(wrong, numpy_mlp_backward(x, w1, b1, w2, dy, d, h, wrong=True))


def test_fast_loop_path_is_bit_identical_to_stepping(monkeypatch):
    """The accumulate fast path must equal the statement-by-statement loop bit for bit,
    with continuous (not dyadic) data where rounding order matters."""
    rng = np.random.default_rng(3)
    d, h = 24, 40
    ins = [rng.standard_normal(n).astype(np.float32) for n in (d, d * h, h, h * d, d)]
    p = mlp_backward(*NAMES, d, h)
    fast = reference.run(p, ins)["grad_x"]
    from vyre_vk.reference import eval as ev
    monkeypatch.setattr(ev, "FAST_LOOP_MAX_ELEMENTS", 0)  # forces stepping
    slow = reference.run(p, ins)["grad_x"]
    assert fast.view(np.uint32).tolist() == slow.view(np.uint32).tolist()


def test_256x1024_runs_in_under_2_seconds():
    d, h = 256, 1024
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(n).astype(np.float32) for n in (d, d * h, h, h * d, d)]
    p = mlp_backward(*NAMES, d, h)
    t0 = time.perf_counter()
    out = reference.run(p, ins)["grad_x"]
    elapsed = time.perf_counter() - t0
    assert elapsed < 2.0, f"reference took {elapsed:.2f}s"
    expected = numpy_mlp_backward(*ins, d, h)
    # continuous data: f32 accumulation error, so a relative (not 4-ULP) sanity bound
    assert np.allclose(out, expected, rtol=1e-3, atol=1e-3 * np.max(np.abs(expected)))
