"""`vyre-libs::optim::muon_update`: Muon momentum step without Newton-Schulz (port of
vyre-libs/src/nn/optim/muon_update.rs; body in muon_core.py, ``lr_scale = lr``).

Example::

    >>> [b.name for b in muon_update("params", "grads", "momentum", "output", 2, 0.02, 0.95).buffers]
    ['params', 'grads', 'momentum', 'output']
"""
from __future__ import annotations

from ....ir import Program
from ...registry import register_op
from ...wire import pack_f32_slice
from ._f32 import f32
from .muon_core import muon_step_program

OP_ID = "vyre-libs::optim::muon_update"
# 4 ULP: elementary f32 ops only (vyre's program budget; a backend may contract a*b+c).
ULP = 4


def muon_update(params: str, grads: str, momentum_buf: str, output: str, n: int, lr: float,
                momentum: float) -> Program:
    return muon_step_program(OP_ID, params, grads, momentum_buf, output, n, f32(lr), f32(momentum))


def _build(n: int = 2, lr: float = 0.02, momentum: float = 0.95) -> Program:
    return muon_update("params", "grads", "momentum", "output", n, lr, momentum)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0]), pack_f32_slice([0.1, 0.2]), pack_f32_slice([0.0, 0.0])]],
    # vyre's listed bytes: momentum [0.1, 0.2]; output [0.994295, 1.98859]
    expected_output=lambda: [[bytes([205, 204, 204, 61, 205, 204, 76, 62]),
                              bytes([30, 138, 126, 63, 30, 138, 254, 63])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
