"""`vyre-libs::nn::relu`: ``output[i] = max(0u, input[i])`` on **u32** (the identity; vyre keeps
the Category-A shape for a later signed overload). Port of vyre-libs/src/nn/activation/relu.rs.

Buffers: input ro u32 (binding 0, count n; runtime-sized when n == 0), output u32 (binding 1,
count max(n, 1), readback bytes 0..4n). Guard ``i < buf_len(input)``. Workgroup [64, 1, 1].

Example::

    >>> relu("input", "output", 4).workgroup_size
    (64, 1, 1)
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl
from ...registry import register_case
from ...wire import pack_u32_slice

OP_ID = "vyre-libs::nn::relu"
# u32 output: compared byte for byte (no f32 window applies).
ULP = None


def relu_u32_expr(x: Expr) -> Expr:
    return Expr.max(Expr.u32(0), x)


def relu_f32_expr(x: Expr) -> Expr:
    """The f32 form fused activation builders use (linear_relu)."""
    return Expr.max(Expr.f32(0.0), x)


def relu(input: str, output: str, n: int) -> Program:
    input_decl = BufferDecl.storage(input, 0, BufferAccess.ReadOnly, DataType.U32)
    if n != 0:
        input_decl = input_decl.with_count(n)
    output_decl = (out_decl(output, 1, max(n, 1), DataType.U32)
                   .with_output_byte_range(0, n * 4))
    i = Expr.var("i")
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.buf_len(input)),
                     [Node.store(output, i, relu_u32_expr(Expr.load(input, i)))]),
    ]
    return Program.wrapped([input_decl, output_decl], (64, 1, 1), [wrap_anonymous(OP_ID, body)])


def _build(n: int = 4) -> Program:
    return relu("input", "output", n)


ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0, 5, 10, 0])], [pack_u32_slice([0, 5, 10, 0])], category="nn",
                      ulp=ULP, bench=dict(n=1 << 24))
