"""exp and tanh in float64 (vyre_vk/lower/ffmath64.py): constants, shader bits, the probe.

The constants are recomputed from ln 2 (Python's decimal module) and exact factorials; the
shader (lavapipe reports shaderFloat64, so the suite's device takes this path) is compared
with the float64 reference on the same sweeps as the float-float path; and the device probe
that turns the path on is shown to refuse a wrong helper.
"""
from decimal import Decimal, getcontext
from fractions import Fraction
import math

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, UnOp, wrap_anonymous
from vyre_vk.lower import ffmath64, lower
from vyre_vk.runtime import Device, probes
from vyre_vk.runtime.device import DeviceError, float64_wanted
from vyre_vk.testing.parity import ulp_distance

from .test_ffmath import SPECIAL, _sweeps

F = np.float32


def _map(op, n):
    i = Expr.gid_x()
    return Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(n),
                            BufferDecl.output("out", 1, DataType.F32).with_count(n)], (64, 1, 1),
                           [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(n)), [
                               Node.store("out", i, Expr.unop(op, Expr.load("a", i)))])])])


def test_constants_are_ln2_and_inverse_factorials():
    getcontext().prec = 60
    ln2 = Fraction(Decimal(2).ln())
    hi = Fraction(ffmath64.LN2_HI)
    assert hi.denominator <= 2 ** 32 and ln2 - hi < Fraction(1, 2 ** 32)  # 32-bit head: n*hi exact
    assert abs(ln2 - hi - Fraction(ffmath64.LN2_LO)) < Fraction(1, 2 ** 85)
    assert ffmath64.INV_FACT == tuple(float(Fraction(1, math.factorial(k))) for k in range(14))
    assert ffmath64.LOG2E == float(1 / ln2)
    # the ends of exp's f32 rounding: from TO_INF up +inf, FLT_MIN from TO_FLT_MIN up
    with np.errstate(over="ignore"):
        assert np.isinf(F(ffmath64.TO_INF)) 
    assert F(np.nextafter(ffmath64.TO_INF, 0)) == np.finfo(F).max
    assert F(ffmath64.TO_FLT_MIN) == np.finfo(F).tiny and F(np.nextafter(ffmath64.TO_FLT_MIN, 0)) < np.finfo(F).tiny
    # the Taylor remainders are below 2^-52 relative on |r| <= ln2/2
    assert ffmath64.HALF_LN2 >= float(ln2 / 2)
    assert ffmath64.HALF_LN2 ** 14 / math.factorial(14) < 2.0 ** -56


def test_float64_lowering_uses_double_and_no_table():
    p = _map(UnOp.Exp, 64)
    fast, slow = lower(p, float64=True).glsl, lower(p).glsl
    assert "double vyre_exp64" in fast and "vyre_exp_th" not in fast
    assert "double" not in slow and "vyre_exp_th" in slow


@pytest.mark.parametrize("op", [UnOp.Exp, UnOp.Tanh])
def test_shader_returns_the_references_bits(vk_device, op):
    assert vk_device.limits.float64, f"{vk_device.name}: {vk_device.float64}"
    rng = np.random.default_rng(5)
    x = np.concatenate([SPECIAL] + [s[:400_000] for s in _sweeps(op, rng)]).astype(F)
    p = _map(op, x.size)
    got = vk_device.compile(p).run({"a": x})["out"]
    want = reference.run(p, {"a": x})["out"]
    assert got[:SPECIAL.size].view(np.uint32).tolist() == want[:SPECIAL.size].view(np.uint32).tolist()
    d = ulp_distance(want, got)
    # relative error < 2^-50 before the one rounding: a 1-ULP miss needs the exact value within
    # 2^-50 of a rounding boundary, about 1 input in 2^25
    assert d.max() <= 1 and int((d != 0).sum()) <= max(1, x.size >> 20), x[d != 0][:5]


def test_probe_passes_here_and_refuses_a_wrong_helper(vk_device, monkeypatch):
    mgr = vk_device.manager
    ok = probes.float64_probe(mgr)
    assert ok.passed and ok.correct == ok.total == probes.PROBE_CASES
    none = probes.Float64Probe(0, 0)  # what a device without shaderFloat64 gets: never passed
    assert not none.passed and "no shaderFloat64" in str(none)
    # a degree-5 polynomial is ~1e-5 off: the probe must see it
    good = ffmath64.GLSL["vyre_exp64"]
    head, tail = good.split("return ldexp(", 1)
    monkeypatch.setitem(ffmath64.GLSL, "vyre_exp64", head + "return ldexp(1.0LF + r * (1.0LF + r * (0.5LF + r * "
                        "(0.16666666666666666LF + r * (0.041666666666666664LF + r * 0.008333333333333333LF)))), "
                        "int(n));\n}")
    probes.float64_spirv.cache_clear()
    try:
        bad = probes.float64_probe(mgr)
    finally:
        probes.float64_spirv.cache_clear()
    assert not bad.passed and bad.correct < bad.total - 100, bad


def test_env_turns_the_path_off(monkeypatch):
    monkeypatch.setenv("VYRE_VK_FLOAT64", "off")
    assert float64_wanted() is False
    with Device() as dev:
        assert dev.float64 is None and not dev.limits.float64
    monkeypatch.setenv("VYRE_VK_FLOAT64", "on")
    with pytest.raises(DeviceError, match="Fix:"):
        float64_wanted()

