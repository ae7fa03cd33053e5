"""Every registered op: vectors present, a NumPy oracle, the ULP window vyre would use, the
buffer interface and workgroup of vyre's builder, and a random run >= 10x its vector."""
import importlib

import numpy as np
import pytest

from vyre_vk import ops
from vyre_vk.ir import BufferAccess as A, DataType as T
from vyre_vk.testing.parity import ulp_budget

from .measure import registered_elements
from .oracles import ORACLES

# vyre-harness/src/lib.rs explicit_tolerance_for_id (ids this package registers)
VYRE_EXPLICIT_ULP = {"vyre-libs::nn::layer_norm": 1, "vyre-libs::nn::silu": 1,
                     "vyre-libs::nn::logit_softcap": 2, "vyre-libs::nn::rms_norm": 2,
                     "vyre-libs::nn::rms_norm_linear": 2}

RO, RW = A.ReadOnly, A.ReadWrite
OUT, WG = "out", "wg"
# vyre builder interface at the registered size: workgroup, then (name, binding, access, dtype, count)
# per buffer in declaration order. OUT = BufferDecl::output, WG = workgroup (binding unused).
INTERFACE = {
    "vyre-libs::nn::relu": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("output", 1, OUT, T.U32, 4)]),
    "vyre-libs::nn::leaky_relu_sq": ((64, 1, 1), [("input", 0, RO, T.F32, 4), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::silu": ((64, 1, 1), [("input", 0, RO, T.F32, 4), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::gelu": ((64, 1, 1), [("input", 0, RO, T.F32, 4), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::logit_softcap": ((64, 1, 1), [("input", 0, RO, T.F32, 4), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::skip_gate": ((64, 1, 1), [("gate", 0, RO, T.F32, 2), ("branch", 1, RO, T.F32, 2),
                                              ("skip", 2, RO, T.F32, 2), ("output", 3, OUT, T.F32, 2)]),
    "vyre-libs::nn::embedding": ((64, 1, 1), [("table", 0, RO, T.F32, 0), ("tokens", 1, RO, T.U32, 2),
                                              ("output", 2, OUT, T.F32, 6)]),
    "vyre-libs::nn::cross_entropy": ((256, 1, 1), [
        ("logits", 0, RO, T.F32, 8), ("targets", 1, RO, T.U32, 2), ("ce_scratch", 0, WG, T.F32, 256),
        ("ce_max_logit", 0, WG, T.F32, 1), ("ce_target_logit", 0, WG, T.F32, 1), ("loss", 2, OUT, T.F32, 512)]),
    "vyre-libs::nn::parallel_residual_block": ((64, 1, 1), [
        ("x", 0, RO, T.F32, 4), ("attn", 1, RO, T.F32, 4), ("mlp", 2, RO, T.F32, 4), ("out", 3, OUT, T.F32, 4)]),
    "vyre-libs::nn::mlp_4x_leaky_sq": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 2), ("w1", 1, RO, T.F32, 8), ("b1", 2, RO, T.F32, 4), ("w2", 3, RO, T.F32, 8),
        ("b2", 4, RO, T.F32, 2), ("out", 5, OUT, T.F32, 2), ("__mlp_4x_leaky_sq_hidden", 0, WG, T.F32, 4)]),
    "vyre-libs::nn::mlp_4x_leaky_sq::hidden_projection": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 2), ("w1", 1, RO, T.F32, 8), ("b1", 2, RO, T.F32, 4),
        ("__mlp_4x_leaky_sq_hidden", 3, OUT, T.F32, 4)]),
    "vyre-libs::nn::mlp_4x_leaky_sq::output_projection": ((256, 1, 1), [
        ("w2", 0, RO, T.F32, 8), ("b2", 1, RO, T.F32, 2), ("__mlp_4x_leaky_sq_hidden", 2, RO, T.F32, 4),
        ("out", 3, OUT, T.F32, 2)]),
    "vyre-libs::nn::mlp_backward": ((64, 1, 1), [
        ("x", 0, RO, T.F32, 2), ("w1", 1, RO, T.F32, 4), ("b1", 2, RO, T.F32, 2), ("w2", 3, RO, T.F32, 4),
        ("grad_out", 4, RO, T.F32, 2), ("grad_x", 5, OUT, T.F32, 2)]),
    "vyre-libs::nn::leaky_relu_sq_backward": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("grad_out", 1, RO, T.F32, 4), ("grad_in", 2, OUT, T.F32, 4)]),
    "vyre-libs::nn::logit_softcap_backward": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("grad_out", 1, RO, T.F32, 4), ("grad_in", 2, OUT, T.F32, 4)]),
    "vyre-libs::nn::skip_gate_backward": ((64, 1, 1), [
        ("gate", 0, RO, T.F32, 2), ("branch", 1, RO, T.F32, 2), ("skip", 2, RO, T.F32, 2),
        ("grad_out", 3, RO, T.F32, 2), ("grad_gate", 4, OUT, T.F32, 2)]),
    "vyre-libs::nn::qk_gain_backward": ((64, 1, 1), [
        ("gain", 0, RO, T.F32, 2), ("grad_out", 1, RO, T.F32, 4), ("grad_q", 2, OUT, T.F32, 4)]),
    "vyre-libs::nn::ln_scale_backward": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("scale", 1, RO, T.F32, 4), ("grad_out", 2, RO, T.F32, 4),
        ("grad_x", 3, OUT, T.F32, 4), ("grad_scale", 4, RW, T.F32, 4)]),
    "vyre-libs::nn::residual_block_backward": ((64, 1, 1), [
        ("grad_out", 0, RO, T.F32, 4), ("grad_x", 1, OUT, T.F32, 4), ("grad_attn", 2, RW, T.F32, 4),
        ("grad_mlp", 3, RW, T.F32, 4)]),
    "vyre-libs::nn::partial_rope_backward": ((64, 1, 1), [
        ("grad_out", 0, RO, T.F32, 4), ("cos", 1, RO, T.F32, 1), ("sin", 2, RO, T.F32, 1),
        ("grad_in", 3, OUT, T.F32, 4)]),
    "vyre-libs::nn::linear_relu": ((64, 1, 1), [
        ("x", 0, RO, T.F32, 4), ("w", 1, RO, T.F32, 16), ("b", 2, RO, T.F32, 4), ("out", 3, OUT, T.F32, 4)]),
    "vyre-libs::nn::linear_silu": ((64, 1, 1), [
        ("x", 0, RO, T.F32, 4), ("w", 1, RO, T.F32, 16), ("b", 2, RO, T.F32, 4), ("out", 3, OUT, T.F32, 4)]),
    "vyre-libs::nn::rms_norm_linear": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("w", 1, RO, T.F32, 16), ("b", 2, RO, T.F32, 4),
        ("inv_rms", 0, WG, T.F32, 1), ("out", 4, OUT, T.F32, 4)]),
    "vyre-libs::nn::rms_norm": ((4, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("rms_scratch", 0, WG, T.F32, 4), ("rms_scale", 0, WG, T.F32, 1),
        ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::layer_norm": ((4, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("ln_sum_scratch", 0, WG, T.F32, 4), ("ln_sq_scratch", 0, WG, T.F32, 4),
        ("ln_stats", 0, WG, T.F32, 2), ("output", 1, OUT, T.F32, 4)]),
}

