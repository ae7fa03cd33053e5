"""The fused-fma fast division (vyre_vk.lower.ieee.FUSED) and the probe that enables it.
(FUSED's one-fma TwoProduct is checked on a fused device only: `vyre-vk run --all` on the H200.)

lavapipe's fma() rounds twice, so the fast path cannot run as is here. The first test runs
its exact GLSL text with each ``fma(`` replaced by ``vyre_fma(`` (exact whenever the result
is representable, as the residuals are, and within an ULP elsewhere, as q1 needs): that
checks the algorithm and its window on this device against the reference's bits. The probe
tests check that it reports what an independent fma shader measures, so a device whose
fma() rounds twice never gets the fast path.
"""
import importlib.util
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import reference, spirv
from vyre_vk.ir import BinOp, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.lower import ieee, lower
from vyre_vk.lower.helpers import GLSL_HELPERS
from vyre_vk.runtime import kp_bridge
from vyre_vk.runtime.probes import PROBE_CASES, fma_probe, probe_cases

from .test_ieee import _pairs

F = np.float32


def _div_and_fma(n: int) -> Program:
    """out = a / b, and a dummy fma so vyre_fma is in the shader for the substitution."""
    i = Expr.gid_x()
    a, b = Expr.load("a", i), Expr.load("b", i)
    return Program.wrapped(
        [BufferDecl.read("a", 0, DataType.F32).with_count(n), BufferDecl.read("b", 1, DataType.F32).with_count(n),
         BufferDecl.output("out", 2, DataType.F32).with_count(n), BufferDecl.read_write("f", 3, DataType.F32).with_count(n)],
        (64, 1, 1),
        [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(n)), [
            Node.store("out", i, Expr.binop(BinOp.Div, a, b)), Node.store("f", i, Expr.fma(a, b, a))])])])


def _window_pairs(rng, n=1 << 15):
    """Operands at the fast window's exponent edges and quotients next to midpoints."""
    lo = ieee.FAST_DIV_MIN_EA
    ea = rng.integers(lo - 2, 255, n)
    eb = rng.integers(1, 255, n)
    a = ((rng.integers(0, 2, n) << 31) | (ea << 23) | rng.integers(0, 1 << 23, n)).astype(np.uint32).view(F)
    b = ((eb << 23) | rng.integers(0, 1 << 23, n)).astype(np.uint32).view(F)
    qa, qb, _ = probe_cases(n)
    return np.concatenate([a, qa]), np.concatenate([b, qb])


#: fma correctly rounded, from double arithmetic (lavapipe has shaderFloat64): the exact product and
#: TwoSum's exact error of the double sum s. Rounding s to f32 is right unless s sits exactly on an
#: f32 midpoint (its low 29 mantissa bits 1 followed by zeros) with a non-zero error: then the error
#: picks the side. Read from s's bits: lavapipe folds double(float(s)) back to s.
FMA_RN = """float vk_fma_rn(float a, float b, float c) {
    precise double p = double(a) * double(b);
    precise double cc = double(c);
    precise double s = p + cc;
    precise double bp = s - p;
    precise double err = (p - (s - bp)) + (cc - bp);
    uvec2 w = unpackDouble2x32(s);
    if (err == 0.0LF || (w.x & 0x1FFFFFFFu) != 0x10000000u) return float(s);
    uint mag = ((((w.y >> 20) & 0x7FFu) - 896u) << 23) | ((w.y & 0xFFFFFu) << 3) | (w.x >> 29);  // |s| truncated
    bool up = (err > 0.0LF) == (s > 0.0LF);  // the error points away from zero
    return uintBitsToFloat((w.y & 0x80000000u) | (up ? mag + 1u : mag));
}
"""


