"""Packed INT4 quant ops (vyre_vk/ops/nn/quant/int4.py): what the generic vector/random runs leave
implicit. The top-1 tie and non-finite rules, sign extension and nibble order on vyre-primitives'
own vectors, vyre's unit-test shapes (cols not a multiple of 8) bit-exact against a sequential f32
evaluation of vyre's CPU oracle, and the builders' errors."""
import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.ops.nn.quant import int4
from vyre_vk.testing.parity import ulp_distance

from ..harness import run_both
from ..oracles.core import F32_MIN
from ..oracles.nn_quant import pack_i4, top1, unpack_i4

F32 = np.float32
Q = "vyre-libs::quant::"
TOP1 = Q + "int4_batched_matmul_top1_f32_scaled"
PRIM_WORD = 0x7621_0F98  # vyre-primitives' quantized vectors: lanes [-8, -7, -1, 0, 1, 2, 6, 7]


def _both(op_id, device, ins, **params):
    return run_both(op_id, device, ins, **params)[1:]


def _top1_inputs(weights, acts, row_scales, batch_scales):
    return {"weights": pack_i4(np.array(weights)).reshape(-1), "activations": pack_i4(np.array(acts)).reshape(-1),
            "row_scales": np.array(row_scales, F32), "batch_scales": np.array(batch_scales, F32)}


def test_nibble_order_and_sign_extension():
    assert unpack_i4(np.array([PRIM_WORD], np.uint32), 8).tolist() == [-8, -7, -1, 0, 1, 2, 6, 7]
    assert pack_i4(np.array([[-8, -7, -1, 0, 1, 2, 6, 7]])).tolist() == [[PRIM_WORD]]


