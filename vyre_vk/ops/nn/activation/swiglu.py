"""`vyre-libs::nn::swiglu`: ``output[i] = g * (u * (1 / (1 + exp(-g))))`` with ``g = gate[i]``,
``u = up[i]`` (port of vyre-libs/src/nn/activation/swiglu.rs; no flush_tiny). Buffers gate ro
(0, n), up ro (1, n), output (2, n); guard ``i < buf_len(output)``; workgroup [64,1,1].

Example::

    >>> [b.name for b in swiglu("gate", "up", "output", 4).buffers]
    ['gate', 'up', 'output']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from .unary import f32_bits

OP_ID = "vyre-libs::nn::swiglu"
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit window).
ULP = 128


def swiglu(gate: str, up: str, output: str, n: int) -> Program:
    i = Expr.var("i")
    g, u = Expr.load(gate, i), Expr.load(up, i)
    sigmoid_g = Expr.div(Expr.f32(1.0), Expr.add(Expr.f32(1.0), Expr.exp(Expr.negate(g))))
    return elementwise_program(OP_ID, [ro_decl(gate, 0, n), ro_decl(up, 1, n), out_decl(output, 2, n)],
                               Expr.buf_len(output), [Node.store(output, i, Expr.mul(g, Expr.mul(u, sigmoid_g)))])


def _build(n: int = 4) -> Program:
    return swiglu("gate", "up", "output", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.0, 1.0, -1.0, 2.0]),   # gate
                          pack_f32_slice([1.0, 2.0, 3.0, 4.0])]],  # up
    # vyre computes g*u*(1/(1+exp(-g))) on the host in f32 (Rust f32::exp):
    # [0, 1.4621172, -0.8068243, 7.046376]; (g*u)*s and g*(u*s) round alike here.
    expected_output=lambda: [[f32_bits([0x00000000, 0x3FBB26A8, 0xBF4E8C0A, 0x40E17BEA])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
