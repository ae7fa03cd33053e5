"""nn::moe_gate beyond the tables: one invocation, unique experts."""
import numpy as np

from vyre_vk import ops, reference

F32 = np.float32


def test_moe_gate_uses_one_invocation_and_picks_unique_experts():
    p = ops.get("vyre-libs::nn::moe_gate").build_with(num_experts=6, k=3)
    s = np.array([0.1, 2.0, 2.0, -1.0, 0.5, 1.5], F32)
    out = reference.run(p, {"scores": s, "indices": np.zeros(3, np.uint32)})
    assert out["indices"].tolist() == [1, 2, 5]
    e = np.exp(s.astype(np.float64) - 2.0)
    assert np.allclose(out["weights"], e[[1, 2, 5]] / e.sum(), rtol=1e-6)
