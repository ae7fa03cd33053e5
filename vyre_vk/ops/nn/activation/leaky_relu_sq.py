"""`vyre-libs::nn::leaky_relu_sq`: ``leaky = max(0.5*x, x); y = leaky*leaky`` element-wise on f32
(port of vyre-libs/src/nn/activation/leaky_relu_sq.rs; skeleton in unary.py, workgroup [64,1,1]).

Example::

    >>> leaky_relu_sq("input", "output", 4).buffers[1].name
    'output'
"""
from __future__ import annotations

from ....ir import Expr, Program
from .unary import f32_unary_activation_program, register_activation

OP_ID = "vyre-libs::nn::leaky_relu_sq"
# 4 ULP: elementary ops only (vyre's program budget; no explicit entry). Results are exact in
# practice: 0.5*x is exact and max/one multiply round once.
ULP = 4


def leaky_relu_sq_expr(x: Expr) -> Expr:
    leaky = Expr.max(Expr.mul(Expr.f32(0.5), x), x)
    return Expr.mul(leaky, leaky)


def leaky_relu_sq(input: str, output: str, n: int) -> Program:
    return f32_unary_activation_program(OP_ID, input, output, n, leaky_relu_sq_expr)


def _build(n: int = 4) -> Program:
    return leaky_relu_sq("input", "output", n)


# vyre computes these with max(0.5x, x)^2 in f32: [0, 4, 4, 1]
ENTRY = register_activation(OP_ID, _build, [0.0, 2.0, -4.0, 1.0], [0.0, 4.0, 4.0, 1.0], ulp=ULP)
