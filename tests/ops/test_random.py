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

# Where an op's formula cancels, vyre's bit-ULP window cannot hold for a backend whose exp/tanh
# are not bit-identical to the reference's: the difference in the transcendental is multiplied by
# the condition number cond = scale/|value| of the oracle (e.g. gelu's 1 + tanh(u) for x < 0,
# which reaches a few ULPs of 1 below x = -5 where lavapipe's tanh hits -1.0 one ULP early and
# returns -0.0; skip_gate_backward's 1 - s for gate > 2; skip_gate's s*b + (1-s)*skip). So for
# those ops (CANCELLING: a transcendental feeds a cancelling sum) vyre's metric is asserted on
# elements with cond <= COND_MAX (at most half may be excluded); every element is still checked
# against NumPy (oracle window + the op's window, in ULPs of the oracle scale). The failures of
# vyre's metric on ill-conditioned elements are pinned in xfail tests below.
COND_MAX = 8.0
CANCELLING = {"vyre-libs::nn::gelu", "vyre-libs::nn::skip_gate", "vyre-libs::nn::skip_gate_backward"}


def conditioned(value: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.asarray(scale) <= COND_MAX * np.abs(np.asarray(value))


def _run(entry, device, ins, params):
    program = entry.build_with(**params)
    return program, reference.run(program, ins), device.compile(program).run(ins)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("entry", ALL, ids=lambda e: e.id)
def test_random_inputs_reference_vulkan_numpy(entry, seed, vk_device):
    spec = ORACLES[entry.id]
    rng = np.random.default_rng(seed)
    for _ in range(getattr(spec, "repeats", 1)):  # fixed-size programs: several independent cases
        _check_random_case(entry, spec, spec.inputs(rng, spec.params), vk_device)


def _check_random_case(entry, spec, ins, vk_device):
    program, ref, got = _run(entry, vk_device, ins, spec.params)
    want = spec.numpy(ins, spec.params)
    window = spec.ulp(spec.params)

    assert np_error(ref, want) <= window, f"reference vs NumPy: {np_error(ref, want)} > {window} ({spec.why})"

    if entry.id in CANCELLING:
        keep = {n: conditioned(*w) for n, w in want.items()}
        for n, k in keep.items():
            assert k.mean() >= 0.5, f"{n}: {k.size - k.sum()} of {k.size} elements ill-conditioned"
        report = compare(program, {n: ref[n][k] for n, k in keep.items()},
                         {n: got[n][k] for n, k in keep.items()}, entry.ulp)
    else:
        report = compare(program, ref, got, entry.ulp)
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
                   "gelu's 1+tanh cancellation turns that into a huge bit-ULP distance (see COND_MAX)")
def test_gelu_tail_meets_vyres_bit_ulp_window(vk_device):
    entry = ops.get("vyre-libs::nn::gelu")
    x = np.linspace(-10, -1, 4001).astype(np.float32)
    _, ref, got = _run(entry, vk_device, {"input": x}, {"n": x.size})
    assert int(ulp_distance(ref["output"], got["output"]).max()) <= entry.ulp


@pytest.mark.xfail(strict=False, reason="lavapipe exp differs from the reference by up to ~17 ULP on [-20, 20]; "
                   "1 - sigmoid(gate) cancels for gate > 2 (observed 212 ULP at gate = 5.27, cond 296)")
def test_skip_gate_backward_ill_conditioned_elements_meet_vyres_window(vk_device):
    entry = ops.get("vyre-libs::nn::skip_gate_backward")
    spec = ORACLES[entry.id]
    ins = spec.inputs(np.random.default_rng(2), spec.params)
    program, ref, got = _run(entry, vk_device, ins, spec.params)
    assert compare(program, ref, got, entry.ulp).ok
