"""Oracles of vyre_vk/ops/math/bit_count_ops (lzcnt_u32, tzcnt_u32)."""
from __future__ import annotations

from .core import oracle
from .u32_edges import bit_loop_lzcnt, bit_loop_tzcnt, edgy_u32


@oracle("vyre-libs::math::lzcnt_u32", {"size": 1000}, 0, "bit count: exact")
def _():
    return (lambda rng, p: {"input": edgy_u32(rng, p["size"])},
            lambda ins, p: {"out": bit_loop_lzcnt(ins["input"])})


@oracle("vyre-libs::math::tzcnt_u32", {"size": 1000}, 0, "bit count: exact")
def _():
    return (lambda rng, p: {"input": edgy_u32(rng, p["size"])},
            lambda ins, p: {"out": bit_loop_tzcnt(ins["input"])})
