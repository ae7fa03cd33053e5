"""Speculative chains (vyre_vk.opt.speculate marks, vyre_vk.lower.speculate emits): which loops
qualify, and on Vulkan (lavapipe in CI) the reference's bits whether the checked loop's result is
kept or the exact re-run is needed. Each GPU test also runs the shader with its re-run removed
(a mutant), to show the inputs really exercise the path the test is about."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import reference, spirv
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ir import node as N
from vyre_vk.ir.chains import SPECULATE
from vyre_vk.ir.optable import BinOp
from vyre_vk.ir.walk import walk_nodes
from vyre_vk.lower import lower
from vyre_vk.ops import get
from vyre_vk.opt import PASS_NAMES, optimize
from vyre_vk.opt.speculate import speculate, speculating
from vyre_vk.runtime import kp_bridge

from ..lower.test_ieee import _pairs
from ..lower.test_ieee_fused import FMA_RN, _window_pairs
from .test_passes import reduction_programs, runnable

F, U = np.float32, np.uint32
RERUN = "if (vyre_sp_state == 0u)"


def _fold(n: int, lanes: int, op: BinOp = BinOp.Add, init: float = 0.0) -> Program:
    """out[i] = x[i] op x[lanes + i] op ... (n terms, left to right): one serial chain per lane."""
    i = Expr.gid_x()
    step = Node.assign("acc", Expr.binop(op, Expr.var("acc"),
                                         Expr.load("x", Expr.add(Expr.mul(Expr.var("m"), Expr.u32(lanes)), i))))
    return Program.wrapped(
        [BufferDecl.read("x", 0, DataType.F32).with_count(n * lanes),
         BufferDecl.output("out", 1, DataType.F32).with_count(lanes)], (64, 1, 1),
        [wrap_anonymous("t::fold", [Node.if_then(Expr.lt(i, Expr.u32(lanes)), [
            Node.let_bind("acc", Expr.f32(init)), Node.loop_for("m", Expr.u32(0), Expr.u32(n), [step]),
            Node.store("out", i, Expr.var("acc"))])])])


def _dot(n: int, lanes: int) -> Program:
    """out[i] = 1 + x[0][i] * y[0][i] + x[1][i] * y[1][i] + ... (in order): one chain per lane."""
    m, i = Expr.var("m"), Expr.gid_x()
    at = Expr.add(Expr.mul(m, Expr.u32(lanes)), i)
    return Program.wrapped(
        [BufferDecl.read("x", 0, DataType.F32).with_count(n * lanes),
         BufferDecl.read("y", 1, DataType.F32).with_count(n * lanes),
         BufferDecl.output("out", 2, DataType.F32).with_count(lanes)], (64, 1, 1),
        [wrap_anonymous("t::dot", [Node.if_then(Expr.lt(i, Expr.u32(lanes)), [
            Node.let_bind("acc", Expr.f32(1.0)),
            Node.loop_for("m", Expr.u32(0), Expr.u32(n), [
                Node.assign("acc", Expr.add(Expr.var("acc"), Expr.mul(Expr.load("x", at), Expr.load("y", at))))]),
            Node.store("out", i, Expr.var("acc"))])])])


def _marked(p: Program) -> int:
    return sum(isinstance(n, N.Region) and n.generator == SPECULATE for n in walk_nodes(p.entry))


def _run_glsl(dev, glsl: str, arrays: list, out: int, groups: int) -> np.ndarray:
    return _run_glsl_all(dev, glsl, arrays, groups)[out].view(F)


def _run_glsl_all(dev, glsl: str, arrays: list, groups: int) -> list[np.ndarray]:
    """Every binding's contents after one dispatch of `glsl` (binding k = arrays[k])."""
    mgr = dev.manager
    tensors = [kp_bridge.tensor(mgr, a) for a in arrays]
    algo = kp_bridge.algorithm(mgr, tensors, spirv.compile_glsl(glsl, name="speculate-test.comp"), (groups, 1, 1))
    seq = mgr.sequence()
    seq.record(kp_bridge.sync_device(tensors)).record(kp_bridge.dispatch(algo)).record(
        kp_bridge.sync_local(tensors)).eval()
    got = [t.data().copy().view(a.dtype) for t, a in zip(tensors, arrays)]
    for obj in (seq, algo, *tensors):
        obj.destroy()
    return got


