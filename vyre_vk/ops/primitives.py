"""Expression and region helpers vyre-libs takes from vyre-primitives.

- ``flush_tiny`` / ``finite_or`` (vyre-primitives/src/nn/f32_stability.rs)
- ``sum_f32_child`` / ``max_f32_child`` ... (vyre-primitives/src/reduce/workgroup_tree.rs):
  a tree reduction over one partial per lane already staged in a workgroup scratch
  buffer; strides ``next_pow2(tile)/2 .. 1``, a barrier after every step, the result
  in ``scratch[0]``. The parent must bind ``local = LocalId.x`` first.

Example::

    >>> from vyre_vk.ir import Expr
    >>> flush_tiny(Expr.var("v")).true_val
    LitF32(bits=0)
"""
from __future__ import annotations

from ..ir import Expr, Node, wrap_child
from vyre_vk.ops.registry import OpParamError

F32_MIN_POSITIVE = 1.1754943508222875e-38  # f32::MIN_POSITIVE
F32_MIN = -3.4028234663852886e38          # f32::MIN (most negative finite)
F32_MAX = 3.4028234663852886e38

SUM_F32_OP_ID = "vyre-primitives::reduce::workgroup_sum_f32"
SUM_U32_OP_ID = "vyre-primitives::reduce::workgroup_sum_u32"
MAX_F32_OP_ID = "vyre-primitives::reduce::workgroup_max_f32"
MIN_F32_OP_ID = "vyre-primitives::reduce::workgroup_min_f32"

EVERY_WORKGROUP = "EveryWorkgroup"   # every workgroup reduces its own scratch
FIRST_WORKGROUP = "FirstWorkgroup"   # only WorkgroupId.x == 0 participates


def flush_tiny(value: Expr) -> Expr:
    """``select(|v| <= f32::MIN_POSITIVE, 0.0, v)``: subnormals (and MIN_POSITIVE itself) -> +0."""
    return Expr.select(Expr.le(Expr.abs(value), Expr.f32(F32_MIN_POSITIVE)), Expr.f32(0.0), value)


def finite_or(value: Expr, replacement: Expr) -> Expr:
    return Expr.select(Expr.is_finite(value), value, replacement)


def _lane_guard(scope: str, lane_expr: Expr) -> Expr:
    if scope == EVERY_WORKGROUP:
        return lane_expr
    if scope == FIRST_WORKGROUP:
        return Expr.and_(Expr.eq(Expr.workgroup_x(), Expr.u32(0)), lane_expr)
    raise OpParamError(f"unknown reduction scope {scope!r}. Fix: use EVERY_WORKGROUP or FIRST_WORKGROUP.")


def _next_pow2(v: int) -> int:
    return 1 if v <= 1 else 1 << (int(v) - 1).bit_length()


def tree_body(tile: int, scratch: str, scope: str, combine) -> list:
    nodes = []
    stride = _next_pow2(tile) // 2
    local = Expr.var("local")
    while stride > 0:
        rhs_index = Expr.add(local, Expr.u32(stride))
        nodes.append(Node.if_then(
            _lane_guard(scope, Expr.lt(local, Expr.u32(stride))),
            [Node.if_then(Expr.lt(rhs_index, Expr.u32(tile)), [
                Node.store(scratch, local, combine(Expr.load(scratch, local), Expr.load(scratch, rhs_index))),
            ])]))
        nodes.append(Node.barrier())
        stride //= 2
    return nodes


def sum_f32_child(parent_op_id: str, tile: int, scratch: str, scope: str):
    return wrap_child(SUM_F32_OP_ID, parent_op_id, tree_body(tile, scratch, scope, Expr.add))


def sum_u32_child(parent_op_id: str, tile: int, scratch: str, scope: str):
    return wrap_child(SUM_U32_OP_ID, parent_op_id, tree_body(tile, scratch, scope, Expr.add))


def max_f32_child(parent_op_id: str, tile: int, scratch: str, scope: str):
    return wrap_child(MAX_F32_OP_ID, parent_op_id, tree_body(tile, scratch, scope, Expr.max))


def min_f32_child(parent_op_id: str, tile: int, scratch: str, scope: str):
    return wrap_child(MIN_F32_OP_ID, parent_op_id, tree_body(tile, scratch, scope, Expr.min))