def test_fast_path_text_with_a_correctly_rounded_fma_is_the_reference(vk_device):
    if not vk_device.limits.float64:
        pytest.skip("the correctly rounded fma stand-in needs shaderFloat64")
    rng = np.random.default_rng(11)
    a1, b1 = _pairs(rng)
    a2, b2 = _window_pairs(rng)
    a, b = np.concatenate([a1, a2]), np.concatenate([b1, b2])
    p = _div_and_fma(a.size)
    glsl = lower(p, fused_fma=True).glsl
    start = glsl.index("float vyre_rcp_rn(float d)")  # the reciprocal, the window, the division
    end = glsl.index("if (!fast) q = vyre_fdiv_int(a, b);", start)
    fast = glsl[start:end]
    assert len(re.findall(r"\bfma\(", fast)) == 6
    glsl = glsl[:start] + FMA_RN + re.sub(r"\bfma\(", "vk_fma_rn(", fast) + glsl[end:]
    got = _run_glsl(vk_device.manager, glsl, [a, b, np.zeros_like(a), np.zeros_like(a)], 2)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b, "f": np.zeros_like(a)})["out"]
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (bad.size, [hex(x) for x in a[bad[:5]].view(np.uint32)], [hex(x) for x in b[bad[:5]].view(np.uint32)], got[bad[:5]], want[bad[:5]])
    assert _fast_rows(a, b).mean() > 0.5  # the window really is exercised


def _run_glsl(mgr, glsl: str, arrays: list, result: int) -> np.ndarray:
    """Dispatch `glsl` (local size 64) over arrays[0].size invocations; arrays[result] read back."""
    words = spirv.compile_glsl(glsl, name="fused-test.comp")
    tensors = [kp_bridge.tensor(mgr, x) for x in arrays]
    algo = kp_bridge.algorithm(mgr, tensors, words, ((arrays[0].size + 63) // 64, 1, 1))
    seq = mgr.sequence()
    seq.record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo)).record(
        kp_bridge.sync_local(tensors[result:result + 1])).eval()
    got = tensors[result].data().copy().view(arrays[result].dtype)
    for obj in (seq, algo, *tensors):
        obj.destroy()
    return got


def _fma_edges():
    """tools/bench/fma_edges.py: its operand classes and Fma program (the same check on a real device)."""
    spec = importlib.util.spec_from_file_location("fma_edges", Path(__file__).parents[2] / "tools/bench/fma_edges.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("float64", [False, True], ids=["split", "f64"])
def test_fused_fma_with_a_correctly_rounded_fma_is_the_reference(vk_device, float64):
    """ieee.FUSED's vyre_fma, each fma() of the helpers replaced by the correctly rounded stand-in:
    the reference's bits wherever the result is normal (including products so small that the split
    helper's error term underflows). Zeros, subnormals, infinities and NaN: with float64, the
    reference's bits too (ffmath64's vyre_fma_f64); without, the split helper's own bits."""
    if not vk_device.limits.float64:
        pytest.skip("the correctly rounded fma stand-in needs shaderFloat64")
    edges = _fma_edges()
    a, b, c = edges.operands(np.random.default_rng(17))
    p = edges.fma_program(a.size)
    glsl = lower(p, fused_fma=True, float64=float64).glsl
    start = glsl.index("float vyre_fma(float a, float b, float c)")
    end = glsl.index("return vyre_fma_split(a, b, c);", start)
    assert len(re.findall(r"\bfma\(", glsl[start:end])) == 1
    assert ("vyre_fma_f64(a, b, c)" in glsl) == float64
    # `split` is the same shader with the fast return taken out: the fused lowering before it
    first, head = glsl.index("float vyre_canon("), glsl.index("void main()")  # the helpers
    glsl = glsl[:first] + FMA_RN + re.sub(r"\bfma\(", "vk_fma_rn(", glsl[first:head]) + glsl[head:]
    split_glsl = glsl.replace("if (e != 0u && e != 0x7F800000u) return r;", "", 1)
    assert split_glsl != glsl
    arrays = [a, b, c, np.zeros_like(a)]
    got = _run_glsl(vk_device.manager, glsl, arrays, 3).view(np.uint32)
    split = _run_glsl(vk_device.manager, split_glsl, arrays, 3).view(np.uint32)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b, "c": c})["out"].view(np.uint32)
    e = (want >> 23) & 0xFF
    normal = (e >= 1) & (e <= 254)
    bad = np.flatnonzero(got != want if float64 else np.where(normal, got != want, got != split))
    assert bad.size == 0, (bad.size, a[bad[:5]], b[bad[:5]], c[bad[:5]], got[bad[:5]], want[bad[:5]])
    assert 0.5 < normal.mean() < 0.95 and np.count_nonzero(e == 1) > 100  # both paths, the lowest binade
    if not float64:
        assert np.count_nonzero(split[normal] != want[normal]) > 50  # where the split helper alone is off
        assert np.count_nonzero(split[~normal] != want[~normal]) > 50  # its zero signs there


