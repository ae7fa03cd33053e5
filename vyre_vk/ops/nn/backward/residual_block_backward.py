"""`vyre-libs::nn::residual_block_backward`: backward of ``out = x + attn + mlp``: copies
``grad_out`` into ``grad_x`` (output, binding 1), ``grad_attn`` and ``grad_mlp`` (plain
ReadWrite, bindings 2-3: input slots too) (port of vyre-libs/src/nn/backward/residual_block_backward.rs).

Example::

    >>> [b.name for b in residual_block_backward("grad_out", "grad_x", "grad_attn", "grad_mlp", 4).buffers]
    ['grad_out', 'grad_x', 'grad_attn', 'grad_mlp']
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import OpEntry, register
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::residual_block_backward"
# 4 ULP: elementary (copies only; vyre's program budget). Results are bit-exact.
ULP = 4


def residual_block_backward(grad_out: str, grad_x: str, grad_attn: str, grad_mlp: str, n: int) -> Program:
    i = Expr.var("i")
    dy = Expr.load(grad_out, i)
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(n)), [
            Node.store(grad_x, i, dy), Node.store(grad_attn, i, dy), Node.store(grad_mlp, i, dy)]),
    ]
    return Program.wrapped(
        [BufferDecl.storage(grad_out, 0, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.output(grad_x, 1, DataType.F32).with_count(n),
         BufferDecl.storage(grad_attn, 2, BufferAccess.ReadWrite, DataType.F32).with_count(n),
         BufferDecl.storage(grad_mlp, 3, BufferAccess.ReadWrite, DataType.F32).with_count(n)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 4) -> Program:
    return residual_block_backward("grad_out", "grad_x", "grad_attn", "grad_mlp", n)


ENTRY = register(OpEntry(
    id=OP_ID, build=_build, builder=_build, params={"n": 4},
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]), bytes(16), bytes(16)]],
    expected_output=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0])] * 3],
    category="nn", ulp=ULP,
))
