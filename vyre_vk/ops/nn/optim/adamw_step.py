"""`vyre-libs::optim::adamw_step`: in-place AdamW step on f32 (port of
vyre-libs/src/nn/optim/adamw_step.rs), no bias correction, workgroup [64,1,1], guard ``i < n``.

Stores, in order: ``m = ft(b1*ft(m) + (1-b1)*g)``; ``v = ft(b2*ft(v) + (1-b2)*g*g)``;
``params = ft(ft(p)*(1 - lr*wd) - lr*(new_m / (sqrt(new_v) + eps)))`` with ``g = ft(grads[i])``,
``ft = flush_tiny``; the host folds ``1-b1``, ``1-b2``, ``1-lr*wd`` in f32. ``new_m``/``new_v``
in the params expression are the same expressions, so they **re-load m and v after the two
stores above** (vyre's registered bytes encode this: the moment update reaches params twice).

Example::

    >>> [(b.name, b.access.name) for b in adamw_step("params", "grads", "m", "v", 2, 1e-3, .9, .999, 1e-8, .01).buffers]
    [('params', 'ReadWrite'), ('grads', 'ReadOnly'), ('m', 'ReadWrite'), ('v', 'ReadWrite')]
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, ro_decl, rw_decl
from ...primitives import flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice
from ._f32 import f32, f32_mul, f32_sub

OP_ID = "vyre-libs::optim::adamw_step"
# 128 ULP: the program uses Sqrt (vyre's transcendental budget).
ULP = 128


def adamw_step(params: str, grads: str, m_buf: str, v_buf: str, n: int, lr: float, beta1: float,
               beta2: float, eps: float, wd: float) -> Program:
    i = Expr.var("i")
    g = flush_tiny(Expr.load(grads, i))
    m = flush_tiny(Expr.load(m_buf, i))
    v = flush_tiny(Expr.load(v_buf, i))
    p = flush_tiny(Expr.load(params, i))
    new_m = Expr.add(Expr.mul(Expr.f32(f32(beta1)), m), Expr.mul(Expr.f32(f32_sub(1.0, beta1)), g))
    new_v = Expr.add(Expr.mul(Expr.f32(f32(beta2)), v),
                     Expr.mul(Expr.f32(f32_sub(1.0, beta2)), Expr.mul(g, g)))
    decayed = Expr.mul(p, Expr.f32(f32_sub(1.0, f32_mul(lr, wd))))
    denom = Expr.add(Expr.sqrt(new_v), Expr.f32(f32(eps)))
    new_p = Expr.sub(decayed, Expr.mul(Expr.f32(f32(lr)), Expr.div(new_m, denom)))
    buffers = [rw_decl(params, 0, n), ro_decl(grads, 1, n), rw_decl(m_buf, 2, n), rw_decl(v_buf, 3, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(m_buf, i, flush_tiny(new_m)),
                                                   Node.store(v_buf, i, flush_tiny(new_v)),
                                                   Node.store(params, i, flush_tiny(new_p))])


def _build(n: int = 2, lr: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
           wd: float = 0.01) -> Program:
    return adamw_step("params", "grads", "m", "v", n, lr, beta1, beta2, eps, wd)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0]), pack_f32_slice([0.1, 0.2]), pack_f32_slice([0.0, 0.0]),
                          pack_f32_slice([0.0, 0.0])]],
    # vyre's listed bytes: params [0.99574035, 1.9957304]; m [0.010000003, 0.020000005];
    # v [9.9998715e-6, 3.9999486e-5]
    expected_output=lambda: [[bytes([215, 232, 126, 63, 24, 116, 255, 63]),
                              bytes([13, 215, 35, 60, 13, 215, 163, 60]),
                              bytes([31, 197, 39, 55, 31, 197, 39, 56])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
