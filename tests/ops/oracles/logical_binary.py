"""Oracles of vyre_vk/ops/logical/binary (and, or, xor, nand, nor)."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32

BITWISE = {
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "nand": lambda a, b: np.invert(np.bitwise_and(a, b)), "nor": lambda a, b: np.invert(np.bitwise_or(a, b)),
}


def _register(op: str) -> None:
    @oracle(f"vyre-libs::logical::{op}", {"size": 1000}, 0, "numpy bitwise: exact")
    def _():
        return (lambda rng, p: {"a": edgy_u32(rng, p["size"]), "b": edgy_u32(rng, p["size"])},
                lambda ins, p: {"out": BITWISE[op](ins["a"], ins["b"]).astype(U32)})


for _op in BITWISE:
    _register(_op)
