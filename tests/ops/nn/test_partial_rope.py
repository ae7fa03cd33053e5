"""nn::partial_rope beyond the tables: pair rotation with an unrotated tail, odd rope_dims."""
import numpy as np
import pytest

from vyre_vk import ops, reference

F32 = np.float32


def test_partial_rope_rotates_pairs_and_copies_the_tail():
    p = ops.get("vyre-libs::nn::partial_rope").build_with(num_heads=1, seq_len=1, head_dim=6, rope_dims=4)
    x = np.array([1, 2, 3, 4, 5, 6], F32)
    c, s = np.array([0.0, 1.0], F32), np.array([1.0, 0.0], F32)
    out = reference.run(p, {"input": x, "cos": c, "sin": s})["output"]
    assert out.tolist() == [-2.0, 1.0, 3.0, 4.0, 5.0, 6.0]


def test_partial_rope_rejects_odd_rope_dims():
    with pytest.raises(ValueError, match="even rope_dims"):
        ops.get("vyre-libs::nn::partial_rope").build_with(rope_dims=3)
