"""nn::skip_gate_backward beyond the tables: the signed zero of vyre's vector and the
ill-conditioned 1 - sigmoid(gate)."""
import numpy as np

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from ..harness import run_both
from ..oracles import ORACLES

OP = "vyre-libs::nn::skip_gate_backward"


def test_skip_gate_backward_keeps_negative_zero():
    e = ops.get(OP)
    out = reference.run(e.build(), e.test_inputs()[0])["grad_gate"]
    assert out.view(np.uint32).tolist() == [0xC0A00000, 0x80000000]


def test_skip_gate_backward_ill_conditioned_elements_meet_vyres_window(vk_device):
    """1 - sigmoid(gate) cancels for gate > 2: lavapipe's exp (up to ~17 ULP off on [-20, 20])
    gave 212 bit-ULPs at gate = 5.27 (cond 296); ffmath's exp matches the reference."""
    spec = ORACLES[OP]
    ins = spec.inputs(np.random.default_rng(2), spec.params)
    program, ref, got = run_both(OP, vk_device, ins, grid=spec.grid, **spec.params)
    assert compare(program, ref, got, ops.get(OP).ulp).ok
