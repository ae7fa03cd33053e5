"""`vyre-libs::nn::ln_scale_backward`: backward of ``y = x * scale``:
``grad_x = dy * scale`` (output, binding 3) and ``grad_scale = dy * x`` (plain ReadWrite,
binding 4: an input slot too, its bytes are its initial contents)
(port of vyre-libs/src/nn/backward/ln_scale_backward.rs).

Example::

    >>> [b.name for b in ln_scale_backward("input", "scale", "grad_out", "grad_x", "grad_scale", 4).buffers]
    ['input', 'scale', 'grad_out', 'grad_x', 'grad_scale']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::ln_scale_backward"
# 4 ULP: elementary ops only (one multiply per output; vyre's program budget).
ULP = 4


def ln_scale_backward(input: str, scale: str, grad_out: str, grad_x: str, grad_scale: str, n: int) -> Program:
    i = Expr.var("i")
    dy = Expr.load(grad_out, i)
    buffers = [ro_decl(input, 0, n), ro_decl(scale, 1, n), ro_decl(grad_out, 2, n), out_decl(grad_x, 3, n),
               rw_decl(grad_scale, 4, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(grad_x, i, Expr.mul(dy, Expr.load(scale, i))),
                                                   Node.store(grad_scale, i, Expr.mul(dy, Expr.load(input, i)))])


def _build(n: int = 4) -> Program:
    return ln_scale_backward("input", "scale", "grad_out", "grad_x", "grad_scale", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]),   # input
                          pack_f32_slice([0.5, 2.0, 1.0, 0.1]),   # scale
                          pack_f32_slice([1.0] * 4),              # grad_out
                          bytes(16)]],                            # grad_scale (initial contents)
    expected_output=lambda: [[pack_f32_slice([0.5, 2.0, 1.0, 0.1]),   # grad_x
                              pack_f32_slice([1.0, 2.0, 3.0, 4.0])]],  # grad_scale
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
