"""`vyre-libs::nn::linear_relu`: ``out[i] = max(0.0, b[i] + sum_k x[k]*w[k*out_dim + i])`` on f32
(port of vyre-libs/src/nn/linear/inner/relu.rs).

Example::

    >>> linear_relu("x", "w", "b", "out", 4, 4).buffers[1].count
    16
"""
from __future__ import annotations

from ....ir import Program
from ..activation.relu import relu_f32_expr
from .fused_activation import linear_fused_activation, register_fused_linear

OP_ID = "vyre-libs::nn::linear_relu"
# 4 ULP: elementary ops only (a mul/add dot product, contractible to fma; vyre's program budget).
ULP = 4


def linear_relu(x: str, w: str, b: str, out: str, in_dim: int, out_dim: int) -> Program:
    return linear_fused_activation("linear_relu", OP_ID, x, w, b, out, in_dim, out_dim, relu_f32_expr)


def _build(in_dim: int = 4, out_dim: int = 4) -> Program:
    return linear_relu("x", "w", "b", "out", in_dim, out_dim)


ENTRY = register_fused_linear(OP_ID, _build, ULP)
