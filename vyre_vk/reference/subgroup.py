"""Subgroup collectives of the reference (IR-SPEC 2.6), a mixin of the evaluator's machine.

vyre's simulated width 32: subgroup k of a workgroup is the lanes with linear local index in
[32k, min(32k + 32, lanes)); the operand is evaluated in every lane and combined per subgroup
(ballot bits, shuffle reads 0 outside the subgroup, u32 reductions wrap, f32 reductions fold in
lane order from the identity, canonical after each step).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ir import expr as E
from ..ir.optable import BINOPS, BinOp, canon
from ..ir.types import DataType

_W = E.SUBGROUP_WIDTH
_F32_COMBINE = {"Add": BinOp.Add, "Mul": BinOp.Mul, "Min": BinOp.Min, "Max": BinOp.Max}
_F32_IDENTITY = {"Add": 0.0, "Mul": 1.0, "Min": np.inf, "Max": -np.inf}
_U32_REDUCE = {"Add": (np.add, 0), "Mul": (np.multiply, 1), "Min": (np.minimum, 0xFFFFFFFF),
               "Max": (np.maximum, 0), "And": (np.bitwise_and, 0xFFFFFFFF), "Or": (np.bitwise_or, 0),
               "Xor": (np.bitwise_xor, 0)}


class SubgroupOps:
    """Ballot, shuffle and reduce over the lanes of each subgroup. The machine provides `ev`, the
    lane count `n`, `n_wg` workgroups of `sg_groups` subgroups, and per lane its `sg_slot` in a
    (workgroups, groups, 32) pad, `sg_local` (local index), `sg_len` (lanes in its subgroup), with
    `sg_valid` (groups, 32) marking the slots that hold a lane."""

    ev: Callable[[E.Expr, Any], np.ndarray]
    n: int
    n_wg: int
    sg_groups: int
    sg_slot: np.ndarray
    sg_local: np.ndarray
    sg_len: np.ndarray
    sg_valid: np.ndarray

    def _sg_pad(self, v: np.ndarray, fill: Any) -> np.ndarray:
        """Lane values as (workgroups, groups, 32); slots past the workgroup's lanes hold `fill`."""
        v = np.broadcast_to(np.asarray(v), (self.n,))
        pad = np.full(self.n_wg * self.sg_groups * _W, fill, v.dtype)
        pad[self.sg_slot] = v
        return pad.reshape(self.n_wg, self.sg_groups, _W)

    def _sg_per_lane(self, per_group: np.ndarray) -> np.ndarray:
        return per_group.reshape(-1)[self.sg_slot // _W]

    def _sg_ballot(self, e: E.SubgroupBallot, m: np.ndarray) -> np.ndarray:
        bits = self._sg_pad(np.asarray(self.ev(e.cond, m)) != 0, False).astype(np.uint32)
        bits <<= np.arange(_W, dtype=np.uint32)
        return self._sg_per_lane(np.bitwise_or.reduce(bits, axis=2))

    def _sg_shuffle(self, e: E.SubgroupShuffle, m: np.ndarray) -> np.ndarray:
        vals = np.asarray(self.ev(e.value, m))
        lane = np.broadcast_to(np.asarray(self.ev(e.lane, m)), (self.n,)).astype(np.int64)
        flat = self._sg_pad(vals, 0).reshape(-1)
        ok = lane < self.sg_len  # a lane outside the subgroup (or past a partial one's end) reads 0
        src = self.sg_slot - self.sg_local % _W + np.where(ok, lane, 0)
        return np.where(ok, flat[src], flat.dtype.type(0))

    def _sg_reduce(self, e: E.SubgroupReduce, m: np.ndarray) -> np.ndarray:
        v = np.asarray(self.ev(e.value, m))
        if v.dtype == np.float32:  # fold in lane order from the identity, canonical after each step
            info = BINOPS[_F32_COMBINE[e.op]]
            ident = _F32_IDENTITY[e.op]
            pad = self._sg_pad(v, np.float32(ident))
            acc = np.full(pad.shape[:2], ident, np.float32)
            for j in range(_W):
                nxt = canon(np.asarray(info.numpy(acc, pad[:, :, j], DataType.F32), np.float32))
                acc = np.where(self.sg_valid[:, j], nxt, acc)
            return self._sg_per_lane(acc)
        ufunc, ident = _U32_REDUCE[e.op]
        pad = self._sg_pad(v.astype(np.uint32), np.uint32(ident))  # the identity fills missing lanes
        return self._sg_per_lane(ufunc.reduce(pad, axis=2, dtype=np.uint32))  # uint32: Add/Mul wrap


__all__ = ["SubgroupOps"]