# ----------------------------------------------------------------------------- which loops
@pytest.mark.parametrize("op,kw,chain", [
    ("vyre-libs::math::reduce_variance", dict(n=4096), "M1_i, M2_i"),
    ("vyre-libs::nn::rms_norm", dict(n=4096), "local_sum"),
    ("vyre-libs::nn::linear_relu", dict(in_dim=64, out_dim=32), "acc"),
])
def test_marks_the_registered_folds(op, kw, chain):
    graph, reports = optimize(get(op).build_with(**kw), device_class="nvidia")
    r = next(r for r in reports if r.name == "speculate")
    assert r.changed and f"chain {chain} in IEEE f32" in r.why, r.why
    assert sum(_marked(s) for s in graph.stages) >= 1
    assert not any(r.name == "speculate" and r.changed
                   for r in optimize(get(op).build_with(**kw), precision="fast")[1])


def test_refuses_loops_whose_rerun_or_chain_is_unsafe():
    assert _marked(speculate(_fold(8, 1))[0]) == 1
    assert _marked(speculate(_fold(8, 1, BinOp.Min))[0]) == 0  # no add, sub, mul or div on the chain
    p = _fold(8, 1)
    stored = speculate(Program.wrapped(p.buffers, (64, 1, 1), [wrap_anonymous("t::s", [
        Node.let_bind("acc", Expr.f32(0.0)), Node.loop_for("m", Expr.u32(0), Expr.u32(8), [
            Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("x", Expr.var("m")))),
            Node.store("out", Expr.u32(0), Expr.var("acc"))])])]))[0]
    assert _marked(stored) == 0  # a store inside: a re-run would repeat it
    ints = Program.wrapped([BufferDecl.read("x", 0, DataType.U32).with_count(8),
                            BufferDecl.output("out", 1, DataType.U32).with_count(1)], (64, 1, 1),
                           [wrap_anonymous("t::u", [
                               Node.let_bind("acc", Expr.u32(0)), Node.loop_for("m", Expr.u32(0), Expr.u32(8), [
                                   Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("x", Expr.var("m"))))]),
                               Node.store("out", Expr.u32(0), Expr.var("acc"))])])
    assert _marked(speculate(ints)[0]) == 0  # integer chains are exact already
    m, x = Expr.var("acc"), Expr.load("x", Expr.var("m"))
    online = Program.wrapped(p.buffers, (64, 1, 1), [wrap_anonymous("t::max", [
        Node.let_bind("acc", Expr.f32(0.0)), Node.let_bind("s", Expr.f32(0.0)),
        Node.loop_for("m", Expr.u32(0), Expr.u32(8), [
            Node.let_bind("new", Expr.select(Expr.gt(x, m), x, m)),  # a running max, as flash_attention's
            Node.assign("s", Expr.add(Expr.var("s"), Expr.sub(m, Expr.var("new")))),
            Node.assign("acc", Expr.var("new"))]),
        Node.store("out", Expr.u32(0), Expr.var("s"))])])
    assert _marked(speculate(online)[0]) == 0  # m - max(m, x) is mostly an exact zero: every run would re-run


def test_knob(monkeypatch):
    monkeypatch.setenv("VYRE_VK_SPECULATE", "0")
    assert not speculating("nvidia", "exact")
    monkeypatch.setenv("VYRE_VK_SPECULATE", "1")
    assert speculating("nvidia", "exact") and not speculating("nvidia", "fast")


