"""`vyre-libs::nn::logit_softcap_backward`: ``grad_in = dy * (4e / ((1+e)*(1+e)))`` with
``e = exp(-2 * |x / cap|)`` (= 1 - tanh^2(x/cap), in an overflow-free form;
port of vyre-libs/src/nn/backward/logit_softcap_backward.rs; registered with cap = 30).

Example::

    >>> logit_softcap_backward("input", "grad_out", "grad_in", 4, 30.0).entry[0].generator
    'vyre-libs::nn::logit_softcap_backward'
"""
from __future__ import annotations

from ....ir import Expr, Program
from ...registry import register_op
from ...wire import pack_f32_slice
from ..activation.unary import f32_bits
from .unary_f32 import unary_f32_backward_program

OP_ID = "vyre-libs::nn::logit_softcap_backward"
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit entry).
ULP = 128


def logit_softcap_backward(input: str, grad_out: str, grad_in: str, n: int, cap: float) -> Program:
    def local_grad(x: Expr) -> Expr:
        e = Expr.exp(Expr.mul(Expr.f32(-2.0), Expr.abs(Expr.div(x, Expr.f32(cap)))))
        denom = Expr.add(Expr.f32(1.0), e)
        return Expr.div(Expr.mul(Expr.f32(4.0), e), Expr.mul(denom, denom))
    return unary_f32_backward_program(OP_ID, input, grad_out, grad_in, n, local_grad)


def _build(n: int = 4, cap: float = 30.0) -> Program:
    return logit_softcap_backward("input", "grad_out", "grad_in", n, cap)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.0, 15.0, -60.0, 100.0]), pack_f32_slice([1.0] * 4), bytes(16)]],
    # Listed bit patterns in vyre: [1.0, 0.7864478, 0.07065082, 0.0050776033]
    expected_output=lambda: [[f32_bits([0x3F800000, 0x3F4954A5, 0x3D90B161, 0x3BA66206])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
