"""nn::qk_gain beyond the tables: the empty shape."""
from vyre_vk import ops


def test_qk_gain_empty_shape_builds_a_no_op():
    p = ops.get("vyre-libs::nn::qk_gain").build_with(seq_len=0)
    assert p.entry[0].body == ()
