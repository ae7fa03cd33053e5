"""`vyre-libs::nn::silu`: ``y = flush_tiny(x * (1 / (1 + exp(-x))))`` element-wise on f32
(port of vyre-libs/src/nn/activation/silu.rs). Guard ``i < buf_len(input)``, workgroup [64,1,1].

Example::

    >>> silu("input", "output", 4).entry[0].generator
    'vyre-libs::nn::silu'
"""
from __future__ import annotations

from ....ir import Expr, Program
from ...primitives import flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice
from .unary import f32_bits, f32_unary_activation_program

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


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.0, 1.0, -1.0, 2.0])]],
    # vyre computes x / (1 + exp(-x)) on the host (f32, glibc expf):
    # [0, 0.7310586, -0.26894143, 1.761594]
    expected_output=lambda: [[f32_bits([0x00000000, 0x3F3B26A8, 0xBE89B2B1, 0x3FE17BEA])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
