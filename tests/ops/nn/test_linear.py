"""nn::linear beyond the tables: u32 wrapping, and vyre's routing to linear_tiled from
LINEAR_TILED_MIN_WORK on."""
import numpy as np

from vyre_vk import ops, reference
from vyre_vk.ops.nn.linear import linear as lin
from vyre_vk.ops.nn.linear.tiled import LINEAR_TILED_MIN_WORK, LINEAR_TILED_TILE, linear_tiled

from ..harness import run_both
from ..oracles.core import ru32, wrapping_gemm


def test_linear_wraps_like_a_u32_matmul_bias():
    x = np.array([0xFFFFFFFF, 2], np.uint32)
    w = np.array([2, 3, 0x80000000, 1], np.uint32)
    b = np.array([1, 0xFFFFFFFF], np.uint32)
    out = reference.run(ops.get("vyre-libs::nn::linear").build_with(in_dim=2, out_dim=2), {"x": x, "w": w, "b": b})
    want = [(int(b[j]) + sum(int(x[kk]) * int(w[kk * 2 + j]) for kk in range(2))) % 2**32 for j in range(2)]
    assert out["out"].tolist() == want


def test_linear_routes_at_the_min_work_threshold():
    assert (LINEAR_TILED_MIN_WORK, LINEAR_TILED_TILE) == (1024, 32)
    below = ops.get("vyre-libs::nn::linear").build_with(in_dim=31, out_dim=33)   # 1023
    at = ops.get("vyre-libs::nn::linear").build_with(in_dim=32, out_dim=32)      # 1024
    assert below.entry[0].generator == "vyre-libs::nn::linear"
    assert at == linear_tiled("x", "w", "b", "out", 32, 32, LINEAR_TILED_TILE)
    assert at.entry[0].generator == "vyre-libs::nn::linear_tiled"
    assert any(b.is_workgroup for b in at.buffers)


def test_large_linear_builds_the_tiled_program_and_matches_numpy(vk_device):
    in_dim, out_dim = 70, 50   # 3500 >= 1024, k = 70 is 2 tiles of 32 plus a tail of 6
    p = lin.linear("x", "w", "b", "out", in_dim, out_dim)
    assert p.entry[0].generator == "vyre-libs::nn::linear_tiled" and p.workgroup_size == (256, 1, 1)
    rng = np.random.default_rng(6)
    ins = {"x": ru32(rng, in_dim), "w": ru32(rng, in_dim * out_dim), "b": ru32(rng, out_dim)}
    want = wrapping_gemm(ins["x"], ins["w"], 1, in_dim, out_dim, ins["b"])
    _, ref, got = run_both(p, vk_device, ins)
    assert np.array_equal(ref["out"], want)
    assert np.array_equal(got["out"], want)