# ----------------------------------------------------------------------------- bits on Vulkan
def _fold_cases(rng, n: int, lanes: int, op: BinOp) -> np.ndarray:
    """Per lane: plain values (lane 0: the checked loop's result stands), then chains that pass
    through subnormals, exact zeros, -0, infinities and NaN (the exact re-run decides)."""
    if op is BinOp.Mul:
        x = (F(1.0) + F(0.1) * rng.standard_normal((n, lanes))).astype(F)
        x[1, 1], x[2, 1] = F(2.0 ** -130), F(2.0 ** 20)   # IEEE 2^-110 (about), the reference 0
        x[1, 2] = F(0.0)
        x[3, 3] = np.inf
        x[3, 4], x[5, 4] = np.inf, F(0.0)                  # NaN
        x[1, 5] = F(-0.0)
        return x.reshape(-1)
    x = rng.standard_normal((n, lanes)).astype(F)
    x[:, 1] = 0.0
    x[1:4, 1] = [F(2.0 ** -127), F(2.0 ** -126), F(2.0 ** -124)]  # IEEE 5.5 * 2^-126, the reference 5 * 2^-126
    x[:, 2] = -0.0
    x[:3, 3] = [F(0.0), F(5.0), F(-5.0)]  # an exact zero mid-chain (5 - 5 too: a - b for sub)
    x[4, 4] = np.inf
    x[4, 5], x[6, 5] = np.inf, -np.inf  # NaN (sub: -inf - -inf)
    x[:, 6] = F(2.0 ** -130)  # subnormal terms: the reference's sum stays 0, IEEE's grows to normal
    return x.reshape(-1)


@pytest.mark.parametrize("op", [BinOp.Add, BinOp.Sub, BinOp.Mul])
def test_checked_loop_and_rerun_give_the_reference_bits(vk_device, monkeypatch, op):
    monkeypatch.setenv("VYRE_VK_SPEC_RAW", "0")  # loads flushed: the re-run at zero (raw loads: test_speculate_absorb)
    n, lanes = 40, 64
    p = _fold(n, lanes, op, init=1.0 if op is BinOp.Mul else 0.0)
    x = _fold_cases(np.random.default_rng(3), n, lanes, op)
    want = reference.run(p, {"x": x})["out"].view(U)
    k = vk_device.compile(p)
    assert _marked(k.compiled.stages[0].program) >= 1  # unroll may leave a block loop and a rest loop
    assert k.run({"x": x})["out"].view(U).tolist() == want.tolist()
    # mutants: (1) a kept checked result is scaled by 1.5: the lanes whose chain met a zero or a
    # subnormal (lavapipe flushes subnormal results to zero) were re-run exactly and still give the
    # reference's bits, the others do not; (2) always re-run: the saved values restore every lane
    glsl = lower(speculate(p)[0]).glsl
    kept = "v_acc = vyre_canon(v_acc);"
    assert glsl.count(RERUN) == 1 and glsl.count(kept) == 1
    special = [1, 2, 5] if op is BinOp.Mul else [1, 2, 3, 6]
    got = _run_glsl(vk_device, glsl.replace(kept, "v_acc = vyre_canon(v_acc) * 1.5;"), [x, np.zeros(lanes, F)], 1, 1)
    assert got.view(U)[special].tolist() == want[special].tolist() and got.view(U)[0] != want[0]
    got = _run_glsl(vk_device, glsl.replace(RERUN, "if (true)"), [x, np.zeros(lanes, F)], 1, 1)
    assert got.view(U).tolist() == want.tolist()


def test_division_on_the_chain_with_a_fused_fma(vk_device):
    """vyre_sp_div (a device whose fma is fused) with lavapipe's fma replaced by a correctly rounded
    one: acc = a / 1 (the exact first iteration), then acc / b, speculated."""
    if not vk_device.limits.float64:
        pytest.skip("the correctly rounded fma stand-in needs shaderFloat64")
    rng = np.random.default_rng(5)
    a1, b1 = _pairs(rng)
    a2, b2 = _window_pairs(rng, 1 << 14)
    a, b = np.concatenate([a1[::4], a2]), np.concatenate([b1[::4], b2])
    n = a.size
    i = Expr.gid_x()
    step = Node.assign("acc", Expr.binop(BinOp.Div, Expr.var("acc"),
                                         Expr.load("b", Expr.add(Expr.mul(i, Expr.u32(2)), Expr.var("j")))))
    p = Program.wrapped(
        [BufferDecl.read("a", 0, DataType.F32).with_count(n), BufferDecl.read("b", 1, DataType.F32).with_count(2 * n),
         BufferDecl.output("out", 2, DataType.F32).with_count(n)], (64, 1, 1),
        [wrap_anonymous("t::div", [Node.if_then(Expr.lt(i, Expr.u32(n)), [
            Node.let_bind("acc", Expr.load("a", i)), Node.loop_for("j", Expr.u32(0), Expr.u32(2), [step]),
            Node.store("out", i, Expr.var("acc"))])])])
    bb = np.stack([np.ones(n, F), b], axis=1).reshape(-1)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": bb})["out"].view(U)
    glsl = lower(speculate(p)[0], fused_fma=True).glsl
    assert "vyre_sp_div(" in glsl
    start = glsl.index("float vyre_rcp_rn(float d)")
    body = glsl[:start] + FMA_RN + re.sub(r"\bfma\(", "vk_fma_rn(", glsl[start:])
    groups = (n + 63) // 64
    got = _run_glsl(vk_device, body, [a, bb, np.zeros(n, F)], 2, groups).view(U)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (bad.size, a[bad[:4]], b[bad[:4]])
    # without the re-run: still exact wherever the quotient stayed in the window (the speculation's
    # claim), and wrong somewhere outside it (so the re-run above was needed)
    mutant = _run_glsl(vk_device, body.replace(RERUN, "if (false)"), [a, bb, np.zeros(n, F)], 2, groups).view(U)
    inside = _in_window(a, b)
    assert inside.mean() > 0.3 and (mutant[inside] == want[inside]).all()
    assert (mutant[~inside] != want[~inside]).any()


