"""`vyre-libs::nn::leaky_relu_sq_backward`: ``grad_in = grad_out * max(0.5*x, 2*x)``
(derivative of max(0.5x, x)^2; port of vyre-libs/src/nn/backward/leaky_relu_sq_backward.rs).

Example::

    >>> leaky_relu_sq_backward("input", "grad_out", "grad_in", 4).buffers[2].name
    'grad_in'
"""
from __future__ import annotations

from ....ir import Expr, Program
from ...registry import register_op
from ...wire import pack_f32_slice
from .unary_f32 import unary_f32_backward_program

OP_ID = "vyre-libs::nn::leaky_relu_sq_backward"
# 4 ULP: elementary ops only (vyre's program budget); 0.5x and 2x are exact, one rounding in dy*d.
ULP = 4


def leaky_relu_sq_backward(input: str, grad_out: str, grad_in: str, n: int) -> Program:
    return unary_f32_backward_program(OP_ID, input, grad_out, grad_in, n, lambda x: Expr.max(
        Expr.mul(Expr.f32(0.5), x), Expr.mul(Expr.f32(2.0), x)))


def _build(n: int = 4) -> Program:
    return leaky_relu_sq_backward("input", "grad_out", "grad_in", n)


ENTRY = register_op(
    OP_ID, _build,
    # legacy form: the grad_in placeholder is ignored
    test_inputs=lambda: [[pack_f32_slice([2.0, -4.0, 0.0, 1.0]), pack_f32_slice([1.0] * 4), bytes(16)]],
    expected_output=lambda: [[pack_f32_slice([4.0, -2.0, 0.0, 2.0])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