def test_fma_in_double_is_the_reference_on_every_operand_class(vk_device):
    """Without a fused fma but with float64 (lavapipe), an IR Fma is ffmath64's vyre_fma_f64: the
    reference's bits on every class, where the split helper is off by an ULP or a zero's sign
    for products below ~2^-100."""
    if not vk_device.limits.float64:
        pytest.skip("needs shaderFloat64")
    edges = _fma_edges()
    a, b, c = edges.operands(np.random.default_rng(23), 1 << 15)
    p = edges.fma_program(a.size)
    arrays = [a, b, c, np.zeros_like(a)]
    got = _run_glsl(vk_device.manager, lower(p, float64=True).glsl, arrays, 3).view(np.uint32)
    split = _run_glsl(vk_device.manager, lower(p).glsl, arrays, 3).view(np.uint32)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b, "c": c})["out"].view(np.uint32)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (bad.size, a[bad[:5]], b[bad[:5]], c[bad[:5]], got[bad[:5]], want[bad[:5]])
    assert np.count_nonzero(split != want) > 100  # the operands reach what the split gets wrong


def test_fma_in_double_at_the_rounding_boundaries(vk_device):
    """vyre_fma_f64's spelled-out ends: FLT_MIN from FLT_MIN - 2^-150 up (the tie to the even
    FLT_MIN), zero below; inf from 2^128 - 2^103 up, FLT_MAX below; and a sum on an f32 midpoint
    that the error term decides. Checked against the reference (exact rationals) on lavapipe."""
    t = np.finfo(F).tiny
    # a*b + c with the exact values FLT_MIN - 2^-150 (the tie), 2^-170 below it, FLT_MIN - 2^-151, ...
    one = F(1.0)
    rows = [(F(2.0 ** -75), F(-(2.0 ** -75)), t),                       # FLT_MIN - 2^-150: tie -> FLT_MIN
            (F(2.0 ** -75) * F(1 + 2.0 ** -20), F(-(2.0 ** -75)), t),   # just below the tie -> 0
            (F(2.0 ** -76), F(-(2.0 ** -75)), t),                       # FLT_MIN - 2^-151 -> FLT_MIN
            (F(2.0 ** 52), F(2.0 ** 51), np.finfo(F).max),             # 2^128 - 2^103: tie -> inf
            (F(2.0 ** 52), F(2.0 ** 51) * F(1 - 2.0 ** -24), np.finfo(F).max),  # below it -> FLT_MAX
            (one + F(2.0 ** -12), one + F(2.0 ** -12), F(-(1 + 2.0 ** -11))),   # the doctest's 2^-24
            (F(1 + 2.0 ** -23), F(1 + 2.0 ** -23), F(2.0 ** 24))]      # a sum on a midpoint region
    a, b, c = (np.array(x, F) for x in zip(*rows))
    a, b, c = np.concatenate([a, -a]), np.concatenate([b, b]), np.concatenate([c, -c])
    edges = _fma_edges()
    p = edges.fma_program(a.size)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b, "c": c})["out"]
    for i in range(a.size):  # the reference itself, from exact rationals (nextafter(FLT_MAX) warns)
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        if abs(exact) >= Fraction(2) ** 128 - Fraction(2) ** 103:
            assert np.isinf(want[i]) and np.signbit(want[i]) == (exact < 0), i
        elif abs(exact) >= Fraction(2) ** -126 - Fraction(2) ** -150:
            with np.errstate(over="ignore"):
                near = [x for x in (np.nextafter(want[i], F(-np.inf)), np.nextafter(want[i], F(np.inf))) if np.isfinite(x)]
            assert all(abs(Fraction(float(want[i])) - exact) <= abs(Fraction(float(x)) - exact) for x in near), i
        else:
            assert want[i] == 0 and np.signbit(want[i]) == (exact < 0), i
    assert want[0] == t and want[1] == 0 and want[2] == t and np.isinf(want[3]) and want[4] == np.finfo(F).max
    if not vk_device.limits.float64:
        pytest.skip("needs shaderFloat64")
    got = _run_glsl(vk_device.manager, lower(p, float64=True).glsl, [a, b, c, np.zeros_like(a)], 3)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (got, want)


