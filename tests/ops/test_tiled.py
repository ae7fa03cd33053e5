"""Op-specific checks for the cooperative tiled GEMM ports (math::matmul_tiled,
math::matmul_bias_tiled, nn::linear_tiled) beyond the registered vectors and the generic random
run: vyre's own edge-tile and adversarial-shape tests, other tile shapes (the dispatch grid must
launch one workgroup per output tile on Vulkan as in the reference), idle workgroups, nn::linear's
routing to linear_tiled, the optimiser keeping the workgroup, and the builders' rejections."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ir import DataType, ValidationError, validate
from vyre_vk.ops.math.linalg import matmul_tiled as mt
from vyre_vk.ops.nn.linear import linear as lin
from vyre_vk.ops.nn.linear.tiled import (LINEAR_TILED_MIN_WORK, LINEAR_TILED_TILE, linear_tiled,
                                         linear_tiled_reference)
from vyre_vk.opt import optimize
from vyre_vk.reference import dispatch_grid

from .oracles_tiled import wrapping_gemm


def lcg_words(count: int, seed: int) -> tuple[np.ndarray, int]:
    """vyre's ops.rs pseudo_random_words: seed = seed*1664525 + 1013904223 (mod 2^32), emitted."""
    out = []
    for _ in range(count):
        seed = (seed * 1_664_525 + 1_013_904_223) & 0xFFFFFFFF
        out.append(seed)
    return np.asarray(out, np.uint32), seed


def both(program, ins, device, optimize=True):
    ref = reference.run(program, ins)
    got = device.compile(program, optimize=optimize).run(ins)
    return ref, got


# ---------------------------------------------------------------- vyre's own tests (ops.rs)
@pytest.mark.parametrize("optimize", [True, False], ids=["optimised", "as-written"])
@pytest.mark.parametrize("bias", [False, True])
def test_vyre_edge_tile_cases(bias, optimize, vk_device):
    """cooperative_matmul(_bias)_tiled_matches_reference_on_edge_tiles: 17x19x13, tile 8, [8,8,1]."""
    m, k, n, tile = 17, 19, 13, 8
    seed = 0x5A5A_0717 if bias else 0xA5A5_0131
    a, seed = lcg_words(m * k, seed)
    b, seed = lcg_words(k * n, seed)
    ins = {"a": a, "b": b}
    if bias:
        ins["bias"], seed = lcg_words(n, seed)
        p = mt.matmul_bias_tiled("a", "b", "bias", "out", m, k, n, tile, workgroup_size=(8, 8, 1))
    else:
        p = mt.matmul_tiled("a", "b", "out", m, k, n, tile, workgroup_size=(8, 8, 1))
    want = wrapping_gemm(a, b, m, k, n, ins.get("bias"))
    assert p.workgroup_size == (64, 1, 1) and p.buffers[-1].count == 3 * 2 * 64
    ref, got = both(p, ins, vk_device, optimize)
    assert np.array_equal(ref["out"], want)
    assert np.array_equal(got["out"], want)


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


