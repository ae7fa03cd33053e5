"""`vyre-libs::nn::skip_gate`: sigmoid-gated skip connection,
``s = 1/(1+exp(-gate)); out = flush_tiny(s*branch + (1-s)*skip)``
(port of vyre-libs/src/nn/activation/skip_gate.rs). Guard ``i < n``, workgroup [64,1,1].
Buffers: gate, branch, skip ro f32 (bindings 0-2), output f32 (binding 3).

Example::

    >>> [b.name for b in skip_gate("gate", "branch", "skip", "output", 2).buffers]
    ['gate', 'branch', 'skip', 'output']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...primitives import flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::skip_gate"
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit entry).
ULP = 128


def sigmoid_expr(x: Expr) -> Expr:
    return Expr.div(Expr.f32(1.0), Expr.add(Expr.f32(1.0), Expr.exp(Expr.negate(x))))


def skip_gate(gate: str, branch: str, skip: str, output: str, n: int) -> Program:
    i = Expr.var("i")
    sig = sigmoid_expr(Expr.load(gate, i))
    result = Expr.add(Expr.mul(sig, Expr.load(branch, i)),
                      Expr.mul(Expr.sub(Expr.f32(1.0), sig), Expr.load(skip, i)))
    buffers = [ro_decl(gate, 0, n), ro_decl(branch, 1, n), ro_decl(skip, 2, n), out_decl(output, 3, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(output, i, flush_tiny(result))])


def _build(n: int = 2) -> Program:
    return skip_gate("gate", "branch", "skip", "output", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.0, 100.0]),    # gate logits
                          pack_f32_slice([10.0, 20.0]),    # branch
                          pack_f32_slice([30.0, 40.0])]],  # skip
    # vyre computes sigmoid(g)*b + (1-sigmoid(g))*s on the host: [20, 20]
    expected_output=lambda: [[pack_f32_slice([20.0, 20.0])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
