"""Host-side f32 constant folding as vyre's Rust builders do it (``1.0 - beta1`` etc. in f32).

Example::

    >>> hex(np.float32(f32_sub(1.0, 0.9)).view(np.uint32))
    '0x3dccccd0'
"""
from __future__ import annotations

import numpy as np

F = np.float32


def f32(x) -> float:
    return float(F(x))


def f32_sub(a, b) -> float:
    return float(F(a) - F(b))


def f32_mul(a, b) -> float:
    return float(F(a) * F(b))
