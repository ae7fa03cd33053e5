"""exp and tanh in float-float (vyre_vk/ir/ffmath.py): constants, model, and the shader.

Three independent checks: the constants are recomputed here from ln 2 with Python's decimal
module; the NumPy model of the GLSL (ffmodel.py) agrees with the float64 reference; and the
shader returns the model's exact bits on Vulkan. So a wrong constant, a wrong algorithm or a
wrong transcription into GLSL each fail a test of their own.
"""
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BinOp, BufferDecl, DataType, Expr, Node, Program, UnOp, ffmath, wrap_anonymous
from vyre_vk.ir.optable import UNOPS
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
def test_shader_returns_the_models_bits(vk_device, op):
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


# ---- division and sqrt: one exact-residual Newton step from the driver's answer

def _operands(rng, n):
    """a, b over the whole safe window (and past it), the exact quotient and root, and
    first guesses up to 3 ULP off either way -- Vulkan allows 2.5 (division) and 3 (sqrt)."""
    a = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-100, 100, n)).astype(F)
    b = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-100, 100, n) * rng.choice([-1, 1], n)).astype(F)
    a[: n // 8] = rng.integers(1, 2 ** 24, n // 8).astype(F)  # integer ratios: exact quotients
    b[: n // 8] = rng.integers(1, 2 ** 12, n // 8).astype(F)
    with np.errstate(all="ignore"):
        q, s = a / b, np.sqrt(a)
    off = rng.integers(-3, 4, n).astype(np.int32)
    guess = lambda x: (x.view(np.int32) + off).view(F)  # same sign: |x| moves by |off| ULP
    return a, b, q, s, guess(q), guess(s)


def test_division_and_sqrt_fix_model_rounds_correctly():
    a, b, q, s, q0, s0 = _operands(np.random.default_rng(3), 2_000_000)
    inside = ffmodel._safe(a) & ffmodel._safe(b) & ffmodel._safe(q0)
    assert 0.7 < inside.mean() < 0.9  # both sides of the window are exercised
    got = ffmodel.div_fix(a, b, q0)
    assert (got[inside].view(np.uint32) == q[inside].view(np.uint32)).all()
    assert (got[~inside].view(np.uint32) == q0[~inside].view(np.uint32)).all()  # left alone outside
    assert (ffmodel.sqrt_fix(a, s0).view(np.uint32) == s.view(np.uint32)).all()


FIX_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer Q { float q[]; };
layout(std430, binding = 3) readonly buffer S { float s[]; };
layout(std430, binding = 4) buffer D { float d[]; };
layout(std430, binding = 5) buffer R { float r[]; };
%s
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(d.length())) { d[i] = vyre_div_fix(a[i], b[i], q[i]); r[i] = vyre_sqrt_fix(a[i], s[i]); }
}
"""


def test_division_and_sqrt_fix_shader_rounds_correctly(vk_device):
    from vyre_vk import spirv
    from vyre_vk.ir.optable import GLSL_HELPERS
    from vyre_vk.runtime import kp_bridge

    a, b, q, s, q0, s0 = _operands(np.random.default_rng(4), 1 << 18)
    helpers = "\n".join(GLSL_HELPERS[h] for h in ("vyre_two_prod", "vyre_ff_safe", "vyre_div_fix", "vyre_sqrt_fix"))
    mgr = vk_device.manager
    ts = [kp_bridge.tensor(mgr, x) for x in (a, b, q0, s0, np.zeros_like(a), np.zeros_like(a))]
    algo = kp_bridge.algorithm(mgr, ts, spirv.compile_glsl(FIX_GLSL % helpers), (a.size // 64, 1, 1))
    mgr.sequence().record(kp_bridge.sync_device(ts)).record(kp_bridge.dispatch(algo)).record(
        kp_bridge.sync_local(ts[4:])).eval()
    d, r = ts[4].data().copy(), ts[5].data().copy()
    for o in [algo, *ts]:
        o.destroy()
    inside = ffmodel._safe(a) & ffmodel._safe(b) & ffmodel._safe(q0)
    bad = np.flatnonzero(d[inside].view(np.uint32) != q[inside].view(np.uint32))
    assert bad.size == 0, (a[inside][bad[:5]], b[inside][bad[:5]], d[inside][bad[:5]], q[inside][bad[:5]])
    assert (d[~inside].view(np.uint32) == q0[~inside].view(np.uint32)).all()
    assert (r.view(np.uint32) == s.view(np.uint32)).all()


@pytest.mark.parametrize("op", [BinOp.Div, UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Reciprocal])
def test_division_and_sqrt_ops_are_the_reference_bits(vk_device, op):
    """Through the lowering: bit-exact with the reference's IEEE float32 (on any driver)."""
    rng = np.random.default_rng(6)
    n = 1 << 16
    x = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-126, 128, n) * rng.choice([-1, 1], n)).astype(F)
    y = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-126, 128, n)).astype(F)
    x[:SPECIAL.size], y[:SPECIAL.size] = SPECIAL, SPECIAL[::-1]
    i = Expr.gid_x()
    a, b = Expr.load("a", i), Expr.load("b", i)
    e = Expr.binop(op, a, b) if op is BinOp.Div else Expr.unop(op, Expr.unop(UnOp.Abs, a) if op is not UnOp.Reciprocal else a)
    p = Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(n),
                         BufferDecl.read("b", 1, DataType.F32).with_count(n),
                         BufferDecl.output("out", 2, DataType.F32).with_count(n)], (64, 1, 1),
                        [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(n)), [Node.store("out", i, e)])])])
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": x, "b": y})["out"]
    got = vk_device.compile(p).run({"a": x, "b": y})["out"]
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (x[bad[:5]], y[bad[:5]], got[bad[:5]], want[bad[:5]])
