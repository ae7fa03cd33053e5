"""Shared Muon step (vyre-libs/src/nn/optim/muon_core.rs ``muon_step_program``):

``g, m, p = ft(grads[i]), ft(momentum[i]), ft(params[i])``; ``new_m = mu*m + g``;
stores ``momentum[i] = ft(new_m)``, then ``output[i] = ft(p - lr_scale*(g + mu*new_m))`` where
``new_m`` is the same expression, so it **re-loads the momentum just stored**
(vyre's registered bytes encode this). Workgroup [64,1,1], guard ``i < n``.
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl, rw_decl
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
    buffers = [ro_decl(params, 0, n), ro_decl(grads, 1, n), rw_decl(momentum_buf, 2, n), out_decl(output, 3, n)]
    return elementwise_program(op_id, buffers, n, [Node.store(momentum_buf, i, flush_tiny(new_m)),
                                                   Node.store(output, i, flush_tiny(new_p))])
