"""nn::ln_scale_backward beyond the tables: grad_scale is plain ReadWrite, an input (its bytes are
the initial contents) and a result."""
import numpy as np

from vyre_vk import ops, reference


def test_in_place_buffers_take_their_initial_contents():
    p = ops.get("vyre-libs::nn::ln_scale_backward").build_with(n=8)
    ins = {"input": np.ones(8, np.float32), "scale": np.ones(8, np.float32),
           "grad_out": np.ones(8, np.float32), "grad_scale": np.full(8, 7.0, np.float32)}
    assert [b.name for b in p.input_buffers] == ["input", "scale", "grad_out", "grad_scale"]
    assert reference.run(p, ins)["grad_scale"].tolist() == [1.0] * 8
    got = reference.run(p, {**ins, "grad_scale": np.full(8, 7.0, np.float32)})
    assert got["grad_x"].tolist() == [1.0] * 8
