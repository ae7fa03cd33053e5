"""`vyre-libs::nn::partial_rope`: rotary position embedding on the first ``rope_dims`` channels
of each head, identity on the rest (port of vyre-libs/src/nn/attention/partial_rope.rs).

For ``i``: ``dim = i % head_dim``, ``token = (i / head_dim) % seq_len``, pair ``(x0, x1) =
(input[i - dim%2], input[i - dim%2 + 1])``, ``c, s = cos/sin[token*(rope/2) + dim/2]``; even lanes
``x0*c - x1*s``, odd lanes ``x0*s + x1*c`` (a Select, both arms evaluated), lanes with
``dim >= rope_dims`` copy ``input[i]``. Buffers input ro (0, total), cos/sin ro (1-2,
seq_len*rope/2), output (3, total); guard ``i < total``; workgroup [64,1,1]. Invalid shapes
(a zero dimension, odd or oversized rope_dims) raise ValueError where vyre builds a trap program.

Example::

    >>> partial_rope("input", "cos", "sin", "output", 1, 2, 4, 2).buffers[1].count
    2
"""
from __future__ import annotations

from ....ir import BufferDecl, Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::partial_rope"
# 4 ULP: elementary ops only (two products and a sum per lane, contractible to fma).
ULP = 4


def rope_buffers(data: str, cos_table: str, sin_table: str, output: str, total: int,
                 table_len: int) -> list[BufferDecl]:
    """The (forward or backward) rotation's buffers: data ro (0), cos and sin tables ro (1, 2), output (3)."""
    return [ro_decl(data, 0, total), ro_decl(cos_table, 1, table_len), ro_decl(sin_table, 2, table_len),
            out_decl(output, 3, total)]


def partial_rope(input: str, cos_table: str, sin_table: str, output: str, num_heads: int,
                 seq_len: int, head_dim: int, rope_dims: int) -> Program:
    if num_heads == 0 or seq_len == 0 or head_dim == 0:
        raise OpParamError(f"Fix: partial_rope requires positive num_heads, seq_len, and head_dim; got "
                         f"num_heads={num_heads}, seq_len={seq_len}, head_dim={head_dim}.")
    if rope_dims > head_dim or rope_dims % 2 != 0:
        raise OpParamError(f"Fix: partial_rope requires an even rope_dims <= head_dim; got "
                         f"rope_dims={rope_dims}, head_dim={head_dim}.")
    total = num_heads * seq_len * head_dim
    half_rope = rope_dims // 2
    i = Expr.var("i")
    dim = Expr.rem(i, Expr.u32(head_dim))
    token = Expr.rem(Expr.div(i, Expr.u32(head_dim)), Expr.u32(seq_len))
    pair = Expr.div(dim, Expr.u32(2))
    parity = Expr.rem(dim, Expr.u32(2))
    pair_base = Expr.sub(i, parity)
    x0, x1 = Expr.load(input, pair_base), Expr.load(input, Expr.add(pair_base, Expr.u32(1)))
    table_idx = Expr.add(Expr.mul(token, Expr.u32(half_rope)), pair)
    c, s = Expr.load(cos_table, table_idx), Expr.load(sin_table, table_idx)
    rotated = Expr.select(Expr.eq(parity, Expr.u32(0)),
                          Expr.sub(Expr.mul(x0, c), Expr.mul(x1, s)),
                          Expr.add(Expr.mul(x0, s), Expr.mul(x1, c)))
    value = Expr.select(Expr.lt(dim, Expr.u32(rope_dims)), rotated, Expr.load(input, i))
    return elementwise_program(OP_ID, rope_buffers(input, cos_table, sin_table, output, total, seq_len * half_rope),
                               total, [Node.store(output, i, value)])


def _build(num_heads: int = 1, seq_len: int = 2, head_dim: int = 4, rope_dims: int = 2) -> Program:
    return partial_rope("input", "cos", "sin", "output", num_heads, seq_len, head_dim, rope_dims)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),  # input
                          pack_f32_slice([1.0, 1.0]),                                # cos table
                          pack_f32_slice([0.0, 0.0]),                                # sin table
                          bytes(32)]],                                   # output placeholder (legacy form)
    # cos=1, sin=0: the rotation is the identity
    expected_output=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])]],
    category="nn", ulp=ULP,
    bench=dict(num_heads=32, seq_len=2048, head_dim=128, rope_dims=64),
)
