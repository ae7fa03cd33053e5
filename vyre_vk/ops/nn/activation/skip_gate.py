"""`vyre-libs::nn::skip_gate`: sigmoid-gated skip connection,
``s = 1/(1+exp(-gate)); out = flush_tiny(s*branch + (1-s)*skip)``
(port of vyre-libs/src/nn/activation/skip_gate.rs). Guard ``i < n``, workgroup [64,1,1].
Buffers: gate, branch, skip ro f32 (bindings 0-2), output f32 (binding 3).

Example::

    >>> [b.name for b in skip_gate("gate", "branch", "skip", "output", 2).buffers]
    ['gate', 'branch', 'skip', 'output']
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...primitives import flush_tiny
from ...registry import OpEntry, register
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
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(n)), [Node.store(output, i, flush_tiny(result))]),
    ]
    return Program.wrapped(
        [BufferDecl.storage(gate, 0, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.storage(branch, 1, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.storage(skip, 2, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.output(output, 3, DataType.F32).with_count(n)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 2) -> Program:
    return skip_gate("gate", "branch", "skip", "output", n)


ENTRY = register(OpEntry(
    id=OP_ID, build=_build, builder=_build, params={"n": 2},
    test_inputs=lambda: [[pack_f32_slice([0.0, 100.0]),    # gate logits
                          pack_f32_slice([10.0, 20.0]),    # branch
                          pack_f32_slice([30.0, 40.0])]],  # skip
    # vyre computes sigmoid(g)*b + (1-sigmoid(g))*s on the host: [20, 20]
    expected_output=lambda: [[pack_f32_slice([20.0, 20.0])]],
    category="nn", ulp=ULP,
))