def _fast_rows(a, b):
    ea, eb = (a.view(np.uint32) >> 23) & 0xFF, (b.view(np.uint32) >> 23) & 0xFF
    de = ea.astype(int) - eb.astype(int)
    (lo, hi), (dlo, dhi) = ieee.FAST_DIV_EB, ieee.FAST_DIV_DIFF
    return (ea >= ieee.FAST_DIV_MIN_EA) & (ea <= 254) & (eb >= lo) & (eb <= hi) & (de >= dlo) & (de <= dhi)


def _fma_rn(p, q, c):
    """fma correctly rounded to f32, elementwise: the product is exact in float64, TwoSum gives the
    sum's exact error, and a double sum on an f32 midpoint goes to the side the error points to."""
    P, C = p.astype(np.float64) * q.astype(np.float64), c.astype(np.float64)
    S = P + C
    bp = S - P
    err = (P - (S - bp)) + (C - bp)
    f = S.astype(F)
    fd = f.astype(np.float64)
    g = np.nextafter(f, np.where(S > fd, F(np.inf), F(-np.inf)).astype(F))
    gd = g.astype(np.float64)
    tie = (S != fd) & (np.abs(S - fd) == np.abs(gd - S)) & (err != 0) & ((err > 0) == (gd > S))
    return np.where(tie, g, f)


def _model(a, b, y_err):
    """The fast path in NumPy with a correctly rounded fma; the driver's 1/|b| off by `y_err` ULPs."""
    x, d = np.abs(a), np.abs(b)
    one = np.ones_like(d)
    y0 = ((F(1) / d).view(np.uint32).astype(np.int64) + y_err).astype(np.uint32).view(F)
    y1 = _fma_rn(_fma_rn(-d, y0, one), y0, y0)
    e1 = _fma_rn(-d, y1, one)
    un = np.where(e1 > 0, y1.view(np.uint32) + 1, y1.view(np.uint32) - 1).astype(np.uint32)
    e2 = _fma_rn(-un.view(F), d, one)
    y = np.where((e1 != 0) & (np.abs(e2) < np.abs(e1)), un, y1.view(np.uint32)).astype(np.uint32).view(F)
    q0 = x * y
    q1 = _fma_rn(_fma_rn(-q0, d, x), y, q0)
    return (q1.view(np.uint32) | ((a.view(np.uint32) ^ b.view(np.uint32)) & 0x80000000)).astype(np.uint32).view(F)


@pytest.mark.parametrize("y_err", [-2, 0, 1])
def test_model_on_mantissas_next_to_powers_of_two(y_err):
    """Dividends and divisors whose significands are within 32 ULP of 1 or of 2 (where 1/b and the
    quotient cross a binade: 1 / (1 - 2^-24) is the case a faithful correction gets wrong)."""
    m = np.concatenate([np.arange(32), (1 << 23) - 1 - np.arange(32)]).astype(np.uint32)
    exps = np.array([60, 127, 128, 200], np.uint32)
    vals = ((exps[:, None] << 23) | m[None, :]).ravel().view(F)
    a, b = (x.ravel() for x in np.meshgrid(vals, vals))
    a = np.concatenate([a, -a])
    b = np.concatenate([b, b])
    keep = _fast_rows(a, b)
    a, b = a[keep], b[keep]
    assert np.array_equal(_model(a, b, y_err).view(np.uint32), (a / b).view(np.uint32))


