"""Attention numeric guards (vyre-primitives/src/nn/attention_stability.rs) and the attention
pass region ids (vyre-primitives/src/nn/attention_passes.rs).

- ``bounded_score(v)``: NaN stays NaN, +-inf -> -80.0, finite unchanged.
- ``bounded_exp_arg(v)``: NaN stays NaN; else clamp ``finite_or(v, -80)`` into [-80, 0].
- ``positive_denominator(v)``: NaN stays NaN; finite and > f32::MIN_POSITIVE unchanged; else MIN_POSITIVE.

Example::

    >>> bounded_score(Expr.var("s")).cond.op.name
    'IsNan'
"""
from __future__ import annotations

from ....ir import Expr
from ...primitives import F32_MIN_POSITIVE, finite_or

ATTENTION_MAX_PASS_OP_ID = "vyre-primitives::nn::attention_max_pass"
ATTENTION_SUM_PASS_OP_ID = "vyre-primitives::nn::attention_sum_pass"
ATTENTION_WRITE_PASS_OP_ID = "vyre-primitives::nn::attention_write_pass"


def bounded_score(value: Expr) -> Expr:
    return Expr.select(Expr.is_nan(value), value, finite_or(value, Expr.f32(-80.0)))


def bounded_exp_arg(value: Expr) -> Expr:
    finite = finite_or(value, Expr.f32(-80.0))
    upper = Expr.select(Expr.gt(finite, Expr.f32(0.0)), Expr.f32(0.0), finite)
    clamped = Expr.select(Expr.lt(upper, Expr.f32(-80.0)), Expr.f32(-80.0), upper)
    return Expr.select(Expr.is_nan(value), value, clamped)


def positive_denominator(value: Expr) -> Expr:
    repaired = Expr.select(Expr.and_(Expr.is_finite(value), Expr.gt(value, Expr.f32(F32_MIN_POSITIVE))),
                           value, Expr.f32(F32_MIN_POSITIVE))
    return Expr.select(Expr.is_nan(value), value, repaired)
