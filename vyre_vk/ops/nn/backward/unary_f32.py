"""Shared f32 unary backward skeleton (vyre-libs/src/nn/backward/unary_f32.rs):
``i = gid.x; if i < n { grad_in[i] = grad_out[i] * local_grad(input[i]) }``; input, grad_out ro f32
(bindings 0, 1), grad_in f32 output (binding 2), workgroup [64,1,1]."""
from __future__ import annotations

from typing import Callable

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous


def unary_f32_backward_program(op_id: str, input: str, grad_out: str, grad_in: str, n: int,
                               local_grad: Callable[[Expr], Expr]) -> Program:
    i = Expr.var("i")
    grad = Expr.mul(Expr.load(grad_out, i), local_grad(Expr.load(input, i)))
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(n)), [Node.store(grad_in, i, grad)]),
    ]
    return Program.wrapped(
        [BufferDecl.storage(input, 0, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.storage(grad_out, 1, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.output(grad_in, 2, DataType.F32).with_count(n)],
        (64, 1, 1),
        [wrap_anonymous(op_id, body)],
    )
