"""`vyre-libs::optim::muoneq_r`: row-normalised Muon (port of vyre-libs/src/nn/optim/muoneq_r.rs):
the muon_core step with ``lr_scale = sqrt(max(1, rows/cols)) * lr``, all folded in f32 on the host.

Example::

    >>> [b.count for b in muoneq_r("params", "grads", "momentum", "output", 4, 4, 2, 0.02, 0.95).buffers]
    [4, 4, 4, 4]
"""
from __future__ import annotations

import numpy as np

from ....ir import Program
from ...registry import register_op
from ...wire import pack_f32_slice
from ._f32 import f32
from .muon_core import muon_step_program

OP_ID = "vyre-libs::optim::muoneq_r"
# 8 ULP: vyre's explicit window for this id (program budget 4; effective = max).
ULP = 8


def lr_scale(rows: int, cols: int, lr: float) -> float:
    ratio = np.float32(rows) / np.float32(cols)
    scale = np.sqrt(np.maximum(ratio, np.float32(1.0)), dtype=np.float32)
    return float(np.float32(scale * np.float32(lr)))


def muoneq_r(params: str, grads: str, momentum_buf: str, output: str, n: int, rows: int, cols: int,
             lr: float, momentum: float) -> Program:
    return muon_step_program(OP_ID, params, grads, momentum_buf, output, n, lr_scale(rows, cols, lr), f32(momentum))


def _build(n: int = 4, rows: int = 4, cols: int = 2, lr: float = 0.02, momentum: float = 0.95) -> Program:
    return muoneq_r("params", "grads", "momentum", "output", n, rows, cols, lr, momentum)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]), pack_f32_slice([0.1, 0.2, 0.3, 0.4]),
                          pack_f32_slice([0.0] * 4)]],
    # vyre's listed bytes: momentum [0.1, 0.2, 0.3, 0.4]; output [0.9919319, 1.9838638, 2.9757957, 3.9677277]
    expected_output=lambda: [[bytes([205, 204, 204, 61, 205, 204, 76, 62, 154, 153, 153, 62, 205, 204, 204, 62]),
                              bytes([64, 239, 125, 63, 64, 239, 253, 63, 112, 115, 62, 64, 64, 239, 125, 64])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24, rows=4096, cols=4096),
)
