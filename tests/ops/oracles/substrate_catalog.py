"""Oracles of vyre_vk/ops/substrate/catalog (indexed_map, strided_accumulate)."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32


@oracle("vyre-libs::substrate::indexed_map", {"n": 1001}, 0, "wrapping +1: exact")
def _():
    return (lambda rng, p: {"input": edgy_u32(rng, p["n"])},
            lambda ins, p: {"out": ((ins["input"].astype(np.uint64) + 1) & 0xFFFFFFFF).astype(U32)})


def strided_lane0_np(values: np.ndarray, tile: int) -> np.ndarray:
    """Lane 0's partial: values[0] + values[tile] + ... mod 2^32."""
    return np.asarray([int(values[::tile].astype(np.uint64).sum()) & 0xFFFFFFFF], U32)


# grid (1,1,1): vyre's inferred grid (ceil(n/tile) workgroups) races on out[0] (see the op's docstring)
@oracle("vyre-libs::substrate::strided_accumulate", {"n": 1000, "tile": 64}, 0, "wrapping u32 sum: exact",
        repeats=10, grid=(1, 1, 1))
def _():
    return (lambda rng, p: {"values": edgy_u32(rng, p["n"])},
            lambda ins, p: {"out": strided_lane0_np(ins["values"], p["tile"])})