def test_fma_stand_in_is_correctly_rounded():
    rng = np.random.default_rng(9)
    p, q, c = (rng.standard_normal(4000).astype(F) for _ in range(3))
    c[:1000] = -(p[:1000] * q[:1000])  # cancellations: the residuals' case
    got = _fma_rn(p, q, c)
    from fractions import Fraction
    for i in range(0, 4000, 7):
        exact = Fraction(float(p[i])) * Fraction(float(q[i])) + Fraction(float(c[i]))
        g = got[i]
        lo, hi = np.nextafter(g, F(-np.inf)), np.nextafter(g, F(np.inf))
        dist = abs(Fraction(float(g)) - exact)
        assert dist <= abs(Fraction(float(lo)) - exact) and dist <= abs(Fraction(float(hi)) - exact), i


@pytest.mark.parametrize("y_err", [-3, 0, 2])
def test_model_of_the_fast_path_is_correctly_rounded_across_the_window(y_err):
    rng = np.random.default_rng(5 + y_err)
    a, b = _window_pairs(rng, 1 << 17)
    keep = _fast_rows(a, b)
    a, b = a[keep], b[keep]
    with np.errstate(all="ignore"):
        want = a / b  # NumPy's f32 division is correctly rounded
        got = _model(a, b, y_err)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert a.size > 50_000


def _native_fma_fused(mgr) -> bool:
    """Independent of the probe: does precise fma(a, b, -(a*b)) give a*b's rounding error?"""
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
void main() { uint i = gl_GlobalInvocationID.x; precise float p = a[i] * b[i]; precise float r = fma(a[i], b[i], -p); c[i] = r; }
"""
    rng = np.random.default_rng(3)
    a, b = (rng.random(64) + 1).astype(F), (rng.random(64) + 1).astype(F)
    tensors = [kp_bridge.tensor(mgr, x) for x in (a, b, np.zeros(64, F))]
    algo = kp_bridge.algorithm(mgr, tensors, spirv.compile_glsl(glsl, name="native-fma.comp"), (1, 1, 1))
    seq = mgr.sequence()
    seq.record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo)).record(
        kp_bridge.sync_local(tensors[2:])).eval()
    got = tensors[2].data().copy()
    for obj in (seq, algo, *tensors):
        obj.destroy()
    want = (a.astype(np.float64) * b - (a * b).astype(np.float64)).astype(F)  # exact error term
    return bool(np.array_equal(got.view(np.uint32), want.view(np.uint32)))


def test_probe_agrees_with_a_native_fma_check(vk_device):
    probe = fma_probe(vk_device.manager)
    assert probe.total == PROBE_CASES
    assert probe.passed == _native_fma_fused(vk_device.manager)
    assert vk_device.limits.fused_fma == probe.passed
    if not probe.passed:  # a doubly rounded fma gets many near-midpoint quotients wrong
        assert probe.correct < PROBE_CASES - 100


def test_probe_expectations_are_correctly_rounded():
    a, b, want = probe_cases()
    assert np.all(np.abs(want) >= np.finfo(F).tiny) and np.all(np.isfinite(want))  # as the reference rounds
    for k in range(0, PROBE_CASES, 37):
        exact = Fraction(float(a[k])) / Fraction(float(b[k]))
        lo = F(float(exact))  # nearest double, then float: check against both neighbours exactly
        cands = [np.nextafter(lo, F(-np.inf)), lo, np.nextafter(lo, F(np.inf))]
        best = min(cands, key=lambda c: (abs(Fraction(float(c)) - exact), int(np.array(c).view(np.uint32)) & 1))
        assert want[k].view(np.uint32) == np.array(best, F).view(np.uint32), k


def test_env_turns_the_probe_off(monkeypatch):
    from vyre_vk.runtime.device import DeviceError, fused_fma_wanted

    monkeypatch.setenv("VYRE_VK_FMA", "unfused")
    assert fused_fma_wanted() is False
    monkeypatch.setenv("VYRE_VK_FMA", "fused")
    with pytest.raises(DeviceError, match="Fix:"):
        fused_fma_wanted()