def _in_window(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from vyre_vk.lower.ieee import FAST_DIV_DIFF, FAST_DIV_EB, FAST_DIV_MIN_EA
    ea = (a.view(U) >> 23) & 0xFF
    eb = (b.view(U) >> 23) & 0xFF
    de = ea.astype(np.int64) - eb.astype(np.int64)
    with np.errstate(all="ignore"):
        q = (a / b).view(U) & 0x7F800000
    return ((ea >= FAST_DIV_MIN_EA) & (ea <= 254) & (eb >= FAST_DIV_EB[0]) & (eb <= FAST_DIV_EB[1])
            & (de >= FAST_DIV_DIFF[0]) & (de <= FAST_DIV_DIFF[1]) & (q != 0))


FIRED: list = []


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(reduction_programs(), st.integers(0, 3))
def test_random_reductions_on_vulkan(vk_device, program, seed):
    inputs = runnable(program, seed)
    if inputs is None:
        return
    want = reference.run(program, inputs)
    on = vk_device.compile(program)
    FIRED.append(any(_marked(s.program) for s in on.compiled.stages))
    off = vk_device.compile(program, optimize=set(PASS_NAMES) - {"speculate"})
    a, b = on.run(inputs), off.run(inputs)
    for name, w in want.items():
        assert a[name].view(U if a[name].dtype.itemsize == 4 else np.uint8).tolist() == \
            w.view(U if w.dtype.itemsize == 4 else np.uint8).tolist()
        assert b[name].tobytes() == a[name].tobytes()


def test_speculation_fired_on_random_reductions():
    if not FIRED:
        pytest.skip("runs after test_random_reductions_on_vulkan")
    assert sum(FIRED) >= 5, f"fired in {sum(FIRED)} of {len(FIRED)}"


def test_stored_values_checked_and_recomputed(vk_device):
    """An elementwise value (a * b + a, then * c): computed in IEEE f32 and checked, exactly again
    where a zero or subnormal appeared; a mutant scaling the kept value shows which lanes re-ran."""
    n = 256
    i = Expr.gid_x()
    a, b, c = (Expr.load(x, i) for x in "abc")
    value = Expr.mul(Expr.add(Expr.mul(a, b), a), c)
    p = Program.wrapped([BufferDecl.read(x, k, DataType.F32).with_count(n) for k, x in enumerate("abc")]
                        + [BufferDecl.output("out", 3, DataType.F32).with_count(n)], (64, 1, 1),
                        [wrap_anonymous("t::map", [Node.if_then(Expr.lt(i, Expr.u32(n)), [
                            Node.store("out", i, value)])])])
    q, why = speculate(p)
    assert _marked(q) == 1 and why.startswith("1 stored value(s)")
    rng = np.random.default_rng(9)
    x = {k: rng.standard_normal(n).astype(F) for k in "abc"}
    x["a"][1], x["b"][1] = F(2.0 ** -70), F(2.0 ** -70)   # a subnormal product
    x["a"][2] = F(0.0)                                    # zero products and sums
    x["b"][3], x["a"][3] = F(-1.0), F(1.0)                # a * b + a = 0
    x["c"][4] = F(2.0 ** -135)                            # a subnormal result
    want = reference.run(p, x)["out"].view(U)
    k = vk_device.compile(p)
    assert k.run(x)["out"].view(U).tolist() == want.tolist()
    glsl = lower(q).glsl
    kept = re.search(r"float (vk_spv\d+) = (.*);\n", glsl)
    assert kept and glsl.count(RERUN) == 1
    mutant = glsl.replace(kept.group(0), f"float {kept.group(1)} = ({kept.group(2)}) * 1.5;\n")
    got = _run_glsl(vk_device, mutant, [x["a"], x["b"], x["c"], np.zeros(n, F)], 3, n // 64).view(U)
    assert got[1:5].tolist() == want[1:5].tolist() and got[0] != want[0]


def test_division_by_a_cast_u32_takes_the_narrow_window(vk_device, monkeypatch):
    """By default (VYRE_VK_SPEC_DIV_U32=0: not) a chain's division by float(u) for a u32 u is vyre_sp_div_u (no sign
    steps, the window 50 <= ea <= 252 and b != 0, which imply vyre_fdiv_window for such divisors),
    run here with lavapipe's fma replaced by a correctly rounded one: the reference's bits for
    divisors 0, 1, 2^24, 2^32 - 256 and random ones up to 2^32, dividends across the exponent range;
    without the re-run, exact wherever the narrow window held, and wrong somewhere outside it.
    Divisors keep at most 24 significant bits: the stand-in computes in double, and lavapipe's
    compiler then converts a wider u32 straight to double, skipping float()'s rounding (the exact,
    non-speculative division shows the same 1-ULP differences there; on a GPU fma is native)."""
    if not vk_device.limits.float64:
        pytest.skip("the correctly rounded fma stand-in needs shaderFloat64")
    rng = np.random.default_rng(11)
    a1, _ = _pairs(rng)
    ea = rng.integers(0, 256, 1 << 13)
    a2 = ((rng.integers(0, 2, ea.size) << 31) | (ea << 23) | rng.integers(0, 1 << 23, ea.size)).astype(U).view(F)
    a = np.concatenate([a1[::8], a2])
    n = a.size
    u = rng.integers(0, 1 << 32, 2 * n, dtype=np.uint64).astype(U)
    u &= ~((1 << np.maximum(np.floor(np.log2(np.maximum(u, 1))).astype(np.int64) - 23, 0)) - 1).astype(U)
    u[::2] = 1  # the exact first iteration divides by 1
    u[1:64:2] = [0, 1, 1 << 24, 0xFFFFFF00] * 8
    u[65:4000:2] = rng.integers(1, 65537, len(range(65, 4000, 2)))  # Welford's counts
    i = Expr.gid_x()
    div = Expr.binop(BinOp.Div, Expr.var("acc"), Expr.cast(DataType.F32, Expr.load("u", Expr.add(
        Expr.mul(i, Expr.u32(2)), Expr.var("j")))))
    p = Program.wrapped(
        [BufferDecl.read("a", 0, DataType.F32).with_count(n), BufferDecl.read("u", 1, DataType.U32).with_count(2 * n),
         BufferDecl.output("out", 2, DataType.F32).with_count(n)], (64, 1, 1),
        [wrap_anonymous("t::div_u", [Node.if_then(Expr.lt(i, Expr.u32(n)), [
            Node.let_bind("acc", Expr.load("a", i)), Node.loop_for("j", Expr.u32(0), Expr.u32(2), [Node.assign("acc", div)]),
            Node.store("out", i, Expr.var("acc"))])])])
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "u": u})["out"].view(U)
    monkeypatch.delenv("VYRE_VK_SPEC_DIV_U32", raising=False)
    glsl = lower(speculate(p)[0], fused_fma=True).glsl  # on by default
    assert "vyre_sp_div_u(" in glsl and "vyre_sp_div(" not in glsl
    monkeypatch.setenv("VYRE_VK_SPEC_DIV_U32", "0")
    assert "vyre_sp_div_u(" not in lower(speculate(p)[0], fused_fma=True).glsl  # the knob turns it off
    start = glsl.index("float vyre_rcp_rn(float d)")
    body = glsl[:start] + FMA_RN + re.sub(r"\bfma\(", "vk_fma_rn(", glsl[start:])
    groups = (n + 63) // 64
    got = _run_glsl(vk_device, body, [a, u, np.zeros(n, F)], 2, groups).view(U)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (bad.size, a[bad[:4]], u[1::2][bad[:4]])
    mutant = _run_glsl(vk_device, body.replace(RERUN, "if (false)"), [a, u, np.zeros(n, F)], 2, groups).view(U)
    ea_a = (a.view(U) >> 23) & 0xFF
    with np.errstate(all="ignore"):
        q = (a / u[1::2].astype(F)).view(U) & 0x7F800000
    inside = (ea_a >= 50) & (ea_a <= 252) & (u[1::2] != 0) & (q != 0)
    assert inside.mean() > 0.3 and (mutant[inside] == want[inside]).all()
    assert (mutant[~inside] != want[~inside]).any()


