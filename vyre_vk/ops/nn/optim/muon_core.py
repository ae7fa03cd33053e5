"""Shared Muon step (vyre-libs/src/nn/optim/muon_core.rs ``muon_step_program``):

``g, m, p = ft(grads[i]), ft(momentum[i]), ft(params[i])``; ``new_m = mu*m + g``;
stores ``momentum[i] = ft(new_m)``, then ``output[i] = ft(p - lr_scale*(g + mu*new_m))`` where
``new_m`` is the same expression, so it **re-loads the momentum just stored**
(vyre's registered bytes encode this). Workgroup [64,1,1], guard ``i < n``.
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...primitives import flush_tiny


def muon_step_program(op_id: str, params: str, grads: str, momentum_buf: str, output: str, n: int,
                      lr_scale: float, momentum: float) -> Program:
    i = Expr.var("i")
    g = flush_tiny(Expr.load(grads, i))
    m = flush_tiny(Expr.load(momentum_buf, i))
    p = flush_tiny(Expr.load(params, i))
    new_m = Expr.add(Expr.mul(Expr.f32(momentum), m), g)
    nesterov = Expr.add(g, Expr.mul(Expr.f32(momentum), new_m))
    new_p = Expr.sub(p, Expr.mul(Expr.f32(lr_scale), nesterov))
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(n)), [
            Node.store(momentum_buf, i, flush_tiny(new_m)),
            Node.store(output, i, flush_tiny(new_p)),
        ]),
    ]
    return Program.wrapped(
        [BufferDecl.storage(params, 0, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.storage(grads, 1, BufferAccess.ReadOnly, DataType.F32).with_count(n),
         BufferDecl.storage(momentum_buf, 2, BufferAccess.ReadWrite, DataType.F32).with_count(n),
         BufferDecl.output(output, 3, DataType.F32).with_count(n)],
        (64, 1, 1),
        [wrap_anonymous(op_id, body)],
    )
