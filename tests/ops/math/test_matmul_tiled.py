"""math::matmul_tiled and math::matmul_bias_tiled (the cooperative tiled GEMM) beyond the tables:
vyre's own edge-tile tests, other tile shapes (the dispatch grid must launch one workgroup per
output tile on Vulkan as in the reference), the optimiser keeping the workgroup, and the builders'
rejections. tests/ops/nn/test_tiled.py covers nn::linear_tiled, built on it."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import DataType, ValidationError, validate
from vyre_vk.ops.math.linalg import matmul_tiled as mt
from vyre_vk.ops.nn.linear.tiled import linear_tiled
from vyre_vk.opt import optimize
from vyre_vk.reference import dispatch_grid

from ..harness import run_both
from ..oracles.core import ru32, wrapping_gemm


def lcg_words(count: int, seed: int) -> tuple[np.ndarray, int]:
    """vyre's ops.rs pseudo_random_words: seed = seed*1664525 + 1013904223 (mod 2^32), emitted."""
    out = []
    for _ in range(count):
        seed = (seed * 1_664_525 + 1_013_904_223) & 0xFFFFFFFF
        out.append(seed)
    return np.asarray(out, np.uint32), seed


def _gemm_inputs(rng, m: int, k: int, n: int) -> dict:
    return {"a": ru32(rng, m * k), "b": ru32(rng, k * n), "bias": ru32(rng, n)}


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
    _, ref, got = run_both(p, vk_device, ins, optimize=optimize)
    assert np.array_equal(ref["out"], want)
    assert np.array_equal(got["out"], want)


# ---------------------------------------------------------------- geometry and dispatch
@pytest.mark.parametrize("wg", [(16, 16, 1), (8, 4, 1), (4, 2, 3), (1, 1, 1), (32, 1, 1)])
def test_tile_shapes_dispatch_one_workgroup_per_tile_on_vulkan(wg, vk_device):
    m, k, n, tile = 23, 11, 18, 4
    ins = _gemm_inputs(np.random.default_rng(3), m, k, n)
    p = mt.matmul_bias_tiled("a", "b", "bias", "out", m, k, n, tile, workgroup_size=wg)
    rows, cols = wg[1] * wg[2], wg[0]
    tiles = -(-m // rows) * -(-n // cols)
    assert p.workgroup_size == (rows * cols, 1, 1)
    counts = {"a": m * k, "b": k * n, "bias": n}
    if max(counts.values()) <= p.buffers[-1].count:  # inputs no larger than the padded output
        assert dispatch_grid(p, counts) == (tiles, 1, 1)
    want = wrapping_gemm(ins["a"], ins["b"], m, k, n, ins["bias"])
    _, ref, got = run_both(p, vk_device, ins)
    assert ref["out"].shape == (m * n,)
    assert np.array_equal(ref["out"], want)
    assert np.array_equal(got["out"], want)


def test_auto_tile_is_the_largest_power_of_two_up_to_32():
    assert [mt.auto_tile(k) for k in (0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 1000)] == [1, 1, 2, 2, 4, 8, 8, 16, 32, 32, 32]


# ---------------------------------------------------------------- optimiser
@pytest.mark.parametrize("device_class", ["default", "nvidia"])
def test_optimize_keeps_workgroup_and_results_on_multi_tile_programs(device_class):
    """tests/opt covers the registered (single-tile) sizes; here several tiles and k-tiles."""
    m, k, n = 33, 40, 35
    ins = _gemm_inputs(np.random.default_rng(7), m, k, n)
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
])
def test_invalid_builds_raise_with_a_fix(call):
    with pytest.raises(ValueError, match="Fix: "):
        call()
