"""`vyre-libs::nn::qk_gain_backward`: ``grad_q[i] = grad_out[i] * gain[i / (seq_len*head_dim)]``
(port of vyre-libs/src/nn/backward/qk_gain_backward.rs). Buffers gain ro f32 (binding 0,
num_heads), grad_out ro f32 (binding 1, total), grad_q f32 output (binding 2, total).

Example::

    >>> qk_gain_backward("gain", "grad_out", "grad_q", 2, 1, 2).buffers[0].count
    2
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::qk_gain_backward"
# 4 ULP: elementary ops only (one multiply; vyre's program budget).
ULP = 4


def qk_gain_backward(gain: str, grad_out: str, grad_q: str, num_heads: int, seq_len: int,
                     head_dim: int) -> Program:
    total, per_head = num_heads * seq_len * head_dim, seq_len * head_dim
    i = Expr.var("i")
    grad = Expr.mul(Expr.load(grad_out, i), Expr.load(gain, Expr.div(i, Expr.u32(per_head))))
    buffers = [ro_decl(gain, 0, num_heads), ro_decl(grad_out, 1, total), out_decl(grad_q, 2, total)]
    return elementwise_program(OP_ID, buffers, total, [Node.store(grad_q, i, grad)])


def _build(num_heads: int = 2, seq_len: int = 1, head_dim: int = 2) -> Program:
    return qk_gain_backward("gain", "grad_out", "grad_q", num_heads, seq_len, head_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([5.25, 3.0]), pack_f32_slice([1.0] * 4), bytes(16)]],
    expected_output=lambda: [[pack_f32_slice([5.25, 5.25, 3.0, 3.0])]],
    category="nn", ulp=ULP,
    bench=dict(num_heads=32, seq_len=2048, head_dim=128),
)
