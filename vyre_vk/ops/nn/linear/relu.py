"""`vyre-libs::nn::linear_relu`: ``out[i] = max(0.0, b[i] + sum_k x[k]*w[k*out_dim + i])`` on f32
(port of vyre-libs/src/nn/linear/inner/relu.rs).

Example::

    >>> linear_relu("x", "w", "b", "out", 4, 4).buffers[1].count
    16
"""
from __future__ import annotations

from ....ir import Program
from ...registry import register_op
from ...wire import pack_f32_slice
from ..activation.relu import relu_f32_expr
from .fused_activation import fused_vector_inputs, linear_fused_activation

OP_ID = "vyre-libs::nn::linear_relu"
# 4 ULP: elementary ops only (a mul/add dot product, contractible to fma; vyre's program budget).
ULP = 4


def linear_relu(x: str, w: str, b: str, out: str, in_dim: int, out_dim: int) -> Program:
    return linear_fused_activation("linear_relu", OP_ID, x, w, b, out, in_dim, out_dim, relu_f32_expr)


def _build(in_dim: int = 4, out_dim: int = 4) -> Program:
    return linear_relu("x", "w", "b", "out", in_dim, out_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=fused_vector_inputs,
    expected_output=lambda: [[pack_f32_slice([56.0, 62.0, 68.0, 74.0])]],
    category="nn", ulp=ULP,
    bench=dict(in_dim=4096, out_dim=4096),
)
