"""exp and tanh in float-float (vyre_vk/lower/ffmath.py): constants, model, and the shader.

Three independent checks: the constants are recomputed here from ln 2 with Python's decimal
module; the NumPy model of the GLSL (ffmodel.py) agrees with the float64 reference; and the
shader returns the model's exact bits on Vulkan. So a wrong constant, a wrong algorithm or a
wrong transcription into GLSL each fail a test of their own.
"""
from dataclasses import replace
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, UnOp, wrap_anonymous
from vyre_vk.ir.optable import UNOPS
from vyre_vk.lower import ffmath
from vyre_vk.testing.parity import ulp_distance

from . import ffmodel

F = np.float32


def _bits(v: Fraction) -> int:
    return int(np.float32(float(v)).view(np.uint32))  # float(Fraction) rounds once, to nearest


def _leading(v: Fraction, nbits: int) -> Fraction:
    """v truncated to its nbits leading significant bits."""
    e = 0
    while abs(v) >= Fraction(2) ** e:
        e += 1
    while abs(v) < Fraction(2) ** (e - 1):
        e -= 1
    scale = Fraction(2) ** (nbits - e)
    return Fraction(int(v * scale)) / scale


def test_constants_are_ln2_and_powers_of_two():
    getcontext().prec = 60
    ln2 = Fraction(Decimal(2).ln())
    rest, parts = ln2 / 64, []
    for nbits in (10, 10, 10, 24):
        parts.append(_leading(rest, nbits))
        rest -= parts[-1]
    assert tuple(_bits(p) for p in parts) == ffmath.EXP_LN2_64
    assert all(Fraction(float(np.uint32(b).view(F))) == p for b, p in zip(ffmath.EXP_LN2_64, parts))  # exact
    assert abs(rest) < Fraction(1, 2 ** 60)
    assert _bits(64 / ln2) == ffmath.EXP_INV_LN2_64
    for j in range(64):
        v = Fraction(Decimal(2) ** (Decimal(j) / 64))
        hi = ffmath.EXP_TABLE_HI[j]
        assert _bits(v) == hi
        assert _bits(v - Fraction(float(np.uint32(hi).view(F)))) == ffmath.EXP_TABLE_LO[j]


def _ref(op, x):
    with np.errstate(over="ignore"):
        return UNOPS[op].numpy(x, DataType.F32)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-40, 88.72283, 88.722839, 88.72284,
                    -87.33654, -87.3365, -103.9, -104.0, 89.0, 9.0, 9.01, 9.1, 9.5, -9.5, 2 ** -12, -2 ** -12,
                    2 ** -12 * 0.999, 0.125, -0.5, 1.0, 20.0, -20.0], F)


def _sweeps(op, rng):
    if op is UnOp.Exp:
        return [rng.uniform(-105, 90, 2_000_000), rng.uniform(-2, 2, 500_000), rng.standard_normal(500_000) * 1e-3,
                np.arange(-87.34, -87.33, 2 ** -17), np.arange(88.70, 88.73, 2 ** -17)]
    return [rng.uniform(-11, 11, 2_000_000), rng.uniform(-0.6, 0.6, 500_000),
            np.exp(rng.uniform(np.log(2 ** -13), np.log(0.2), 500_000)) * rng.choice([-1, 1], 500_000)]


@pytest.mark.parametrize("op", [UnOp.Exp, UnOp.Tanh])
def test_model_is_the_reference_but_for_rare_one_ulp_roundings(op):
    model = {UnOp.Exp: ffmodel.exp, UnOp.Tanh: ffmodel.tanh}[op]
    assert model(SPECIAL).view(np.uint32).tolist() == _ref(op, SPECIAL).view(np.uint32).tolist()
    total = wrong = 0
    for xs in _sweeps(op, np.random.default_rng(11)):
        x = xs.astype(F)
        d = ulp_distance(_ref(op, x), model(x))
        assert d.max() <= 1
        total, wrong = total + x.size, wrong + int((d != 0).sum())
    assert wrong <= total * 1e-5, (wrong, total)


@pytest.mark.parametrize("op", [UnOp.Exp, UnOp.Tanh])
def test_shader_returns_the_models_bits(vk_device, op, monkeypatch):
    monkeypatch.setattr(vk_device, "limits", replace(vk_device.limits, float64=False))  # not ffmath64's path
    model = {UnOp.Exp: ffmodel.exp, UnOp.Tanh: ffmodel.tanh}[op]
    rng = np.random.default_rng(5)
    x = np.concatenate([SPECIAL] + [s[:100_000] for s in _sweeps(op, rng)]).astype(F)
    i = Expr.gid_x()
    p = Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(x.size),
                         BufferDecl.output("out", 1, DataType.F32).with_count(x.size)], (64, 1, 1),
                        [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(x.size)), [
                            Node.store("out", i, Expr.unop(op, Expr.load("a", i)))])])])
    got = vk_device.compile(p).run({"a": x})["out"]
    want = model(x)
    assert got[:SPECIAL.size].view(np.uint32).tolist() == want[:SPECIAL.size].view(np.uint32).tolist()
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (x[bad[:5]], got[bad[:5]], want[bad[:5]])
    assert ulp_distance(reference.run(p, {"a": x})["out"], got).max() <= 1

