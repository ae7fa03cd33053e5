"""Validation of subgroup collectives: their types (vyre expr_rules.rs, V047) and where they may stand.

vyre has no placement rule for subgroup collectives (its reference evaluates every lane's
snapshot, wherever the lanes are); ours exists because the Vulkan lowering emulates vyre's
width-32 subgroups with workgroup barriers (lower/glsl.py): a collective must be reached by all
32 lanes of its subgroup together (uniform within the subgroup), inside loops whose trip count is
the same for the whole workgroup. Values and control flow carry a uniformity level: SG_U
(workgroup-uniform), SG_S (subgroup-uniform), SG_L (lane-linear: local/global x with an x size
that is a multiple of 32) or SG_D (divergent).

Part of :mod:`vyre_vk.ir.validate`.

Example::

    >>> sg_join(SG_U, SG_S), sg_join(SG_S, SG_L), sg_bind_level(SG_L, SG_U)
    ('s', 'd', 'l')
"""
from __future__ import annotations

from typing import Callable, Optional

from . import expr as E
from .optable import BinOp
from .types import BufferAccess, DataType
from .validate_base import (BOOL, F32, I32, SG_D, SG_L, SG_S, SG_U, U32, ControlFlowError, Ctx, TypeMismatch,
                            UnsupportedFeature, err, tname)
from .walk import expr_children, node_all_exprs, node_exprs, walk_expr

_LEAVES_UNIFORM = (E.LitU32, E.LitI32, E.LitF32, E.LitBool, E.BufLen, E.WorkgroupId, E.SubgroupSize)


def has_collective(nodes: object) -> bool:
    """Any subgroup collective in `nodes`. Runs before validation, so a malformed tree (a body
    that is not a list) counts as having one: that only turns the (harmless) level tracking on."""
    if not isinstance(nodes, (tuple, list)):
        return False
    try:
        return any(isinstance(x, E.SUBGROUP_COLLECTIVES) for x in node_all_exprs(nodes))
    except (TypeError, AttributeError):
        return True


def check_subgroup_statement(n: object, path: str) -> None:
    """The lowering evaluates a statement's collectives before the rest of it, so an atomic in the
    same statement would run in a different order than in the reference."""
    found = [x for e in node_exprs(n) for x in walk_expr(e)]  # type: ignore[arg-type]
    if any(isinstance(x, E.SUBGROUP_COLLECTIVES) for x in found) and any(isinstance(x, E.Atomic) for x in found):
        err(UnsupportedFeature, path, "a statement with both a subgroup operation and an atomic.",
            "bind the atomic's result with Node.let_bind first, then use the variable.")


def sg_join(*levels: str) -> str:
    """Uniformity of a value computed from values of these levels (a lane-linear value is divergent
    once combined with anything)."""
    out = SG_U
    for lv in levels:
        if lv == SG_U:
            continue
        if lv == SG_L or out not in (SG_U, lv):
            return SG_D
        out = lv
    return out


def sg_bind_level(value: str, ctrl: str) -> str:
    """A let keeps a lane-linear value's level only in workgroup-uniform control flow."""
    return value if ctrl == SG_U else sg_join(value, ctrl)


