"""`vyre-libs::nn::linear_silu`: ``out[i] = silu(b[i] + sum_k x[k]*w[k*out_dim + i])`` with
``silu(z) = flush_tiny(z * (1/(1+exp(-z))))`` (port of vyre-libs/src/nn/linear/inner/silu.rs).

Example::

    >>> linear_silu("x", "w", "b", "out", 4, 4).entry[0].generator
    'vyre-libs::nn::linear_silu'
"""
from __future__ import annotations

from ....ir import Program
from ..activation.silu import silu_expr
from .fused_activation import linear_fused_activation, register_fused_linear

OP_ID = "vyre-libs::nn::linear_silu"
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit entry).
ULP = 128


def linear_silu(x: str, w: str, b: str, out: str, in_dim: int, out_dim: int) -> Program:
    return linear_fused_activation("linear_silu", OP_ID, x, w, b, out, in_dim, out_dim, silu_expr)


def _build(in_dim: int = 4, out_dim: int = 4) -> Program:
    return linear_silu("x", "w", "b", "out", in_dim, out_dim)


ENTRY = register_fused_linear(OP_ID, _build, ULP)
