"""The fast precision (docs/PRECISION.md): how it is asked for, what it lowers to, the native-math
probe that decides the builtins, and its accuracy contract against the float64 oracles.

Each op class is checked here on two random input sets per op (the suite's time budget);
``python -m tests.ops.precision`` runs every f32 op on the contract's ten (the table in the note).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import vyre_vk
from vyre_vk import reference
from vyre_vk.compile import Options, OptionsError
from vyre_vk.lower import lower
from vyre_vk.lower.fastmath import NATIVE_FUNCS, NATIVE_WINDOW_ULP, check_native, fast_table
from vyre_vk.ops import get
from vyre_vk.runtime import Device
from vyre_vk.runtime.native_math import PER_FUNC, NativeMathProbe, expected, measure, native_cases
from vyre_vk.testing.parity import FAST_EXTRA_ULP, assert_parity, compare, fast_distance

from tests.ops.precision import FAST_EXTRA_ULP as OP_FAST_EXTRA_ULP
from tests.ops.precision import fast_errors

GELU = "vyre-libs::nn::gelu"


def test_options_take_fast_and_refuse_other_precisions():
    assert Options(precision="fast").key != Options().key
    with pytest.raises(OptionsError, match="precision 'approx' is not available. Fix: use one of"):
        Options(precision="approx")
    assert OP_FAST_EXTRA_ULP == FAST_EXTRA_ULP  # one documented number


def test_fast_lowering_spells_plain_arithmetic_and_only_the_given_builtins():
    p = get(GELU).build()
    exact, fast = lower(p).glsl, lower(p, fast=True, native_math=("exp",)).glsl
    assert "precise float r = a + b" in exact and "return a + b;" not in exact
    assert "float vyre_fadd(float a, float b) { return a + b; }" in fast
    assert "precise float r = a + b" not in fast  # (tanh's exact helper keeps its own precise lines)
    assert "float vyre_canon(float x) { return x; }" in fast
    # gelu calls tanh: without "tanh" in native_math its exact helper stays
    assert "return tanh(x);" not in fast and "float vyre_tanh(float x) {" in fast
    assert "return tanh(x);" in lower(p, fast=True, native_math=("tanh",)).glsl
    with pytest.raises(ValueError, match="no native function named \\['cbrt'\\]"):
        fast_table(("cbrt",))
    assert check_native(["tanh", "div", "div"]) == ("div", "tanh")


def test_probe_measures_ulps_against_float64():
    a, b = native_cases()
    want = expected(a, b)
    assert measure(want) == NativeMathProbe(0, 0, 0, 0)
    got = want.copy()
    bits = got.view(np.uint32)
    for k, f in enumerate(NATIVE_FUNCS):  # one result of each function off by 3, 5, 7, 9 ULP
        i = k * PER_FUNC + 17
        bits[i] += 3 + 2 * k
    probe = measure(got)
    assert [getattr(probe, f) for f in NATIVE_FUNCS] == [3, 5, 7, 9]
    assert probe.allowed == ("div", "exp", "tanh")  # sqrt's 7 is over its 4-ULP window
    # the arguments span each function's range
    blocks = a.reshape(len(NATIVE_FUNCS), PER_FUNC)
    assert blocks[NATIVE_FUNCS.index("exp")].min() < -80 and blocks[NATIVE_FUNCS.index("exp")].max() > 80
    assert np.abs(blocks[NATIVE_FUNCS.index("tanh")]).min() < 1e-6


def test_probe_counts_subnormal_results_as_the_reference_does_and_covers_the_division_guard():
    a, b = native_cases()
    want = expected(a, b)
    div_b = np.abs(b[:PER_FUNC].astype(np.float64))
    assert (div_b > 2.0 ** 126).sum() == PER_FUNC // 16  # where Vulkan leaves division unbounded
    got = want.copy()
    tiny = np.flatnonzero((want[:PER_FUNC] != 0) & (np.abs(want[:PER_FUNC]) < np.finfo(np.float32).tiny))
    assert tiny.size  # the probe's quotients do reach the subnormal range
    got[tiny] = np.copysign(np.float32(0), want[tiny])  # a device that flushes them: 0 ULP, as exact mode
    assert measure(got).div == 0
    got[tiny[0]] = 1.0
    assert measure(got).div > NATIVE_WINDOW_ULP["div"]


def test_fast_division_is_native_only_where_vulkan_bounds_it(vk_device):
    """The guarded helper: ``a / b`` for |b| in [2^-126, 2^126], the exact helper elsewhere; on
    Vulkan, quotients by huge, infinite and NaN divisors match the reference."""
    from vyre_vk.ir import BinOp, BufferAccess, BufferDecl, DataType, Expr, Node, Program

    n = 8
    i = Expr.var("i")
    p = Program.wrapped([BufferDecl.storage("a", 0, BufferAccess.ReadOnly, DataType.F32).with_count(n),
                         BufferDecl.storage("b", 1, BufferAccess.ReadOnly, DataType.F32).with_count(n),
                         BufferDecl.output("q", 2, DataType.F32).with_count(n)], (n, 1, 1),
                        [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(n)), [
                            Node.store("q", i, Expr.binop(BinOp.Div, Expr.load("a", i), Expr.load("b", i)))])])
    glsl = lower(p, fast=True, native_math=("div",)).glsl
    assert "if (d >= 1.17549435e-38 && d <= 8.50705917e37) return a / b;" in glsl and "vyre_fdiv_exact(a, b)" in glsl
    big = np.float32(2.0 ** 127)
    x = {"a": np.float32([big, 3.0, 1.0, -7.0, big, 1.0, 0.0, 6.0]),
         "b": np.float32([big, big * 1.5, np.inf, 2.0, 0.5, np.nan, 5.0, -3.0])}
    want = reference.run(p, x)["q"]
    got = vk_device.compile(p, precision="fast").run(x)["q"]
    np.testing.assert_array_equal(got, want)  # NaN where NaN, infinities where infinities
    assert got[0] == 1.0 and got[1] == np.float32(3.0) / np.float32(big * 1.5)


def test_device_uses_the_builtins_its_probe_measured_within_the_windows(vk_device, monkeypatch):
    probe = vk_device.native_math()
    assert probe is not None and set(probe.allowed) <= set(NATIVE_FUNCS)
    for f in NATIVE_FUNCS:
        assert (f in probe.allowed) is (getattr(probe, f) <= NATIVE_WINDOW_ULP[f])
    glsl = vk_device.compile(get(GELU).build(), precision="fast").compiled.stages[0].glsl
    assert ("return tanh(x);" in glsl) is ("tanh" in probe.allowed)
    monkeypatch.setenv("VYRE_VK_NATIVE_MATH", "off")
    assert vk_device.native_math() is None
    softmax = vk_device.compile(get("vyre-libs::nn::softmax").build(), precision="fast")
    assert all("return exp(x);" not in s.glsl for s in softmax.compiled.stages)


@pytest.mark.parametrize("op", ["vyre-libs::hash::crc32", "vyre-libs::decode::hex", "vyre-libs::parsing::bracket_match",
                                "vyre-libs::nn::top_k", "vyre-libs::math::scan_prefix_sum", "vyre-libs::nn::embedding"])
def test_integer_results_stay_exact_in_the_fast_precision(vk_device, op):
    from vyre_vk.testing.vectors import check_op

    for case in check_op(get(op), vk_device, "fast"):
        assert case.ok
        assert case.vulkan.worst_ulps == 0 or get(op).ulp is not None


# one op per class: elementwise with exp/tanh, reductions and norms, dot products, attention
CLASSES = ["vyre-libs::nn::silu", GELU, "vyre-libs::nn::swiglu", "vyre-libs::nn::softmax", "vyre-libs::nn::rms_norm",
           "vyre-libs::nn::layer_norm", "vyre-libs::nn::cross_entropy", "vyre-libs::math::reduce_variance",
           "vyre-libs::math::reduce_mean", "vyre-libs::nn::linear_relu", "vyre-libs::nn::attention",
           "vyre-libs::nn::logit_softcap_backward"]


@pytest.mark.parametrize("op", CLASSES)
def test_fast_results_are_within_the_contract_against_float64(vk_device, op):
    r = fast_errors(op, vk_device, seeds=(0, 1))
    assert r.ints_equal
    assert r.fast <= r.window + OP_FAST_EXTRA_ULP, f"{op}: {r.fast} ULP of scale > {r.window} + {OP_FAST_EXTRA_ULP}"
    assert r.fast <= r.exact + OP_FAST_EXTRA_ULP


def test_fast_distance_ignores_flushed_subnormals_and_nan_payloads():
    e = np.array([0.0, 1.0, np.nan, 1.0, np.inf], np.float32)
    g = np.array([1e-40, 1.0 + 2 ** -22, np.float32(np.nan), np.nan, np.inf], np.float32)
    g[2:3].view(np.uint32)[0] = 0x7FC12345  # another NaN payload
    assert fast_distance(e, g).tolist() == [1, 2, 0, 2 ** 32, 0]


def test_run_assert_parity_and_the_marker_take_the_precision(vk_device):
    p = get("vyre-libs::nn::softmax").build_with(n=300)
    x = np.random.default_rng(3).standard_normal(300).astype(np.float32)
    want = reference.run(p, {"input": x})["output"]
    got = vyre_vk.run(p, {"input": x}, device=vk_device, precision="fast")["output"]
    assert compare(p, {"output": want}, {"output": got}, precision="fast").ok
    report = assert_parity(p, {"input": x}, device=vk_device, precision="fast")
    assert report.ulp == 128 + FAST_EXTRA_ULP
    with pytest.raises(OptionsError):
        assert_parity(p, {"input": x}, device=vk_device, precision="loose")


@pytest.mark.vyre_precision("fast")
def test_the_vyre_precision_marker_reaches_assert_parity(assert_parity):
    p = get(GELU).build_with(n=256)
    report = assert_parity(p, {"input": np.linspace(-6, 6, 256, dtype=np.float32)})
    assert report.ulp == 128 + FAST_EXTRA_ULP


def test_emit_records_the_precision_and_the_runner_checks_the_builtins(tmp_path, vk_device):
    from vyre_vk import aot
    from vyre_vk.cli import main

    x = np.linspace(-9, 9, 64, dtype=np.float32)
    want = reference.run(get(GELU).build(), {"input": x})["output"]
    assert main(["emit", GELU, "--device-class", "llvmpipe", "--precision", "fast", "--native-math", "exp",
                 "-o", str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["options"]["precision"] == "fast" and man["options"]["limits"]["native_math"] == ["exp"]
    assert man["native_probe"]["functions"] == ["exp"] and (tmp_path / man["native_probe"]["spirv"]).is_file()
    with aot.load(tmp_path, manager=vk_device.manager) as mod:
        got = mod.run({"input": x})["output"]
    assert compare(get(GELU).build(), {"output": want}, {"output": got}, precision="fast").ok
    # a folder that claims a builtin this device's probe puts outside its window is refused
    outside = [f for f in NATIVE_FUNCS if f not in vk_device.native_math().allowed]
    if outside:
        man["native_probe"]["functions"] = outside
        (tmp_path / "manifest.json").write_text(json.dumps(man))
        mod = aot.load(tmp_path, manager=vk_device.manager)
        with pytest.raises(aot.ManifestError, match=f"builtin {outside[0]}.*Fix: emit again with --native-math"):
            mod.run({"input": x})
    assert main(["emit", GELU, "--precision", "exact", "-o", str(tmp_path / "e")]) == 0
    man = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert man["options"]["precision"] == "exact" and man["native_probe"] is None


def test_cli_run_takes_the_precision(capsys):
    from vyre_vk.cli import main

    assert main(["run", "--precision", "fast", GELU]) == 0
    out = capsys.readouterr().out
    assert "fast precision, native-math probe:" in out and "all passed" in out


def test_exact_stays_the_default_everywhere(vk_device):
    p = get(GELU).build()
    assert vk_device.compile(p).compiled.options.precision == "exact"
    assert Options().precision == "exact"
    assert "precise" in vk_device.compile(p).compiled.stages[0].glsl
    assert isinstance(Device.compile.__kwdefaults__["precision"], str) and Device.compile.__kwdefaults__["precision"] == "exact"
