"""`vyre-libs::nn::gelu` (tanh form):
``y = 0.5 * (x * (1 + tanh(0.7978846 * (x + 0.044715 * ((x*x)*x)))))`` element-wise on f32
(port of vyre-libs/src/nn/activation/gelu.rs; no flush_tiny). Workgroup [64,1,1].

Example::

    >>> gelu("input", "output", 4).buffers[0].count
    4
"""
from __future__ import annotations

from ....ir import Expr, Program
from .unary import f32_unary_activation_program, register_activation

OP_ID = "vyre-libs::nn::gelu"
GELU_SQRT_2_OVER_PI = 0.7978846   # f32 literal 0.797_884_6
GELU_COEF = 0.044715
# 128 ULP: the program uses Tanh (vyre's transcendental budget; no explicit entry).
ULP = 128


def gelu_expr(x: Expr) -> Expr:
    x3 = Expr.mul(Expr.mul(x, x), x)
    inner = Expr.mul(Expr.f32(GELU_SQRT_2_OVER_PI), Expr.add(x, Expr.mul(Expr.f32(GELU_COEF), x3)))
    return Expr.mul(Expr.f32(0.5), Expr.mul(x, Expr.add(Expr.f32(1.0), Expr.tanh(inner))))


def gelu(input: str, output: str, n: int) -> Program:
    return f32_unary_activation_program(OP_ID, input, output, n, gelu_expr)


def _build(n: int = 4) -> Program:
    return gelu("input", "output", n)


# vyre computes 0.5*x*(1+tanh(inner)) on the host (f32, glibc tanhf):
# [0, 0.841192, -0.158808, 1.9545977]
ENTRY = register_activation(OP_ID, _build, [0.0, 1.0, -1.0, 2.0], bits=[0, 0x3F57585C, 0xBE229E90, 0x3FFA3042], ulp=ULP)