def test_the_narrow_window_implies_the_general_one_for_every_u32_divisor():
    """The proof behind vyre_sp_div_u, exhaustively over exponent fields: for b = float(x), x a u32,
    eb is 0 (x = 0) or in [127, 159]; with b != 0 and 50 <= ea <= 252, vyre_fdiv_window holds."""
    from vyre_vk.lower.ieee import FAST_DIV_DIFF, FAST_DIV_EB, FAST_DIV_MIN_EA
    from vyre_vk.lower.speculate import SPECULATIVE_FUSED
    lo, span = (int(v) for v in re.search(r"- (\d+)u <= (\d+)u && b != 0\.0", SPECULATIVE_FUSED["vyre_sp_div_u"]).groups())
    xs = np.array([0, 1, 2, 3, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, 0xFFFFFF7F, 0xFFFFFF80, 0xFFFFFFFF]
                  + [1 << k for k in range(32)], np.uint64)
    ebs = sorted({int((np.float32(x).view(U) >> 23) & 0xFF) for x in xs})
    assert ebs[0] == 0 and ebs[1] == 127 and ebs[-1] == 159
    for eb in ebs[1:]:
        for ea in range(lo, lo + span + 1):  # the helper's own constants
            de = ea - eb
            assert (FAST_DIV_MIN_EA <= ea <= 254 and FAST_DIV_EB[0] <= eb <= FAST_DIV_EB[1]
                    and FAST_DIV_DIFF[0] <= de <= FAST_DIV_DIFF[1]), (ea, eb)


