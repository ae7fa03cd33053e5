"""nn::linear_tiled (vyre_vk/ops/nn/linear/tiled.py) beyond the tables: vyre's own tests
(adversarial shapes against its plain reference program, boundary values), the padded output and
Region nesting, idle workgroups, and the builders' rejections. tests/ops/math/test_matmul_tiled.py
covers the tiled GEMM underneath."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ops.math.linalg import matmul_tiled as mt
from vyre_vk.ops.nn.linear.tiled import linear_tiled, linear_tiled_reference
from vyre_vk.reference import dispatch_grid

from ..harness import run_both
from ..oracles.core import ru32, wrapping_gemm


@pytest.mark.parametrize("in_dim,out_dim,tile", [(1, 1, 1), (3, 5, 7), (15, 16, 17), (31, 32, 33),
                                                 (63, 64, 65), (127, 128, 129), (37, 65, 16)])
def test_linear_tiled_matches_vyres_reference_program(in_dim, out_dim, tile):
    """linear_tiled_matches_reference_on_adversarial_shapes (+ the tail-tile case 37x65/16)."""
    x = ((np.arange(in_dim, dtype=np.uint64) * 3 + 1) & 0xFFFFFFFF).astype(np.uint32)
    w = ((np.arange(in_dim * out_dim, dtype=np.uint64) * 5 + 7) & 0xFFFFFFFF).astype(np.uint32)
    b = ((np.arange(out_dim, dtype=np.uint64) * 11 + 13) & 0xFFFFFFFF).astype(np.uint32)
    ins = {"x": x, "w": w, "b": b}
    got = reference.run(linear_tiled("x", "w", "b", "out", in_dim, out_dim, tile), ins)["out"]
    plain = reference.run(linear_tiled_reference("x", "w", "b", "out", in_dim, out_dim, tile), ins)["out"]
    want = wrapping_gemm(x, w, 1, in_dim, out_dim, b)
    assert np.array_equal(plain, want)
    assert np.array_equal(got, want)


def test_linear_tiled_boundary_values(vk_device):
    """linear_tiled_matches_reference_on_boundary_values: x in {0, 1, u32::MAX, 0..}, w alternating 0/1."""
    in_dim, out_dim, tile = 32, 48, 16
    w = (np.arange(in_dim * out_dim) % 2).astype(np.uint32)
    b = np.arange(out_dim, dtype=np.uint32)
    program = linear_tiled("x", "w", "b", "out", in_dim, out_dim, tile)
    kernel = vk_device.compile(program)
    for x in (np.zeros(in_dim, np.uint32), np.ones(in_dim, np.uint32), np.full(in_dim, 0xFFFFFFFF, np.uint32),
              np.arange(in_dim, dtype=np.uint32)):
        ins = {"x": x, "w": w, "b": b}
        want = wrapping_gemm(x, w, 1, in_dim, out_dim, b)
        assert np.array_equal(reference.run(program, ins)["out"], want)
        assert np.array_equal(kernel.run(ins)["out"], want)


def test_linear_tiled_keeps_padded_storage_and_logical_readback():
    p = ops.get("vyre-libs::nn::linear_tiled").build()
    out = p.buffers[-1]
    assert out.is_output and out.count == 256 and out.output_byte_range == (0, 16)
    # tag_program: linear_tiled > matmul_bias_tiled (parent linear_tiled) > semiring_gemm (parent matmul_bias_tiled)
    top = p.entry[0]
    mid = top.body[0]
    assert (top.generator, top.source_region) == ("vyre-libs::nn::linear_tiled", None)
    assert (mid.generator, mid.source_region) == ("vyre-libs::math::matmul_bias_tiled", "vyre-libs::nn::linear_tiled")
    assert (mid.body[0].generator, mid.body[0].source_region) == (mt.SEMIRING_GEMM_OP_ID,
                                                                  "vyre-libs::math::matmul_bias_tiled")


def test_extra_workgroups_from_a_large_input_do_not_write(vk_device):
    """Workgroup memory makes vyre's grid rule count the inputs: w (in_dim*out_dim) launches more
    workgroups than output tiles; the extra ones lie past row 0 and must leave out alone."""
    in_dim, out_dim = 100, 20
    p = linear_tiled("x", "w", "b", "out", in_dim, out_dim, 32)
    grid = dispatch_grid(p, {"x": in_dim, "w": in_dim * out_dim, "b": out_dim})
    assert grid == (-(-in_dim * out_dim // 256), 1, 1) and grid[0] > 2  # 2 column tiles of 16
    rng = np.random.default_rng(4)
    ins = {"x": ru32(rng, in_dim), "w": ru32(rng, in_dim * out_dim), "b": ru32(rng, out_dim)}
    want = wrapping_gemm(ins["x"], ins["w"], 1, in_dim, out_dim, ins["b"])
    _, ref, got = run_both(p, vk_device, ins)
    assert np.array_equal(ref["out"], want) and np.array_equal(got["out"], want)


@pytest.mark.parametrize("call", [
    lambda: linear_tiled("x", "w", "b", "out", 0, 4, 2),
    lambda: linear_tiled("x", "w", "b", "out", 4, 0, 2),
    lambda: linear_tiled("x", "w", "b", "out", 4, 4, 0),
    lambda: linear_tiled_reference("x", "w", "b", "out", 4, 4, 0),
])
def test_invalid_builds_raise_with_a_fix(call):
    with pytest.raises(ValueError, match="Fix: "):
        call()
