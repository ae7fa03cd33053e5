"""`vyre-libs::nn::embedding`: ``output[i] = table[tokens[i / dim] * dim + (i - (i/dim)*dim)]``
(port of vyre-libs/src/nn/activation/embedding.rs, built on the shared indexed-map skeleton).
Buffers: table ro f32 (binding 0, runtime-sized), tokens ro u32 (binding 1, n), output f32
(binding 2, n*dim). Guard ``i < n*dim``, workgroup [64,1,1].

Example::

    >>> embedding("table", "tokens", "output", 2, 3).buffers[0].count
    0
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Program
from ...builder import build_indexed_map, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice

OP_ID = "vyre-libs::nn::embedding"
# 4 ULP is vyre's budget for elementary programs; a gather is bit-exact (observed 0 ULP).
ULP = 4


def embedding(embed_table: str, tokens: str, output: str, n: int, embed_dim: int) -> Program:
    total_out = n * embed_dim

    def f(i: Expr):
        seq_idx = Expr.div(i, Expr.u32(embed_dim))
        dim_idx = Expr.sub(i, Expr.mul(seq_idx, Expr.u32(embed_dim)))
        token_id = Expr.load(tokens, seq_idx)
        return i, Expr.load(embed_table, Expr.add(Expr.mul(token_id, Expr.u32(embed_dim)), dim_idx))

    return build_indexed_map(
        OP_ID,
        [BufferDecl.storage(embed_table, 0, BufferAccess.ReadOnly, DataType.F32),
         ro_decl(tokens, 1, n, DataType.U32),
         out_decl(output, 2, total_out)],
        output, total_out, (64, 1, 1), f)


def _build(n: int = 2, embed_dim: int = 3) -> Program:
    return embedding("table", "tokens", "output", n, embed_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),  # table: 2 vocab x 3 dim
                          pack_u32_slice([1, 0])]],                        # tokens
    expected_output=lambda: [[pack_f32_slice([4.0, 5.0, 6.0, 1.0, 2.0, 3.0])]],
    category="nn", ulp=ULP,
    bench=dict(n=8192, embed_dim=1024),
)
