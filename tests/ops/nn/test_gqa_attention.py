"""nn::gqa_attention beyond the tables: cancelling outputs, the looped dot, KV-head sharing and
its group check."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from ..harness import run_both
from ..oracles import ORACLES
from ..oracles.core import normal

OP = "vyre-libs::nn::gqa_attention"


def test_gqa_attention_ill_conditioned_elements_meet_vyres_window(vk_device):
    """gqa_attention's weighted sum of zero-mean v cancels (256 bit-ULPs at cond 2.4e3 with the
    driver's exp)."""
    spec = ORACLES[OP]
    ins = spec.inputs(np.random.default_rng(0), spec.params)
    program, ref, got = run_both(OP, vk_device, ins, **spec.params)
    assert compare(program, ref, got, 128).ok


def test_gqa_attention_long_head_dim_uses_a_loop_and_matches(vk_device):
    """head_dim > 8 takes the looped dot (the registered vector uses the straight-line one)."""
    from vyre_vk.ir import node as N
    p = ops.get(OP).build_with(head_dim=9)
    text = repr(p.entry)
    assert "var='d'" in text or "'d'" in text
    assert isinstance(p.entry[0], N.Region)


def test_gqa_attention_groups_share_kv_heads():
    """With 4 Q heads over 2 KV heads, heads 0,1 read KV head 0 and heads 2,3 read KV head 1."""
    params = {"n_q_heads": 4, "n_kv_heads": 2, "seq_len": 3, "head_dim": 2}
    p = ops.get(OP).build_with(**params)
    rng = np.random.default_rng(0)
    q = normal(rng, 4 * 3 * 2)
    q[6:12] = q[0:6]                      # head 1 == head 0
    k, v = normal(rng, 2 * 3 * 2), normal(rng, 2 * 3 * 2)
    out = reference.run(p, {"q": q, "k": k, "v": v})["out"].reshape(4, 3, 2)
    assert np.array_equal(out[0], out[1])
    k2 = k.copy()
    k2[6:] += 1.0                          # only KV head 1 changes
    out2 = reference.run(p, {"q": q, "k": k2, "v": v})["out"].reshape(4, 3, 2)
    assert np.array_equal(out[:2], out2[:2]) and not np.array_equal(out[2:], out2[2:])


def test_gqa_attention_rejects_bad_groups():
    with pytest.raises(ValueError, match="multiple"):
        ops.get(OP).build_with(n_q_heads=3, n_kv_heads=2)
