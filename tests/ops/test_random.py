"""Random inputs (>= 10x each op's registered vector) through the reference, Vulkan and the
independent NumPy oracle in tests/ops/oracles, per op id (``pytest -k softmax``):

- reference vs NumPy: within the oracle's window (ULPs of its per-element scale);
- reference vs Vulkan: vyre's parity rule (bit-ULP distance <= the op's window);
- Vulkan vs NumPy: within the oracle window plus the op's window.

Ops whose formulas cancel after a transcendental (gelu's 1 + tanh(u) for x < -5, skip_gate's
1 - sigmoid(g), attention's sum_j p_j v_j over zero-mean v) multiply any exp/tanh difference by
the condition number (thousands of bit-ULPs before exp and tanh were lowered in float-float,
vyre_vk/lower/ffmath.py). They are held to vyre's window on every element like any other op; their
ill-conditioned cases are pinned in tests/ops/nn/.
"""
import numpy as np
import pytest

from vyre_vk import ops
from vyre_vk.testing.parity import compare

from .harness import run_both
from .measure import np_error, registered_elements
from .oracles import ORACLES


#: Ops whose reference run interprets one long serial walk over text or a graph (seconds each):
#: one random input set here; their real inputs (system headers, stdlib modules) are in tests/ops/parsing.
SERIAL_WALKS = ("vyre-libs::parsing::", "vyre-libs::security::", "vyre-libs::matching::", "vyre-libs::graph::")
# op-major: an op's second set reuses the kernel its first compiled (lavapipe takes 10-16 s to build the
# straight-line FFT programs' pipelines)
CASES = [(e, seed) for e in ops.all_ops() for seed in (0, 1) if seed == 0 or not e.id.startswith(SERIAL_WALKS)]


@pytest.mark.parametrize("entry,seed", CASES, ids=[f"{e.id}-{seed}" for e, seed in CASES])
def test_random_inputs_reference_vulkan_numpy(entry, seed, vk_device):
    spec = ORACLES[entry.id]
    rng = np.random.default_rng(seed)
    for k in range(spec.repeats):  # fixed-size programs: several independent cases
        ins = spec.inputs(rng, spec.params)
        program, ref, got = run_both(entry, vk_device, ins, grid=spec.grid, **spec.params)
        if seed == 0 and k == 0:  # the random run is >= 10x the registered vector (all repeats together)
            n = sum(np.asarray(v).size for v in ins.values()) + sum(v.size for v in ref.values())
            assert n * spec.repeats >= 10 * registered_elements(entry)
        want = spec.numpy(ins, spec.params)
        window = spec.ulp(spec.params)

        assert np_error(ref, want) <= window, f"reference vs NumPy: {np_error(ref, want)} > {window} ({spec.why})"

        report = compare(program, ref, got, entry.ulp)
        assert report.ok, "; ".join(str(m) for m in report.mismatches)
        assert np_error(got, want) <= window + report.ulp
