"""Shared RMS expressions (vyre-libs/src/nn/rms.rs)."""
from __future__ import annotations

from ...ir import Expr

EMPTY_RMS_FIX = "Fix: rms_norm n=0 is invalid; pass at least one element or bypass normalization."


def square_expr(value: Expr) -> Expr:
    return Expr.mul(value, value)


def inverse_rms_expr(sum_sq: Expr, n: int, eps: float) -> Expr:
    """``inverseSqrt(sum_sq / f32(n) + eps)``."""
    return Expr.inverse_sqrt(Expr.add(Expr.div(sum_sq, Expr.f32(float(n))), Expr.f32(eps)))
