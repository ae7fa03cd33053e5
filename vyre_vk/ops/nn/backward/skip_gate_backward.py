"""`vyre-libs::nn::skip_gate_backward`: ``grad_gate = dy * ((s * (1 - s)) * (branch - skip))``,
``s = 1/(1+exp(-gate))`` (port of vyre-libs/src/nn/backward/skip_gate_backward.rs).
Buffers gate, branch, skip, grad_out ro f32 (bindings 0-3), grad_gate f32 output (binding 4).

Example::

    >>> len(skip_gate_backward("gate", "branch", "skip", "grad_out", "grad_gate", 2).buffers)
    5
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from ..activation.skip_gate import sigmoid_expr
from ..activation.unary import f32_bits

OP_ID = "vyre-libs::nn::skip_gate_backward"
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit entry).
ULP = 128


def skip_gate_backward(gate: str, branch: str, skip: str, grad_out: str, grad_gate: str, n: int) -> Program:
    i = Expr.var("i")
    sig = sigmoid_expr(Expr.load(gate, i))
    grad = Expr.mul(Expr.load(grad_out, i), Expr.mul(
        Expr.mul(sig, Expr.sub(Expr.f32(1.0), sig)),
        Expr.sub(Expr.load(branch, i), Expr.load(skip, i))))
    buffers = [ro_decl(gate, 0, n), ro_decl(branch, 1, n), ro_decl(skip, 2, n), ro_decl(grad_out, 3, n),
               out_decl(grad_gate, 4, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(grad_gate, i, grad)])


def _build(n: int = 2) -> Program:
    return skip_gate_backward("gate", "branch", "skip", "grad_out", "grad_gate", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.0, 100.0]), pack_f32_slice([10.0, 20.0]),
                          pack_f32_slice([30.0, 40.0]), pack_f32_slice([1.0, 1.0]), bytes(8)]],
    # vyre computes s*(1-s)*(b-skip) on the host: [-5.0, -0.0] (sigmoid(100) == 1.0, times -20 -> -0)
    expected_output=lambda: [[f32_bits([0xC0A00000, 0x80000000])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