from .interface_math import MATH_EXPLICIT_ULP, MATH_GENERATOR, MATH_INTERFACE  # noqa: E402  (ops3 ports)
INTERFACE.update(MATH_INTERFACE)
VYRE_EXPLICIT_ULP.update(MATH_EXPLICIT_ULP)

ALL = ops.all_ops()


def missing_vectors_or_oracles(entries) -> list[str]:
    missing = []
    for e in entries:
        if e.test_inputs is None or e.expected_output is None or not e.test_inputs() or not e.expected_output():
            missing.append(f"{e.id}: no test vectors")
        if e.id not in ORACLES:
            missing.append(f"{e.id}: no NumPy oracle in tests/ops/oracles.py")
        if e.id not in INTERFACE:
            missing.append(f"{e.id}: no interface row in tests/ops/test_registry.py")
    return missing


def test_every_registered_op_has_vectors_an_oracle_and_an_interface_row():
    assert not missing_vectors_or_oracles(ALL), "\n".join(missing_vectors_or_oracles(ALL))
    assert set(ORACLES) <= {e.id for e in ALL}, set(ORACLES) - {e.id for e in ALL}


def test_the_check_catches_an_op_without_vectors_or_oracle():
    bare = ops.OpEntry(id="vyre-libs::test::bare", build=lambda: None)
    empty = ops.OpEntry(id="vyre-libs::test::empty", build=lambda: None, test_inputs=lambda: [],
                        expected_output=lambda: [])
    assert missing_vectors_or_oracles([bare, empty]) == [
        f"{i}: {why}" for i in ("vyre-libs::test::bare", "vyre-libs::test::empty")
        for why in ("no test vectors", "no NumPy oracle in tests/ops/oracles.py",
                    "no interface row in tests/ops/test_registry.py")]