def sg_level(ctx: Ctx, e: E.Expr) -> str:
    """Subgroup uniformity of `e` (SG_D when the program has no collectives: nothing reads it)."""
    if not ctx.has_sg:
        return SG_D
    sx, sy, _ = ctx.program.workgroup_size
    w = E.SUBGROUP_WIDTH
    if isinstance(e, _LEAVES_UNIFORM):
        return SG_U
    if isinstance(e, E.Var):
        b = ctx.lookup(e.name)
        return b.sg if b is not None else SG_D
    if isinstance(e, (E.LocalId, E.InvocationId)):
        rows = {0: None, 1: sx, 2: sx * sy}.get(e.axis)
        if e.axis == 0:
            return SG_L if sx % w == 0 else SG_D
        return SG_S if rows is not None and rows % w == 0 else SG_D
    if isinstance(e, E.Load):
        b = ctx.buffers.get(e.buffer)
        ro = b is not None and b.access in (BufferAccess.ReadOnly, BufferAccess.Uniform)
        return SG_S if ro and sg_level(ctx, e.index) in (SG_U, SG_S) else SG_D
    if isinstance(e, (E.SubgroupReduce, E.SubgroupBallot)):
        return SG_S
    if isinstance(e, E.SubgroupShuffle):
        return SG_S if sg_level(ctx, e.lane) in (SG_U, SG_S) else SG_D
    if isinstance(e, E.BinOpExpr) and isinstance(e.right, E.LitU32) and sg_level(ctx, e.left) == SG_L:
        c = e.right.value
        if (e.op is BinOp.Div and c and c % w == 0) or (e.op is BinOp.Shr and 5 <= c < 32):
            return SG_S  # x / 32k or x >> 5+: constant over 32 aligned consecutive values
        return SG_D
    if isinstance(e, (E.Atomic, E.Call, E.SubgroupLocalId)):
        return SG_D
    return sg_join(*(sg_level(ctx, k) for k in expr_children(e)))


Sub = Callable[[E.Expr, str], Optional[DataType]]  # the type of a sub-expression, by field name


def subgroup_type(ctx: Ctx, e: E.Expr, path: str, sub: Sub) -> Optional[DataType]:
    """Type (vyre expr_rules.rs, V047) and placement of a subgroup collective; `sub` types its operands."""
    kind = E.EXPR_KIND[type(e)]
    if ctx.sg_ctrl not in (SG_U, SG_S):
        err(ControlFlowError, path, f"{kind} under control flow that differs between the lanes of one "
            "subgroup: vyre's result would mix lanes that did not reach it.",
            "move the subgroup operation out of the if/loop, or make the condition the same for all 32 lanes "
            "of a subgroup (e.g. a function of local_x / 32 with a workgroup x size that is a multiple of 32).")
    if not ctx.sg_loops_uniform:
        err(ControlFlowError, path, f"{kind} inside a loop whose bounds depend on the invocation: the Vulkan "
            "backend needs the same trip count in the whole workgroup around a subgroup operation.",
            "give the loop workgroup-uniform bounds (literals, buf_len, workgroup ids) and guard the body instead.")
    if ctx.sg_returned is not None:
        err(ControlFlowError, path, f"{kind} after a return under invocation-dependent control flow "
            f"({ctx.sg_returned}): the lanes that returned cannot take part in it on the GPU.",
            "guard the rest of the body with an if instead of returning early.")
    if isinstance(e, E.SubgroupBallot):
        t = sub(e.cond, "cond")
        if t is not None and t not in (U32, I32, F32, BOOL):
            err(TypeMismatch, path, f"ballot condition has type {t.value}.", "use a bool or u32 condition.")
        return U32
    if isinstance(e, E.SubgroupReduce) and e.op not in E.SUBGROUP_REDUCE_OPS:
        err(UnsupportedFeature, path, f"subgroup reduce op {e.op!r} is not a SubgroupReduceOp.",
            f"use one of {', '.join(E.SUBGROUP_REDUCE_OPS)}.")
    t = sub(e.value, "value")  # type: ignore[attr-defined]
    if t is not None and t not in (U32, F32):
        err(TypeMismatch, path, f"{kind} of a {t.value} value: vyre's reference exchanges only u32 or f32 lanes.",
            "cast the value to u32 or f32 (and back) around the subgroup operation.")
    if isinstance(e, E.SubgroupShuffle):
        lt = sub(e.lane, "lane")
        if lt is not U32:
            err(TypeMismatch, path, f"shuffle lane has type {tname(lt)}, expected u32.",
                "cast the lane with Expr.cast(DataType.U32, ...).")
    elif t is F32 and e.op in ("And", "Or", "Xor"):  # type: ignore[attr-defined]
        err(TypeMismatch, path, f"V047: subgroup {e.op} is a bitwise reduction and rejects f32 operands.",  # type: ignore[attr-defined]
            "use a u32 operand for And/Or/Xor, or Add/Mul/Min/Max for a float reduction.")
    return t


__all__ = ["has_collective", "check_subgroup_statement", "sg_join", "sg_bind_level", "sg_level", "subgroup_type"]
