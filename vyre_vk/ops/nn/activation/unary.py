"""Shared f32 unary activation skeleton (vyre-libs/src/nn/activation/unary.rs):
``i = gid.x; if i < buf_len(input) { output[i] = op(input[i]) }``, input ro f32 (binding 0),
output f32 (binding 1), workgroup [64, 1, 1]."""
from __future__ import annotations

from typing import Callable

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous


def f32_unary_activation_program(op_id: str, input: str, output: str, n: int,
                                 op: Callable[[Expr], Expr]) -> Program:
    i = Expr.var("i")
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.buf_len(input)), [Node.store(output, i, op(Expr.load(input, i)))]),
    ]
    return Program.wrapped(
        [BufferDecl.storage(input, 0, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.output(output, 1, DataType.F32).with_count(n)],
        (64, 1, 1),
        [wrap_anonymous(op_id, body)],
    )


def f32_bits(bits: list[int]) -> bytes:
    """Pack f32 bit patterns (how vyre writes `f32::from_bits` vectors)."""
    import numpy as np
    return np.asarray(bits, dtype="<u4").tobytes()
