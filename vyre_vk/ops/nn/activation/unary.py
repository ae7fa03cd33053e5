"""Shared f32 unary activation skeleton (vyre-libs/src/nn/activation/unary.rs):
``i = gid.x; if i < buf_len(input) { output[i] = op(input[i]) }``, input ro f32 (binding 0),
output f32 (binding 1), workgroup [64, 1, 1]."""
from __future__ import annotations

from typing import Callable, Optional

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import OpEntry, register_case
from ...wire import pack_f32_slice


def f32_unary_activation_program(op_id: str, input: str, output: str, n: int,
                                 op: Callable[[Expr], Expr]) -> Program:
    i = Expr.var("i")
    return elementwise_program(op_id, [ro_decl(input, 0, n), out_decl(output, 1, n)], Expr.buf_len(input),
                               [Node.store(output, i, op(Expr.load(input, i)))])


def f32_bits(bits: list[int]) -> bytes:
    """Pack f32 bit patterns (how vyre writes `f32::from_bits` vectors)."""
    import numpy as np
    return np.asarray(bits, dtype="<u4").tobytes()


def register_activation(op_id: str, builder: Callable[..., Program], inputs: list[float],
                        expected: Optional[list[float]] = None, *, bits: Optional[list[int]] = None,
                        ulp: Optional[int]) -> OpEntry:
    """Register a unary f32 activation: one case of f32 inputs and their `expected` outputs (or their
    f32 `bits`, as vyre lists transcendental results), category nn, benchmarked at 2^24 elements:
    what every activation on this skeleton shares."""
    result = f32_bits(bits) if bits is not None else pack_f32_slice(expected or [])
    return register_case(op_id, builder, [pack_f32_slice(inputs)], [result], category="nn", ulp=ulp,
                         bench=dict(n=1 << 24))
