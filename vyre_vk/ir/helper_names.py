"""The names of vyre's helper constructors on :class:`~vyre_vk.ir.expr.Expr`, by operator.

expr.py installs one static method per entry (``Expr.add``, ``Expr.sqrt``, ``Expr.atomic_add``,
``Expr.subgroup_add``, ...). Kept apart from the variants: this is vyre's naming, a pure table.

Example::

    >>> BIN_HELPERS["rem"].name, UN_HELPERS["not_"].name
    ('Mod', 'LogicalNot')
"""
from __future__ import annotations

from .optable import AtomicOp, BinOp, UnOp

# vyre's helper names (expr/builders/operators.rs); Python keywords get a trailing "_"
# and are also reachable under the bare name via getattr (Expr.__dict__["and"]).
#: Binary helper name -> operator: Expr.add(l, r) is BinOpExpr(BinOp.Add, l, r).
BIN_HELPERS: dict[str, BinOp] = {
    "add": BinOp.Add, "sub": BinOp.Sub, "mul": BinOp.Mul, "div": BinOp.Div, "rem": BinOp.Mod,
    "mulhi": BinOp.MulHigh, "abs_diff": BinOp.AbsDiff, "bitand": BinOp.BitAnd, "bitor": BinOp.BitOr,
    "bitxor": BinOp.BitXor, "shl": BinOp.Shl, "shr": BinOp.Shr, "rotate_left": BinOp.RotateLeft,
    "rotate_right": BinOp.RotateRight, "eq": BinOp.Eq, "ne": BinOp.Ne, "lt": BinOp.Lt, "gt": BinOp.Gt,
    "le": BinOp.Le, "ge": BinOp.Ge, "and_": BinOp.And, "or_": BinOp.Or, "min": BinOp.Min,
    "max": BinOp.Max, "saturating_add": BinOp.SaturatingAdd, "saturating_sub": BinOp.SaturatingSub,
    "saturating_mul": BinOp.SaturatingMul, "wrapping_add": BinOp.WrappingAdd,
    "wrapping_sub": BinOp.WrappingSub, "logical_and": BinOp.And, "logical_or": BinOp.Or,
    "and": BinOp.And, "or": BinOp.Or,
}
#: Unary helper name -> operator.
UN_HELPERS: dict[str, UnOp] = {
    "negate": UnOp.Negate, "bitnot": UnOp.BitNot, "reverse_bits": UnOp.ReverseBits,
    "popcount": UnOp.Popcount, "clz": UnOp.Clz, "ctz": UnOp.Ctz, "not_": UnOp.LogicalNot,
    "not": UnOp.LogicalNot, "logical_not": UnOp.LogicalNot, "sin": UnOp.Sin, "cos": UnOp.Cos,
    "abs": UnOp.Abs, "sqrt": UnOp.Sqrt, "inverse_sqrt": UnOp.InverseSqrt, "reciprocal": UnOp.Reciprocal,
    "floor": UnOp.Floor, "ceil": UnOp.Ceil, "round": UnOp.Round, "trunc": UnOp.Trunc, "sign": UnOp.Sign,
    "is_nan": UnOp.IsNan, "is_inf": UnOp.IsInf, "is_finite": UnOp.IsFinite,
    # vyre has no helpers for these (vyre-libs writes Expr::UnOp directly); ours are a convenience.
    "exp": UnOp.Exp, "exp2": UnOp.Exp2, "log": UnOp.Log, "log2": UnOp.Log2, "tan": UnOp.Tan,
    "asin": UnOp.Asin, "acos": UnOp.Acos, "atan": UnOp.Atan, "tanh": UnOp.Tanh, "sinh": UnOp.Sinh,
    "cosh": UnOp.Cosh,
}
#: Atomic helper name -> operator (SeqCst, no `expected`).
ATOMIC_HELPERS: dict[str, AtomicOp] = {
    "atomic_add": AtomicOp.Add, "atomic_or": AtomicOp.Or, "atomic_and": AtomicOp.And,
    "atomic_xor": AtomicOp.Xor, "atomic_min": AtomicOp.Min, "atomic_max": AtomicOp.Max,
    "atomic_exchange": AtomicOp.Exchange,
}
#: SubgroupReduce ops with a helper: Expr.subgroup_add(v) ... Expr.subgroup_xor(v).
SUBGROUP_HELPERS: tuple[str, ...] = ("Add", "Mul", "Min", "Max", "And", "Or", "Xor")

__all__ = ["BIN_HELPERS", "UN_HELPERS", "ATOMIC_HELPERS", "SUBGROUP_HELPERS"]
