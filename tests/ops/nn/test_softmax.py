"""nn::softmax beyond the tables: the 256-lane tile at tiny sizes and the multi-chunk path."""
import numpy as np

from vyre_vk import ops, reference
from vyre_vk.testing.parity import compare

from ..harness import run_both
from ..oracles.core import normal

F32 = np.float32


def test_softmax_tile_is_256_even_for_tiny_inputs():
    p = ops.get("vyre-libs::nn::softmax").build_with(n=3)
    assert p.workgroup_size == (256, 1, 1) and p.buffers[1].count == 256
    out = reference.run(p, {"input": np.array([0.0, 0.0, 0.0], F32)})["output"]
    assert out.tolist() == [F32(1 / 3)] * 3 or np.allclose(out, 1 / 3)


def test_softmax_multi_chunk_on_vulkan(vk_device):
    """n > 256: each lane accumulates a strided slice before the tree reductions."""
    x = normal(np.random.default_rng(5), 1000, 3.0)
    program, ref, got = run_both("vyre-libs::nn::softmax", vk_device, {"input": x}, n=1000)
    assert compare(program, ref, got, 128).ok
    assert abs(float(ref["output"].astype(np.float64).sum()) - 1.0) < 1e-5
