"""nn::residual_block_backward beyond the tables: grad_attn and grad_mlp are plain ReadWrite,
inputs (their bytes are the initial contents) and results."""
from vyre_vk import ops


def test_in_place_buffers_take_their_initial_contents():
    r = ops.get("vyre-libs::nn::residual_block_backward").build_with(n=4)
    assert [b.name for b in r.input_buffers] == ["grad_out", "grad_attn", "grad_mlp"]
