"""Shared f32 unary backward skeleton (vyre-libs/src/nn/backward/unary_f32.rs):
``i = gid.x; if i < n { grad_in[i] = grad_out[i] * local_grad(input[i]) }``; input, grad_out ro f32
(bindings 0, 1), grad_in f32 output (binding 2), workgroup [64,1,1]."""
from __future__ import annotations

from typing import Callable

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl


def unary_f32_backward_program(op_id: str, input: str, grad_out: str, grad_in: str, n: int,
                               local_grad: Callable[[Expr], Expr]) -> Program:
    i = Expr.var("i")
    grad = Expr.mul(Expr.load(grad_out, i), local_grad(Expr.load(input, i)))
    return elementwise_program(op_id, [ro_decl(input, 0, n), ro_decl(grad_out, 1, n), out_decl(grad_in, 2, n)], n,
                               [Node.store(grad_in, i, grad)])