@pytest.mark.parametrize("entry", ALL, ids=lambda e: e.id)
def test_interface_matches_vyre(entry):
    wg, rows = INTERFACE[entry.id]
    p = entry.build()
    assert p.workgroup_size == wg
    got = []
    for b in p.buffers:
        access = WG if b.is_workgroup else OUT if b.is_output else b.access
        got.append((b.name, 0 if b.is_workgroup else b.binding, access, b.element, b.count))
    assert got == rows
    assert p.entry[0].generator == MATH_GENERATOR.get(entry.id, entry.id)
    assert entry.category == ("math" if entry.id.startswith("vyre-libs::math::") else "nn")


@pytest.mark.parametrize("entry", ALL, ids=lambda e: e.id)
def test_ulp_window_is_vyres_effective_tolerance_and_stated_in_the_module(entry):
    p = entry.build()
    has_f32_result = any(b.is_result and b.element is T.F32 for b in p.buffers)
    want = max(VYRE_EXPLICIT_ULP.get(entry.id, 0), ulp_budget(p)) if has_f32_result else None
    assert entry.ulp == want
    module = importlib.import_module(entry.build.__module__)
    assert getattr(module, "ULP", "missing") == entry.ulp


@pytest.mark.parametrize("entry", ALL, ids=lambda e: e.id)
def test_random_run_is_at_least_10x_the_registered_vector(entry):
    from vyre_vk import reference
    spec = ORACLES[entry.id]
    ins = spec.inputs(np.random.default_rng(0), spec.params)
    out = reference.run(entry.build_with(**spec.params), ins)
    n = sum(np.asarray(v).size for v in ins.values()) + sum(v.size for v in out.values())
    n *= getattr(spec, "repeats", 1)  # fixed-size programs run several independent random cases
    assert n >= 10 * registered_elements(entry)
from .interface_nn2 import merge as _merge_nn2; _merge_nn2(INTERFACE, VYRE_EXPLICIT_ULP)  # noqa: E402,E702
from .interface_tiled import merge as _merge_tiled; _merge_tiled(INTERFACE, VYRE_EXPLICIT_ULP)  # noqa: E402,E702
from .interface_int4 import merge as _merge_int4; _merge_int4(INTERFACE, VYRE_EXPLICIT_ULP, MATH_GENERATOR)  # noqa: E402,E702
from .interface_alg import merge as _merge_alg; _merge_alg(INTERFACE, VYRE_EXPLICIT_ULP)  # noqa: E402,E702
from .interface_sg import merge as _merge_sg; _merge_sg(INTERFACE)  # noqa: E402,E702