def test_value_products_rerun_only_on_subnormal_or_nan(vk_device, monkeypatch):
    """VYRE_VK_SPEC_MULV=1: a speculative loop's x * y of non-chain values is IEEE's product, checked
    for a subnormal or NaN result only. acc = 1 + x0*y0 + x1*y1 + ... per lane; a mutant scaling the
    kept result shows which lanes re-ran: the subnormal and NaN products' lanes did, the zero, -0 and
    plain ones did not (dropping the subnormal check, or flagging zeros as vyre_sp_mul does, fails)."""
    n, lanes = 40, 64
    p = _dot(n, lanes)
    rng = np.random.default_rng(5)
    x = (F(2.0 ** -20) * rng.standard_normal((n, lanes))).astype(F)  # sums stay near 1: never zero
    y = rng.standard_normal((n, lanes)).astype(F)
    x[3, 1] = F(0.0)                                    # a zero product
    x[3, 2], y[3, 2] = F(-0.0), F(5.0)                  # -0
    x[3, 3], y[3, 3] = F(2.0 ** -70), F(2.0 ** -60)     # 2^-130: subnormal (the reference: 0)
    x[3, 4], y[3, 4] = np.inf, F(0.0)                   # NaN
    x, y = x.reshape(-1), y.reshape(-1)
    want = reference.run(p, {"x": x, "y": y})["out"].view(U)
    monkeypatch.setenv("VYRE_VK_SPEC_MULV", "1")
    monkeypatch.setenv("VYRE_VK_SPEC_ABSORB", "0")  # else the chain's add absorbs the product (test below)
    glsl = lower(speculate(p)[0]).glsl
    assert "vyre_sp_mulv(" in glsl and "vyre_fmul(" in glsl  # the exact first iteration and re-run keep vyre_fmul
    arrays = [x, y, np.zeros(lanes, F)]
    assert _run_glsl(vk_device, glsl, arrays, 2, 1).view(U).tolist() == want.tolist()
    kept = "v_acc = vyre_canon(v_acc);"
    assert glsl.count(kept) == 1
    got = _run_glsl(vk_device, glsl.replace(kept, "v_acc = vyre_canon(v_acc) * 1.5;"), arrays, 2, 1).view(U)
    reran = got == want
    assert reran[[3, 4]].all() and not reran[[0, 1, 2, 5]].any(), reran[:6]
    monkeypatch.setenv("VYRE_VK_SPEC_MULV", "0")
    assert "vyre_sp_mulv(" not in lower(speculate(p)[0]).glsl


