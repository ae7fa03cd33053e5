"""`vyre-libs::nn::logit_softcap`: ``y = flush_tiny(tanh(x / cap) * cap)`` element-wise on f32
(port of vyre-libs/src/nn/activation/logit_softcap.rs; registered with cap = 30). Workgroup [64,1,1].

Example::

    >>> logit_softcap("input", "output", 4, 30.0).entry[0].generator
    'vyre-libs::nn::logit_softcap'
"""
from __future__ import annotations

from ....ir import Expr, Program
from ...primitives import flush_tiny
from .unary import f32_unary_activation_program, register_activation

OP_ID = "vyre-libs::nn::logit_softcap"
# 128 ULP: the program uses Tanh (vyre: max(explicit 2, transcendental budget 128)).
ULP = 128


def logit_softcap(input: str, output: str, n: int, cap: float) -> Program:
    def op(x: Expr) -> Expr:
        return flush_tiny(Expr.mul(Expr.tanh(Expr.div(x, Expr.f32(cap))), Expr.f32(cap)))
    return f32_unary_activation_program(OP_ID, input, output, n, op)


def _build(n: int = 4, cap: float = 30.0) -> Program:
    return logit_softcap("input", "output", n, cap)


# Listed bit patterns in vyre: [0, 13.863514, -28.920828, 29.92374]
ENTRY = register_activation(OP_ID, _build, [0.0, 15.0, -60.0, 100.0],
                            bits=[0, 0x415DD0F4, 0xC1E75DDB, 0x41EF63D2], ulp=ULP)
