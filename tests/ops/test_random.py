"""Random inputs (>= 10x each op's registered vector) through the reference, Vulkan and the
independent NumPy oracle in tests/ops/oracles.py.

- reference vs NumPy: within the oracle's window (ULPs of its per-element scale);
- reference vs Vulkan: vyre's parity rule (bit-ULP distance <= the op's window);
- Vulkan vs NumPy: within the oracle window plus the op's window.
"""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare, ulp_distance

from .measure import np_error, scaled_ulps
from .oracles import ORACLES

ALL = ops.all_ops()

# gelu = 0.5*x*(1 + tanh(u)): for x < 0 the sum 1 + tanh(u) cancels (to 9e-3 at x = -3, to a few
# ULPs of 1 below x = -5), multiplying any difference in tanh by 1/(1+tanh(u)). lavapipe's tanh is
# up to 7 ULP from the reference's (and reaches -1.0 one ULP early, e.g. u = -8.77, giving -0.0),
# so no backend whose tanh is not bit-identical to the reference's meets a bit-ULP window there:
# below x = -1 (amplification > 3) elements are checked against NumPy only, in ULPs of |x|, and
# the failure of vyre's metric on that tail is pinned in an xfail test.
BIT_ULP_DOMAIN = {"vyre-libs::nn::gelu": lambda ins: ins["input"] > -1.0}


def _run(entry, device, ins, params):
    program = entry.build_with(**params)
    return program, reference.run(program, ins), device.compile(program).run(ins)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("entry", ALL, ids=lambda e: e.id)
def test_random_inputs_reference_vulkan_numpy(entry, seed, vk_device):
    spec = ORACLES[entry.id]
    ins = spec.inputs(np.random.default_rng(seed), spec.params)
    program, ref, got = _run(entry, vk_device, ins, spec.params)
    want = spec.numpy(ins, spec.params)
    window = spec.ulp(spec.params)

    assert np_error(ref, want) <= window, f"reference vs NumPy: {np_error(ref, want)} > {window} ({spec.why})"

    domain = BIT_ULP_DOMAIN.get(entry.id)
    if domain is None:
        report = compare(program, ref, got, entry.ulp)
        assert report.ok, "; ".join(str(m) for m in report.mismatches)
    else:
        keep = domain(ins)
        (name,) = want
        sub = {name: ref[name][keep]}
        report = compare(program, sub, {name: got[name][keep]}, entry.ulp)
        assert report.ok, "; ".join(str(m) for m in report.mismatches)
    budget = report.ulp
    assert np_error(got, want) <= window + budget


def test_cross_entropy_with_dominant_targets():
    """Peaked rows: the loss shrinks to a few ULPs of the max logit (the log of a sum near 1)."""
    from vyre_vk.runtime import Device  # noqa: F401
    entry = ops.get("vyre-libs::nn::cross_entropy")
    params = {"n": 8, "vocab_size": 300}
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((8, 300)).astype(np.float32)
    targets = rng.integers(0, 300, 8).astype(np.uint32)
    logits[np.arange(8), targets] += 4.0 * np.arange(8, dtype=np.float32)
    ins = {"logits": logits.reshape(-1), "targets": targets}
    want = ORACLES[entry.id].numpy(ins, params)
    ref = reference.run(entry.build_with(**params), ins)
    assert np_error(ref, want) <= ORACLES[entry.id].ulp(params)
    assert ref["loss"][-1] == 0.0  # exp(l - max) underflows next to 1 for every other logit


def test_cross_entropy_dominant_targets_on_vulkan(vk_device):
    entry = ops.get("vyre-libs::nn::cross_entropy")
    params = {"n": 8, "vocab_size": 300}
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((8, 300)).astype(np.float32)
    targets = rng.integers(0, 300, 8).astype(np.uint32)
    logits[np.arange(8), targets] += 4.0 * np.arange(8, dtype=np.float32)
    ins = {"logits": logits.reshape(-1), "targets": targets}
    program, ref, got = _run(entry, vk_device, ins, params)
    assert compare(program, ref, got, entry.ulp).ok


def test_gelu_tail_is_close_to_numpy_on_vulkan(vk_device):
    entry = ops.get("vyre-libs::nn::gelu")
    x = np.linspace(-10, -1, 4001).astype(np.float32)
    _, ref, got = _run(entry, vk_device, {"input": x}, {"n": x.size})
    value = 0.5 * x.astype(np.float64) * (1 + np.tanh(0.7978846 * (x + 0.044715 * x.astype(np.float64) ** 3)))
    assert scaled_ulps(ref["output"], value, np.abs(x)) <= 8
    assert scaled_ulps(got["output"], value, np.abs(x)) <= 8


@pytest.mark.xfail(strict=False, reason="lavapipe tanh saturates to -1.0 one ULP before the reference; "
                   "gelu's 1+tanh cancellation turns that into a huge bit-ULP distance (see BIT_ULP_DOMAIN)")
def test_gelu_tail_meets_vyres_bit_ulp_window(vk_device):
    entry = ops.get("vyre-libs::nn::gelu")
    x = np.linspace(-10, -1, 4001).astype(np.float32)
    _, ref, got = _run(entry, vk_device, {"input": x}, {"n": x.size})
    assert int(ulp_distance(ref["output"], got["output"]).max()) <= entry.ulp
