"""`vyre-libs::nn::partial_rope_backward`: backward of partial RoPE (rotation by -theta)
(port of vyre-libs/src/nn/backward/partial_rope_backward.rs).

For ``i = head*S*D + pos*D + dim``: if ``dim < rope_dims``, with the pair ``(e, o) =
(grad_out[row + 2*(dim/2)], grad_out[row + 2*(dim/2) + 1])`` and ``c, s = cos/sin[pos*(rope/2) + dim/2]``:
``g_even = e*c + o*s``, ``g_odd = (-e)*s + o*c`` and ``grad_in[i] = g_even*(1-odd) + g_odd*odd``
where ``odd = f32(dim - (dim/2)*2)`` (an f32 0/1 blend, both arms evaluated); otherwise
``grad_in[i] = grad_out[i]``. Buffers: grad_out ro (0, total), cos/sin ro (1-2, S*rope/2),
grad_in output (3, total); workgroup [64,1,1].

Example::

    >>> partial_rope_backward("grad_out", "cos", "sin", "grad_in", 1, 1, 4, 2).buffers[1].count
    1
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program
from ...builder import elementwise_program
from ...registry import register_op
from ...wire import pack_f32_slice
from ..attention.partial_rope import rope_buffers

OP_ID = "vyre-libs::nn::partial_rope_backward"
# 4 ULP: elementary ops only (vyre's program budget; the blend is mul/add, contractible to fma).
ULP = 4


def partial_rope_backward(grad_out: str, cos_table: str, sin_table: str, grad_in: str,
                          num_heads: int, seq_len: int, head_dim: int, rope_dims: int) -> Program:
    total = num_heads * seq_len * head_dim
    half_rope = rope_dims // 2
    per_head = seq_len * head_dim
    i = Expr.var("i")
    head = Expr.div(i, Expr.u32(per_head))
    pos_in_head = Expr.sub(i, Expr.mul(head, Expr.u32(per_head)))
    pos = Expr.div(pos_in_head, Expr.u32(head_dim))
    dim = Expr.sub(pos_in_head, Expr.mul(pos, Expr.u32(head_dim)))
    pair_idx = Expr.div(dim, Expr.u32(2))
    is_odd = Expr.sub(dim, Expr.mul(pair_idx, Expr.u32(2)))
    table_idx = Expr.add(Expr.mul(pos, Expr.u32(half_rope)), pair_idx)
    row_base = Expr.add(Expr.mul(head, Expr.u32(per_head)), Expr.mul(pos, Expr.u32(head_dim)))
    even_idx = Expr.add(row_base, Expr.mul(pair_idx, Expr.u32(2)))
    odd_idx = Expr.add(even_idx, Expr.u32(1))
    dy_even, dy_odd = Expr.load(grad_out, even_idx), Expr.load(grad_out, odd_idx)
    c, s = Expr.load(cos_table, table_idx), Expr.load(sin_table, table_idx)
    grad_even = Expr.add(Expr.mul(dy_even, c), Expr.mul(dy_odd, s))
    grad_odd = Expr.add(Expr.mul(Expr.negate(dy_even), s), Expr.mul(dy_odd, c))
    odd_f = Expr.cast(DataType.F32, is_odd)
    rotated = Expr.add(Expr.mul(grad_even, Expr.sub(Expr.f32(1.0), odd_f)), Expr.mul(grad_odd, odd_f))
    buffers = rope_buffers(grad_out, cos_table, sin_table, grad_in, total, seq_len * half_rope)
    return elementwise_program(OP_ID, buffers, total, [
        Node.if_then(Expr.lt(dim, Expr.u32(rope_dims)), [Node.store(grad_in, i, rotated)]),
        Node.if_then(Expr.ge(dim, Expr.u32(rope_dims)), [Node.store(grad_in, i, Expr.load(grad_out, i))]),
    ])


def _build(num_heads: int = 1, seq_len: int = 1, head_dim: int = 4, rope_dims: int = 2) -> Program:
    return partial_rope_backward("grad_out", "cos", "sin", "grad_in", num_heads, seq_len, head_dim, rope_dims)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 0.0, 5.0, 6.0]),  # grad_out
                          pack_f32_slice([1.0]),                 # cos
                          pack_f32_slice([0.0]),                 # sin
                          bytes(16)]],                           # grad_in placeholder (legacy form)
    # cos=1, sin=0: the backward rotation is the identity
    expected_output=lambda: [[pack_f32_slice([1.0, 0.0, 5.0, 6.0])]],
    category="nn", ulp=ULP,
    bench=dict(num_heads=32, seq_len=2048, head_dim=128, rope_dims=64),
)
