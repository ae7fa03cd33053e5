"""`vyre-libs::optim::ema_apply`: in place ``ema[i] = flush_tiny(decay*ema[i] + (1-decay)*theta[i])``
on f32 (port of vyre-libs/src/nn/optim/ema_apply.rs); ``1-decay`` is folded in f32 on the host
(0.9 -> 0.100000024). Workgroup [64,1,1], guard ``i < n``.

Example::

    >>> [b.name for b in ema_apply("ema", "theta", 4, 0.9).buffers]
    ['ema', 'theta']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, ro_decl, rw_decl
from ...primitives import flush_tiny
from ...registry import register_op
from ...wire import pack_f32_slice
from ._f32 import f32, f32_sub

OP_ID = "vyre-libs::optim::ema_apply"
# 4 ULP: elementary f32 ops only (program budget 4 > vyre's explicit 1; effective = max).
ULP = 4


def ema_apply(ema: str, theta: str, n: int, decay: float) -> Program:
    i = Expr.var("i")
    updated = Expr.add(Expr.mul(Expr.f32(f32(decay)), Expr.load(ema, i)),
                       Expr.mul(Expr.f32(f32_sub(1.0, decay)), Expr.load(theta, i)))
    return elementwise_program(OP_ID, [rw_decl(ema, 0, n), ro_decl(theta, 1, n)], n,
                               [Node.store(ema, i, flush_tiny(updated))])


def _build(n: int = 4, decay: float = 0.9) -> Program:
    return ema_apply("ema", "theta", n, decay)


def _expected():
    import numpy as np
    d = np.float32(0.9)
    e = np.asarray([10.0, 20.0, 30.0, 40.0], np.float32)
    t = np.asarray([11.0, 21.0, 31.0, 41.0], np.float32)
    # vyre computes decay*e + (1-decay)*t in f32 on the host:
    # [10.1 (0x4121999a), 20.1 (0x41a0cccd), 30.1 (0x41f0cccd), 40.100002 (0x42206667)]
    return [[pack_f32_slice(d * e + (np.float32(1.0) - d) * t)]]


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([10.0, 20.0, 30.0, 40.0]), pack_f32_slice([11.0, 21.0, 31.0, 41.0])]],
    expected_output=_expected,
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
