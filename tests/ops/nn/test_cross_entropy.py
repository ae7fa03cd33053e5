"""nn::cross_entropy beyond the tables: rows whose target logit dominates."""
import numpy as np

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from ..harness import run_both
from ..measure import np_error
from ..oracles import ORACLES

OP = "vyre-libs::nn::cross_entropy"
PARAMS = {"n": 8, "vocab_size": 300}


def _dominant_targets():
    """Row r's target logit raised by 4r: the loss of the last rows is a few ULPs of the max logit."""
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((8, 300)).astype(np.float32)
    targets = rng.integers(0, 300, 8).astype(np.uint32)
    logits[np.arange(8), targets] += 4.0 * np.arange(8, dtype=np.float32)
    return {"logits": logits.reshape(-1), "targets": targets}


def test_cross_entropy_with_dominant_targets():
    """Peaked rows: the loss shrinks to a few ULPs of the max logit (the log of a sum near 1)."""
    ins = _dominant_targets()
    want = ORACLES[OP].numpy(ins, PARAMS)
    ref = reference.run(ops.get(OP).build_with(**PARAMS), ins)
    assert np_error(ref, want) <= ORACLES[OP].ulp(PARAMS)
    assert ref["loss"][-1] == 0.0  # exp(l - max) underflows next to 1 for every other logit


def test_cross_entropy_dominant_targets_on_vulkan(vk_device):
    program, ref, got = run_both(OP, vk_device, _dominant_targets(), **PARAMS)
    assert compare(program, ref, got, ops.get(OP).ulp).ok