@pytest.mark.parametrize("op", [BinOp.Add, BinOp.Mul])
def test_rotating_states_give_the_reference_bits(vk_device, monkeypatch, op):
    """VYRE_VK_SPEC_STATES=3: the checks rotate through three running minima, combined after the
    loop; the lanes whose chain met a zero, subnormal, infinity or NaN still re-run (the kept-value
    mutant shows which), the plain lane does not."""
    n, lanes = 40, 64
    p = _fold(n, lanes, op, init=1.0 if op is BinOp.Mul else 0.0)
    x = _fold_cases(np.random.default_rng(3), n, lanes, op)
    want = reference.run(p, {"x": x})["out"].view(U)
    monkeypatch.setenv("VYRE_VK_SPEC_STATES", "3")
    monkeypatch.setenv("VYRE_VK_SPEC_RAW", "0")  # the re-run at zero
    glsl = lower(speculate(p)[0]).glsl
    assert "if (min(min(vyre_sp_state0, vyre_sp_state1), vyre_sp_state2) == 0u)" in glsl
    assert "_s0(" in glsl  # one checked operation per iteration here; unrolled, below, they rotate
    assert _run_glsl(vk_device, glsl, [x, np.zeros(lanes, F)], 1, 1).view(U).tolist() == want.tolist()
    kept = "v_acc = vyre_canon(v_acc);"
    special = [1, 2, 5] if op is BinOp.Mul else [1, 2, 3, 6]
    got = _run_glsl(vk_device, glsl.replace(kept, "v_acc = vyre_canon(v_acc) * 1.5;"), [x, np.zeros(lanes, F)], 1, 1)
    assert got.view(U)[special].tolist() == want[special].tolist() and got.view(U)[0] != want[0]
    monkeypatch.setenv("VYRE_VK_SPEC_STATES", "9")
    with pytest.raises(Exception, match="Fix:"):
        lower(speculate(p)[0])


def test_every_rotating_state_is_checked(vk_device, monkeypatch):
    """Unrolled (all passes), consecutive checked additions use consecutive states: lanes 1-3 sum
    to an exact zero at steps 100, 101, 102 (one site each, so one state each); with the kept value
    scaled (a mutant) exactly those lanes give the reference's bits, so each state's check re-ran
    its lane (a check reading only some of the states fails)."""
    n, lanes = 256, 64
    p = _fold(n, lanes)
    x = np.random.default_rng(4).standard_normal((n, lanes)).astype(F)
    for lane, pos in ((1, 100), (2, 101), (3, 102)):
        acc = F(0)
        for m in range(pos):
            acc = F(acc + x[m, lane])
        x[pos, lane] = -acc
    x = x.reshape(-1)
    want = reference.run(p, {"x": x})["out"].view(U)
    monkeypatch.setenv("VYRE_VK_SPEC_STATES", "3")
    k = vk_device.compile(p)
    assert len(k.compiled.stages) == 1 and all(f"vyre_sp_add_s{j}(" in k.glsl for j in range(3))
    assert k.run({"x": x})["out"].view(U).tolist() == want.tolist()
    kept = "v_acc = vyre_canon(v_acc);"
    assert kept in k.glsl
    groups = k.grids_for({"x": x, "out": np.zeros(lanes, F)})[0][0]
    got = _run_glsl(vk_device, k.glsl.replace(kept, "v_acc = vyre_canon(v_acc) * 1.5;"), [x, np.zeros(lanes, F)], 1, groups)
    reran = got.view(U) == want
    assert reran[[1, 2, 3]].all() and not reran[[0, 4, 5]].any(), reran[:6]