@pytest.mark.parametrize("op_id, params, ins, want", [
    (Q + "int4_dot_i32", {"lane_count": 8}, {"lhs": [PRIM_WORD], "rhs": [PRIM_WORD]}, np.array([204], np.int32)),
    (Q + "int4_dot_f32_scaled", {"lane_count": 8},
     {"lhs": [PRIM_WORD], "rhs": [PRIM_WORD], "lhs_scale": [1.0], "rhs_scale": [1.0]}, np.array([204.0], F32)),
    (Q + "int4_matvec_f32_scaled", {"rows": 4, "cols": 8},
     {"weights": [PRIM_WORD] * 4, "x": [-8.0, -7.0, -1.0, 0.0, 1.0, 2.0, 6.0, 7.0], "scales": [1.0] * 4},
     np.full(4, 204.0, F32)),
    (Q + "int4_batched_matvec_f32_scaled", {"batch": 2, "rows": 4, "cols": 8},
     {"weights": [PRIM_WORD] * 4, "x": [-8.0, -7.0, -1.0, 0.0, 1.0, 2.0, 6.0, 7.0] * 2, "scales": [1.0] * 4},
     np.full(8, 204.0, F32)),
    (Q + "int4_batched_matmul_f32_scaled", {"batch": 2, "rows": 4, "cols": 8},
     {"weights": [PRIM_WORD] * 4, "activations": [PRIM_WORD] * 2, "row_scales": [1.0] * 4, "batch_scales": [1.0] * 2},
     np.full(8, 204.0, F32)),
    (TOP1, {"batch": 2, "rows": 4, "cols": 8},
     {"weights": [PRIM_WORD] * 4, "activations": [PRIM_WORD] * 2, "row_scales": [1.0] * 4, "batch_scales": [1.0] * 2},
     np.array([204.0, 204.0, 0.0, 0.0], F32)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_vyre_primitives_vectors(op_id, params, ins, want, vk_device):
    """vyre-primitives registers these for the primitives the int4 wrappers delegate to."""
    program = ops.get(op_id).build_with(**params)
    ins = {k: np.array(v, np.uint32 if k in ("lhs", "rhs", "weights", "activations") else F32) for k, v in ins.items()}
    for got in (reference.run(program, ins)["out"], vk_device.compile(program).run(ins)["out"]):
        assert got.dtype == want.dtype and got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_top1_ties_take_the_first_row(vk_device):
    # rows 1 and 3 are equal and best; row 0 = row 2 lower; batch 1 activations zero: all tie at 0.0
    w = [[1, 0, 0, 0, 0, 0, 0, 0, 0], [2, 1, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0],
         [2, 1, 0, 0, 0, 0, 0, 0, 0]]
    a = [[3, 5, 0, 0, 0, 0, 0, 0, -8], [0] * 9, [-1, -1, 0, 0, 0, 0, 0, 0, 0]]
    ins = _top1_inputs(w, a, [1.0] * 4, [0.5, 1.0, 2.0])
    want = np.array([5.5, 0.0, -2.0, 1, 0, 0], F32)  # batch 2: scores [-2, -6, -2, -6] -> row 0
    scores = (np.array(a) @ np.array(w).T).astype(F32) * np.array([[0.5], [1.0], [2.0]], F32)
    best, idx = top1(scores)
    assert np.concatenate([best, idx.astype(F32)]).tolist() == want.tolist()
    for got in _both(TOP1, vk_device, ins, batch=3, rows=4, cols=9):
        assert got["out"].tolist() == want.tolist()


def test_top1_non_finite_scores_keep_the_sentinel(vk_device):
    # batch 0: accs [1, 2, 1] * -inf = all -inf (never > f32::MIN); batch 1: all NaN (never wins);
    # batch 2: accs [0, 0, 1] * +inf = [NaN, NaN, +inf] -> row 2
    w = [[1, 0, 0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0]]
    a = [[1, 1, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0]]
    ins = _top1_inputs(w, a, [1.0, 1.0, 1.0], [-np.inf, np.nan, np.inf])
    want = np.array([F32_MIN, F32_MIN, np.inf, 0, 0, 2], F32)
    for got in _both(TOP1, vk_device, ins, batch=3, rows=3, cols=8):
        assert got["out"].view(np.uint32).tolist() == want.view(np.uint32).tolist()


def _vyre_cpu_matvec(w_rows, x, scales):
    """vyre-primitives cpu.rs i4x8_matvec_f32_scaled_cpu: sequential f32 ``acc += w*x``, then ``* scale``."""
    out = []
    for row, s in zip(w_rows, scales):
        acc = F32(0.0)
        for wi, xi in zip(row, x):
            acc = F32(acc + F32(F32(wi) * F32(xi)))
        out.append(F32(acc * F32(s)))
    return np.array(out, F32)


# vyre-libs int4.rs unit-test data: 9 columns (a partial second word per row)
_W = [[1, 2, 3, 4, -1, -2, -3, -4, 5], [4, 3, 2, 1, -4, -3, -2, -1, -5], [-8, -7, -6, -5, -4, -3, -2, -1, 0]]
_X2 = [1.0, -0.5, 0.25, 2.0, -1.5, 0.75, 1.25, -2.0, 0.5, -1.0, 0.5, -0.25, -2.0, 1.5, -0.75, -1.25, 2.0, -0.5]
_S = [0.5, 0.25, 0.125]


def test_matvec_is_vyres_sequential_f32_sum(vk_device):
    ins = {"weights": pack_i4(np.array(_W)).reshape(-1), "x": np.array(_X2[:9], F32), "scales": np.array(_S, F32)}
    ref, got = _both(Q + "int4_matvec_f32_scaled", vk_device, ins, rows=3, cols=9)
    want = _vyre_cpu_matvec(_W, _X2[:9], _S)
    assert ref["out"].view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert int(ulp_distance(ref["out"], got["out"]).max()) <= int4.ULP


def test_batched_matvec_is_vyres_sequential_f32_sum(vk_device):
    ins = {"weights": pack_i4(np.array(_W)).reshape(-1), "x": np.array(_X2, F32), "scales": np.array(_S, F32)}
    ref, got = _both(Q + "int4_batched_matvec_f32_scaled", vk_device, ins, batch=2, rows=3, cols=9)
    want = np.concatenate([_vyre_cpu_matvec(_W, _X2[:9], _S), _vyre_cpu_matvec(_W, _X2[9:], _S)])
    assert ref["out"].view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert int(ulp_distance(ref["out"], got["out"]).max()) <= int4.ULP


def test_batched_matmul_and_top1_on_vyres_unit_data(vk_device):
    acts = [[1, -1, 2, -2, 3, -3, 4, -4, 5], [-5, 4, -4, 3, -3, 2, -2, 1, -1]]
    ins = _top1_inputs(_W, acts, _S, [0.75, 0.375])
    dots = np.array(acts) @ np.array(_W).T                             # [[29, -29, -10], [-1, 1, 30]]
    scores = F32(dots.astype(F32) * np.array(_S, F32)[None, :]) * np.array([[0.75], [0.375]], F32)
    for got in _both(Q + "int4_batched_matmul_f32_scaled", vk_device, ins, batch=2, rows=3, cols=9):
        assert got["out"].tolist() == scores.reshape(-1).tolist()
    best, idx = top1(scores)
    assert best.tolist() == [10.875, 1.40625] and idx.tolist() == [0, 2]
    for got in _both(TOP1, vk_device, ins, batch=2, rows=3, cols=9):
        assert got["out"].tolist() == np.concatenate([best, idx.astype(F32)]).tolist()


@pytest.mark.parametrize("build, args", [
    (int4.int4_dot_i32, ("l", "r", "o", 0)),
    (int4.int4_matvec_f32_scaled, ("w", "x", "s", "o", 0, 8)),
    (int4.int4_batched_matmul_top1_f32_scaled, ("w", "a", "rs", "bs", "o", 1, 1, 0)),
])
def test_empty_shapes_are_rejected(build, args):
    with pytest.raises(ValueError, match="Fix: "):
        build(*args)