# ---------------------------------------------------------------- geometry and dispatch
@pytest.mark.parametrize("wg", [(16, 16, 1), (8, 4, 1), (4, 2, 3), (1, 1, 1), (32, 1, 1)])
def test_tile_shapes_dispatch_one_workgroup_per_tile_on_vulkan(wg, vk_device):
    m, k, n, tile = 23, 11, 18, 4
    rng = np.random.default_rng(3)
    ins = {"a": rng.integers(0, 2**32, m * k, dtype=np.uint64).astype(np.uint32),
           "b": rng.integers(0, 2**32, k * n, dtype=np.uint64).astype(np.uint32),
           "bias": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)}
    p = mt.matmul_bias_tiled("a", "b", "bias", "out", m, k, n, tile, workgroup_size=wg)
    rows, cols = wg[1] * wg[2], wg[0]
    tiles = -(-m // rows) * -(-n // cols)
    assert p.workgroup_size == (rows * cols, 1, 1)
    counts = {"a": m * k, "b": k * n, "bias": n}
    if max(counts.values()) <= p.buffers[-1].count:  # inputs no larger than the padded output
        assert dispatch_grid(p, counts) == (tiles, 1, 1)
    want = wrapping_gemm(ins["a"], ins["b"], m, k, n, ins["bias"])
    ref, got = both(p, ins, vk_device)
    assert ref["out"].shape == (m * n,)
    assert np.array_equal(ref["out"], want)
    assert np.array_equal(got["out"], want)


def test_extra_workgroups_from_a_large_input_do_not_write(vk_device):
    """Workgroup memory makes vyre's grid rule count the inputs: w (in_dim*out_dim) launches more
    workgroups than output tiles; the extra ones lie past row 0 and must leave out alone."""
    in_dim, out_dim = 100, 20
    p = linear_tiled("x", "w", "b", "out", in_dim, out_dim, 32)
    grid = dispatch_grid(p, {"x": in_dim, "w": in_dim * out_dim, "b": out_dim})
    assert grid == (-(-in_dim * out_dim // 256), 1, 1) and grid[0] > 2  # 2 column tiles of 16
    rng = np.random.default_rng(4)
    ins = {"x": rng.integers(0, 2**32, in_dim, dtype=np.uint64).astype(np.uint32),
           "w": rng.integers(0, 2**32, in_dim * out_dim, dtype=np.uint64).astype(np.uint32),
           "b": rng.integers(0, 2**32, out_dim, dtype=np.uint64).astype(np.uint32)}
    want = wrapping_gemm(ins["x"], ins["w"], 1, in_dim, out_dim, ins["b"])
    ref, got = both(p, ins, vk_device)
    assert np.array_equal(ref["out"], want) and np.array_equal(got["out"], want)


def test_auto_tile_is_the_largest_power_of_two_up_to_32():
    assert [mt.auto_tile(k) for k in (0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 1000)] == [1, 1, 2, 2, 4, 8, 8, 16, 32, 32, 32]


# ---------------------------------------------------------------- nn::linear routes like vyre
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
    ins = {"x": rng.integers(0, 2**32, in_dim, dtype=np.uint64).astype(np.uint32),
           "w": rng.integers(0, 2**32, in_dim * out_dim, dtype=np.uint64).astype(np.uint32),
           "b": rng.integers(0, 2**32, out_dim, dtype=np.uint64).astype(np.uint32)}
    want = wrapping_gemm(ins["x"], ins["w"], 1, in_dim, out_dim, ins["b"])
    ref, got = both(p, ins, vk_device)
    assert np.array_equal(ref["out"], want)
    assert np.array_equal(got["out"], want)


# ---------------------------------------------------------------- optimiser
@pytest.mark.parametrize("device_class", ["default", "nvidia"])
def test_optimize_keeps_workgroup_and_results_on_multi_tile_programs(device_class):
    """tests/opt covers the registered (single-tile) sizes; here several tiles and k-tiles."""
    rng = np.random.default_rng(7)
    m, k, n = 33, 40, 35
    ins = {"a": rng.integers(0, 2**32, m * k, dtype=np.uint64).astype(np.uint32),
           "b": rng.integers(0, 2**32, k * n, dtype=np.uint64).astype(np.uint32),
           "bias": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)}
    for p in (mt.matmul_bias_tiled("a", "b", "bias", "out", m, k, n, 8),
              mt.matmul_bias_tiled("a", "b", "bias", "out", m, k, n, 8, workgroup_size=(8, 4, 1)),
              linear_tiled("a", "b", "bias", "out", k, n, 16)):
        case = ins if p.buffers[0].count == m * k else {"a": ins["a"][:k], "b": ins["b"], "bias": ins["bias"]}
        expected = reference.run(p, case)
        graph, reports = optimize(p, True, device_class=device_class)
        assert not any("reverted" in r.why for r in reports), reports
        assert all(st.workgroup_size == p.workgroup_size for st in graph.stages)
        got = graph.run_reference(case)
        assert got.keys() == expected.keys()
        assert all(got[k_].tobytes() == expected[k_].tobytes() for k_ in got)


# ---------------------------------------------------------------- rejections
def test_f32_is_rejected_and_vyres_f32_typing_does_not_validate():
    with pytest.raises(ValueError, match="Fix: .*DataType.U32"):
        mt.matmul_tiled("a", "b", "out", 2, 2, 2, 2, dtype=DataType.F32)
    # vyre's cooperative body with f32 tensors: u32 zero literals stored into f32 tiles
    upstream_f32 = mt._program(mt.OP_ID, "a", "b", None, "out", 2, 2, 2, 2, (16, 16, 1), None, DataType.F32)
    with pytest.raises(ValidationError, match="storing a u32 value into `matmul_a_tile` of f32"):
        validate(upstream_f32)


@pytest.mark.parametrize("call", [
    lambda: mt.matmul_tiled("a", "b", "out", 2, 2, 2, 0),
    lambda: mt.matmul_tiled("a", "a", "out", 2, 2, 2, 2),
    lambda: mt.matmul_bias_tiled("a", "b", "bias", "bias", 2, 2, 2, 2),
    lambda: mt.matmul_tiled("a", "b", "out", 0, 2, 2, 2),
    lambda: mt.matmul_tiled("a", "b", "out", 2**16, 2**16, 2, 2),
    lambda: linear_tiled("x", "w", "b", "out", 0, 4, 2),
    lambda: linear_tiled("x", "w", "b", "out", 4, 0, 2),
    lambda: linear_tiled("x", "w", "b", "out", 4, 4, 0),
    lambda: linear_tiled_reference("x", "w", "b", "out", 4, 4, 0),
])
def test_invalid_builds_raise_with_a_fix(call):
    with pytest.raises(ValueError, match="Fix: "):
        call()
