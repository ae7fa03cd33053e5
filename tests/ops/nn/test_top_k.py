"""nn::top_k (and nn::softmax_top_k, which shares its selection, vyre_vk/ops/nn/moe/topk_selection.py)
beyond the tables: the unguarded invocations and the tie rule."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from ..oracles.core import normal

F32 = np.float32


@pytest.mark.parametrize("op_id,name", [("vyre-libs::nn::top_k", "input"), ("vyre-libs::nn::softmax_top_k", "scores")])
def test_unguarded_top_k_repeats_in_every_invocation_and_stays_deterministic(op_id, name, vk_device):
    """vyre's top_k / softmax_top_k have no invocation guard: each of the k dispatched
    invocations reruns the whole selection on the shared slots. The reference runs them in order;
    on lavapipe they overlap. Repeated runs must still agree with the reference bit for bit on
    the integer results (the slots end with the same values whoever writes last)."""
    k = 32
    program = ops.get(op_id).build_with(n=400, k=k)
    kernel = vk_device.compile(program)
    names = [b.name for b in program.input_buffers]
    for seed in range(3):
        rng = np.random.default_rng(seed)
        ins = {name: normal(rng, 400, 3.0), "best_vals": np.zeros(k, F32),
               "best_idxs": np.zeros(k, np.uint32), "weights": np.zeros(k, F32)}
        ins = {n: v for n, v in ins.items() if n in names}
        ref, got = reference.run(program, ins), kernel.run(ins)
        assert compare(program, ref, got, 128).ok


def test_top_k_ties_keep_the_earlier_index():
    p = ops.get("vyre-libs::nn::top_k").build_with(n=6, k=3)
    x = np.array([1.0, 5.0, 3.0, 5.0, 3.0, 0.0], F32)
    out = reference.run(p, {"input": x, "best_vals": np.zeros(3, F32), "best_idxs": np.zeros(3, np.uint32)})
    assert out["output"].tolist() == [1, 3, 2]
    assert out["best_vals"].tolist() == [5.0, 5.0, 3.0]
