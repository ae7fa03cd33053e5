"""`vyre-libs::nn::qk_gain`: per-head gain on Q, ``q_out[i] = q_in[i] * gain[i / (seq_len*head_dim)]``
(port of vyre-libs/src/nn/attention/qk_gain.rs). Buffers q_in ro f32 (binding 0, total),
q_out f32 output (binding 1, total), gain ro f32 (binding 2, num_heads); guard ``i < total``;
workgroup [64,1,1]. An empty shape (total or per-head count 0) builds a program that declares
the buffers and writes nothing, as vyre does.

Example::

    >>> [(b.name, b.binding) for b in qk_gain("q_in", "q_out", "gain", 2, 1, 2).buffers]
    [('q_in', 0), ('q_out', 1), ('gain', 2)]
"""
from __future__ import annotations

from ....ir import Expr, Node, Program, wrap_anonymous
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::qk_gain"
# 4 ULP: elementary ops only (one multiply; vyre's program budget).
ULP = 4


def qk_gain(q_in: str, q_out: str, gain: str, num_heads: int, seq_len: int, head_dim: int) -> Program:
    total, per_head = num_heads * seq_len * head_dim, seq_len * head_dim
    buffers = [ro_decl(q_in, 0, total), out_decl(q_out, 1, total), ro_decl(gain, 2, num_heads)]
    if total == 0 or per_head == 0:
        return Program.wrapped(buffers, (64, 1, 1), [wrap_anonymous(OP_ID, [])])
    i = Expr.var("i")
    scaled = Expr.mul(Expr.load(q_in, i), Expr.load(gain, Expr.div(i, Expr.u32(per_head))))
    return elementwise_program(OP_ID, buffers, total, [Node.store(q_out, i, scaled)])


def _build(num_heads: int = 2, seq_len: int = 1, head_dim: int = 2) -> Program:
    return qk_gain("q_in", "q_out", "gain", num_heads, seq_len, head_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]),  # q: 2 heads x 1 seq x 2 dim
                          bytes(16),                             # q_out placeholder (legacy form)
                          pack_f32_slice([5.25, 3.0])]],         # gain per head
    expected_output=lambda: [[pack_f32_slice([5.25, 10.5, 9.0, 12.0])]],
    category="nn", ulp=ULP,
    bench=dict(num_heads=32, seq_len=2048, head_dim=128),
)
