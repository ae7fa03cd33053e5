"""The fused-fma fast division (vyre_vk.lower.ieee.FUSED) and the probe that enables it.
(FUSED's one-fma TwoProduct is checked on a fused device only: `vyre-vk run --all` on the H200.)

lavapipe's fma() rounds twice, so the fast path cannot run as is here. The first test runs
its exact GLSL text with each ``fma(`` replaced by ``vyre_fma(`` (exact whenever the result
is representable, as the residuals are, and within an ULP elsewhere, as q1 needs): that
checks the algorithm and its window on this device against the reference's bits. The probe
tests check that it reports what an independent fma shader measures, so a device whose
fma() rounds twice never gets the fast path.
"""
from fractions import Fraction

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


def test_fast_path_text_with_an_exact_fma_is_the_reference(vk_device):
    rng = np.random.default_rng(11)
    a1, b1 = _pairs(rng)
    a2, b2 = _window_pairs(rng)
    a, b = np.concatenate([a1, a2]), np.concatenate([b1, b2])
    # vyre_fma's split overflows above ~2^115 (then it calls the driver's fma): keep the fast
    # path's fma operands (a, b, 1/b, a/b) below 2^110 here; _model covers the window's top
    with np.errstate(all="ignore"):
        big = np.maximum.reduce([np.abs(a), np.abs(b), np.abs(F(1) / b), np.abs(a / b)])
    keep = ~_fast_rows(a, b) | (big < 2.0 ** 110)
    a, b = a[keep], b[keep]
    p = _div_and_fma(a.size)
    glsl = lower(p, fused_fma=True).glsl
    start = glsl.index("float vyre_fdiv(float a, float b)")
    end = glsl.index("if (!fast) q = vyre_fdiv_int(a, b);", start)
    fast = glsl[start:end]
    assert fast.count(" fma(") == 4 and "vyre_fma(" not in fast
    glsl = glsl[:start] + fast.replace(" fma(", " vyre_fma(") + glsl[end:]
    # vyre_fma's exactness rests on TwoProduct: give it back Veltkamp's split (no native fma)
    glsl = glsl.replace(ieee.FUSED["vyre_two_prod"], GLSL_HELPERS["vyre_two_prod"])
    assert "fma(a, b, -pp)" not in glsl
    assert glsl.index("float vyre_fma(") < start  # defined before the division calls it
    words = spirv.compile_glsl(glsl, name="fused-div-test.comp")
    mgr = vk_device.manager
    tensors = [kp_bridge.tensor(mgr, x) for x in (a, b, np.zeros_like(a), np.zeros_like(a))]
    algo = kp_bridge.algorithm(mgr, tensors, words, ((a.size + 63) // 64, 1, 1))
    seq = mgr.sequence()
    seq.record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo)).record(
        kp_bridge.sync_local(tensors[2:3])).eval()
    got = tensors[2].data().copy().view(F)
    for obj in (seq, algo, *tensors):
        obj.destroy()
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b, "f": np.zeros_like(a)})["out"]
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (bad.size, [hex(x) for x in a[bad[:5]].view(np.uint32)], [hex(x) for x in b[bad[:5]].view(np.uint32)], got[bad[:5]], want[bad[:5]])
    assert _fast_rows(a, b).mean() > 0.5  # the window really is exercised


def _fast_rows(a, b):
    ea, eb = (a.view(np.uint32) >> 23) & 0xFF, (b.view(np.uint32) >> 23) & 0xFF
    de = ea.astype(int) - eb.astype(int)
    (lo, hi), (dlo, dhi) = ieee.FAST_DIV_EB, ieee.FAST_DIV_DIFF
    return (ea >= ieee.FAST_DIV_MIN_EA) & (ea <= 254) & (eb >= lo) & (eb <= hi) & (de >= dlo) & (de <= dhi)


def _model(a, b, y_err):
    """The fast path in NumPy, fma exact (products of floats are exact in float64, and every
    residual's exact value fits in 24 bits); 1/|b| off by `y_err` ULPs, as a driver may be."""
    def fma(p, q, c):
        return (p.astype(np.float64) * q.astype(np.float64) + c.astype(np.float64)).astype(F)
    x, d = np.abs(a), np.abs(b)
    y = ((F(1) / d).view(np.uint32).astype(np.int64) + y_err).astype(np.uint32).view(F)
    q0 = x * y
    q1 = fma(fma(-q0, d, x), y, q0)
    r1 = fma(-q1, d, x)
    un = np.where(r1 > 0, q1.view(np.uint32) + 1, q1.view(np.uint32) - 1).astype(np.uint32)
    r2 = fma(-un.view(F), d, x)
    ur = np.where((r1 != 0) & (np.abs(r2) < np.abs(r1)), un, q1.view(np.uint32))
    return (ur | ((a.view(np.uint32) ^ b.view(np.uint32)) & 0x80000000)).astype(np.uint32).view(F)


@pytest.mark.parametrize("y_err", [-3, 0, 2])
def test_model_of_the_fast_path_is_correctly_rounded_across_the_window(y_err):
    rng = np.random.default_rng(5 + y_err)
    a, b = _window_pairs(rng, 1 << 17)
    keep = _fast_rows(a, b)
    a, b = a[keep], b[keep]
    with np.errstate(all="ignore"):
        want = (a.astype(np.float64) / b.astype(np.float64)).astype(F)  # innocuous double rounding
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
