"""`vyre-libs::nn::silu`: ``y = flush_tiny(x * (1 / (1 + exp(-x))))`` element-wise on f32
(port of vyre-libs/src/nn/activation/silu.rs). Guard ``i < buf_len(input)``, workgroup [64,1,1].

Example::

    >>> p = silu("input", "output", 4)
    >>> p.entry[0].generator, p.workgroup_size
    ('vyre-libs::nn::silu', (64, 1, 1))
"""
from __future__ import annotations

from ....ir import Expr, Program
from ...primitives import flush_tiny
from .unary import f32_unary_activation_program, register_activation

OP_ID = "vyre-libs::nn::silu"
# 128 ULP: the program uses Exp (vyre: max(explicit 1, transcendental budget 128)).
ULP = 128


def silu_expr(x: Expr) -> Expr:
    sigmoid_x = Expr.div(Expr.f32(1.0), Expr.add(Expr.f32(1.0), Expr.exp(Expr.negate(x))))
    return flush_tiny(Expr.mul(x, sigmoid_x))


def silu(input: str, output: str, n: int) -> Program:
    return f32_unary_activation_program(OP_ID, input, output, n, silu_expr)


def _build(n: int = 4) -> Program:
    return silu("input", "output", n)


# vyre computes x / (1 + exp(-x)) on the host (f32, glibc expf):
# [0, 0.7310586, -0.26894143, 1.761594]
ENTRY = register_activation(OP_ID, _build, [0.0, 1.0, -1.0, 2.0], bits=[0, 0x3F3B26A8, 0xBE89B2B1, 0x3FE17BEA], ulp=ULP)
