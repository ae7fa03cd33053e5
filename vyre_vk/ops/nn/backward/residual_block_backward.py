"""`vyre-libs::nn::residual_block_backward`: backward of ``out = x + attn + mlp``: copies
``grad_out`` into ``grad_x`` (output, binding 1), ``grad_attn`` and ``grad_mlp`` (plain
ReadWrite, bindings 2-3: input slots too) (port of vyre-libs/src/nn/backward/residual_block_backward.rs).

Example::

    >>> [b.name for b in residual_block_backward("grad_out", "grad_x", "grad_attn", "grad_mlp", 4).buffers]
    ['grad_out', 'grad_x', 'grad_attn', 'grad_mlp']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::residual_block_backward"
# 4 ULP: elementary (copies only; vyre's program budget). Results are bit-exact.
ULP = 4


def residual_block_backward(grad_out: str, grad_x: str, grad_attn: str, grad_mlp: str, n: int) -> Program:
    i = Expr.var("i")
    dy = Expr.load(grad_out, i)
    buffers = [ro_decl(grad_out, 0, n), out_decl(grad_x, 1, n), rw_decl(grad_attn, 2, n), rw_decl(grad_mlp, 3, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(name, i, dy) for name in (grad_x, grad_attn, grad_mlp)])


def _build(n: int = 4) -> Program:
    return residual_block_backward("grad_out", "grad_x", "grad_attn", "grad_mlp", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]), bytes(16), bytes(16)]],
    expected_output=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0])] * 3],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
