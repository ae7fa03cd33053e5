"""Expressions of the vyre IR: immutable, hashable values with structural equality.

Every variant is a frozen dataclass deriving from :class:`Expr`; the helper
constructors carry vyre's names (``Expr.var``, ``Expr.u32``, ``Expr.add``, ...).
Variants are reachable both as module names (``Load``) and as ``Expr.Load``; the binary
and unary variants are ``Expr.BinOp`` / ``Expr.UnOp`` (module names ``BinOpExpr`` /
``UnOpExpr``, because ``BinOp``/``UnOp`` are the operator enums, as in vyre).

Example::

    >>> i = Expr.var("i")
    >>> e = Expr.lt(i, Expr.u32(4))
    >>> e == Expr.BinOp(op=BinOp.Lt, left=Var("i"), right=LitU32(4))
    True
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional, Sequence

from .optable import AtomicOp, BinOp, UnOp
from .types import DataType, MemoryOrdering


def f32_bits(value: float) -> int:
    """The IEEE binary32 bit pattern of `value` (rounded to f32 first). >>> f32_bits(1.0) -> 0x3F800000"""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def bits_f32(bits: int) -> float:
    """The float value of a binary32 bit pattern."""
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


class Expr:
    """Base class of all expression variants, and home of vyre's helper constructors."""

    __slots__ = ()

    # ---- literals and leaves
    @staticmethod
    def u32(v: int) -> "LitU32":
        return LitU32(int(v))

    @staticmethod
    def i32(v: int) -> "LitI32":
        return LitI32(int(v))

    @staticmethod
    def f32(v: float) -> "LitF32":
        """An f32 literal; stored as its bit pattern so NaN payloads and -0.0 survive."""
        return LitF32(f32_bits(float(v)))

    @staticmethod
    def bool(v: bool) -> "LitBool":  # noqa: A003 - vyre's name
        return LitBool(bool(v))

    @staticmethod
    def var(name: str) -> "Var":
        return Var(name)

    @staticmethod
    def load(buffer: str, index: "Expr") -> "Load":
        return Load(buffer, index)

    @staticmethod
    def buf_len(buffer: str) -> "BufLen":
        return BufLen(buffer)

    @staticmethod
    def gid_x() -> "InvocationId":
        return InvocationId(0)

    @staticmethod
    def gid_y() -> "InvocationId":
        return InvocationId(1)

    @staticmethod
    def gid_z() -> "InvocationId":
        return InvocationId(2)

    @staticmethod
    def local_x() -> "LocalId":
        return LocalId(0)

    @staticmethod
    def local_y() -> "LocalId":
        return LocalId(1)

    @staticmethod
    def local_z() -> "LocalId":
        return LocalId(2)

    @staticmethod
    def workgroup_x() -> "WorkgroupId":
        return WorkgroupId(0)

    @staticmethod
    def workgroup_y() -> "WorkgroupId":
        return WorkgroupId(1)

    @staticmethod
    def workgroup_z() -> "WorkgroupId":
        return WorkgroupId(2)

    parallel_region_x, parallel_region_y, parallel_region_z = workgroup_x, workgroup_y, workgroup_z
    invocation_local_x, invocation_local_y, invocation_local_z = local_x, local_y, local_z

    @staticmethod
    def subgroup_local_id() -> "SubgroupLocalId":
        return SubgroupLocalId()

    @staticmethod
    def subgroup_size() -> "SubgroupSize":
        return SubgroupSize()

    # ---- composite
    @staticmethod
    def select(cond: "Expr", true_val: "Expr", false_val: "Expr") -> "Select":
        return Select(cond, true_val, false_val)

    @staticmethod
    def cast(target: DataType, value: "Expr") -> "Cast":
        return Cast(target, value)

    @staticmethod
    def fma(a: "Expr", b: "Expr", c: "Expr") -> "Fma":
        return Fma(a, b, c)

    @staticmethod
    def call(op_id: str, args: Sequence["Expr"]) -> "Call":
        return Call(op_id, tuple(args))

    @staticmethod
    def binop(op: BinOp, left: "Expr", right: "Expr") -> "BinOpExpr":
        return BinOpExpr(op, left, right)

    @staticmethod
    def unop(op: UnOp, operand: "Expr") -> "UnOpExpr":
        return UnOpExpr(op, operand)

    # ---- atomics (SeqCst unless an ordering is given)
    @staticmethod
    def atomic(op: AtomicOp, buffer: str, index: "Expr", value: "Expr",
               expected: Optional["Expr"] = None,
               ordering: MemoryOrdering = MemoryOrdering.SeqCst) -> "Atomic":
        return Atomic(op, buffer, index, expected, value, ordering)

    @staticmethod
    def atomic_compare_exchange(buffer: str, index: "Expr", expected: "Expr", new: "Expr") -> "Atomic":
        return Atomic(AtomicOp.CompareExchange, buffer, index, expected, new, MemoryOrdering.SeqCst)

    @staticmethod
    def atomic_add_ordered(buffer: str, index: "Expr", value: "Expr", ordering: MemoryOrdering) -> "Atomic":
        return Atomic(AtomicOp.Add, buffer, index, None, value, ordering)

    # ---- subgroup: vyre's simulated width-32 subgroups (IR-SPEC 2.6; SUBGROUP_WIDTH)
    @staticmethod
    def subgroup_ballot(cond: "Expr") -> "SubgroupBallot":
        return SubgroupBallot(cond)

    @staticmethod
    def subgroup_shuffle(value: "Expr", lane: "Expr") -> "SubgroupShuffle":
        return SubgroupShuffle(value, lane)

    @staticmethod
    def subgroup_reduce(op: str, value: "Expr") -> "SubgroupReduce":
        """`op` is one of SUBGROUP_REDUCE_OPS ("Add", "Mul", "Min", "Max", "And", "Or", "Xor")."""
        return SubgroupReduce(op, value)

    @staticmethod
    def subgroup_add(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("Add", value)

    @staticmethod
    def subgroup_mul(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("Mul", value)

    @staticmethod
    def subgroup_min(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("Min", value)

    @staticmethod
    def subgroup_max(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("Max", value)

    @staticmethod
    def subgroup_and(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("And", value)

    @staticmethod
    def subgroup_or(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("Or", value)

    @staticmethod
    def subgroup_xor(value: "Expr") -> "SubgroupReduce":
        return SubgroupReduce("Xor", value)


def _binary(op: BinOp):
    def helper(left: Expr, right: Expr) -> "BinOpExpr":
        return BinOpExpr(op, left, right)
    helper.__doc__ = f"BinOp{{{op.name}}}(left, right)"
    return staticmethod(helper)


def _unary(op: UnOp):
    def helper(operand: Expr) -> "UnOpExpr":
        return UnOpExpr(op, operand)
    helper.__doc__ = f"UnOp{{{op.name}}}(operand)"
    return staticmethod(helper)


def _atomic(op: AtomicOp):
    def helper(buffer: str, index: Expr, value: Expr) -> "Atomic":
        return Atomic(op, buffer, index, None, value, MemoryOrdering.SeqCst)
    helper.__doc__ = f"Atomic{{{op.name}}}(buffer, index, value), SeqCst; returns the old value"
    return staticmethod(helper)


# vyre's helper names (expr/builders/operators.rs); Python keywords get a trailing "_"
# and are also reachable under the bare name via getattr (Expr.__dict__["and"]).
_BIN_HELPERS = {
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
_UN_HELPERS = {
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
_ATOMIC_HELPERS = {
    "atomic_add": AtomicOp.Add, "atomic_or": AtomicOp.Or, "atomic_and": AtomicOp.And,
    "atomic_xor": AtomicOp.Xor, "atomic_min": AtomicOp.Min, "atomic_max": AtomicOp.Max,
    "atomic_exchange": AtomicOp.Exchange,
}
for _n, _op in _BIN_HELPERS.items():
    setattr(Expr, _n, _binary(_op))
for _n, _op in _UN_HELPERS.items():
    setattr(Expr, _n, _unary(_op))
for _n, _op in _ATOMIC_HELPERS.items():
    setattr(Expr, _n, _atomic(_op))


_frozen = dataclass(frozen=True)


@_frozen
class LitU32(Expr):
    value: int


@_frozen
class LitI32(Expr):
    value: int


@_frozen
class LitF32(Expr):
    """f32 literal held as its 32-bit pattern (bit-exact equality, hashing and JSON)."""

    bits: int

    @property
    def value(self) -> float:
        return bits_f32(self.bits)


@_frozen
class LitBool(Expr):
    value: bool


@_frozen
class Var(Expr):
    name: str


@_frozen
class Load(Expr):
    buffer: str
    index: Expr


@_frozen
class BufLen(Expr):
    buffer: str


@_frozen
class InvocationId(Expr):
    """Global invocation id on `axis` (0..2): workgroup_id * workgroup_size + local_id."""

    axis: int


@_frozen
class WorkgroupId(Expr):
    axis: int


@_frozen
class LocalId(Expr):
    axis: int


@_frozen
class BinOpExpr(Expr):
    op: BinOp
    left: Expr
    right: Expr


@_frozen
class UnOpExpr(Expr):
    op: UnOp
    operand: Expr


@_frozen
class Call(Expr):
    op_id: str
    args: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))


@_frozen
class Select(Expr):
    """`true_val` if `cond` is truthy else `false_val`; both arms are always evaluated."""

    cond: Expr
    true_val: Expr
    false_val: Expr


@_frozen
class Cast(Expr):
    target: DataType
    value: Expr


@_frozen
class Fma(Expr):
    """a * b + c with a single rounding (f32)."""

    a: Expr
    b: Expr
    c: Expr


@_frozen
class Atomic(Expr):
    """Atomic RMW on one u32 word of a ReadWrite storage buffer; evaluates to the old value."""

    op: AtomicOp
    buffer: str
    index: Expr
    expected: Optional[Expr]
    value: Expr
    ordering: MemoryOrdering = MemoryOrdering.SeqCst


#: vyre-reference simulates subgroups of 32 lanes: subgroup k of a workgroup is the lanes with
#: linear local index in [32k, min(32k + 32, lanes)) (vyre-reference/src/subgroup.rs).
SUBGROUP_WIDTH = 32
#: SubgroupReduceOp variants (vyre-spec/src/subgroup_reduce_op.rs), by name.
SUBGROUP_REDUCE_OPS = ("Add", "Mul", "Min", "Max", "And", "Or", "Xor")

@_frozen
class SubgroupBallot(Expr):
    """Bit i set iff lane i of this lane's subgroup has a truthy `cond` (u32)."""

    cond: Expr


@_frozen
class SubgroupShuffle(Expr):
    """`value` of lane `lane` of this lane's subgroup; 0 when `lane` is not a lane of it."""

    value: Expr
    lane: Expr


@_frozen
class SubgroupReduce(Expr):
    """`op` folded over `value` of every lane of this lane's subgroup, in lane order."""

    op: str
    value: Expr


@_frozen
class SubgroupLocalId(Expr):
    """This lane's index in its subgroup: linear local index % SUBGROUP_WIDTH."""


@_frozen
class SubgroupSize(Expr):
    """SUBGROUP_WIDTH (32), also for a partial last subgroup (as gl_SubgroupSize)."""


#: The subgroup collectives (their value depends on other lanes of the subgroup).
SUBGROUP_COLLECTIVES = (SubgroupBallot, SubgroupShuffle, SubgroupReduce)


#: Every Expr variant, by its vyre name.
EXPR_VARIANTS: dict[str, type] = {
    "LitU32": LitU32, "LitI32": LitI32, "LitF32": LitF32, "LitBool": LitBool, "Var": Var,
    "Load": Load, "BufLen": BufLen, "InvocationId": InvocationId, "WorkgroupId": WorkgroupId,
    "LocalId": LocalId, "BinOp": BinOpExpr, "UnOp": UnOpExpr, "Call": Call, "Select": Select,
    "Cast": Cast, "Fma": Fma, "Atomic": Atomic, "SubgroupBallot": SubgroupBallot,
    "SubgroupShuffle": SubgroupShuffle, "SubgroupReduce": SubgroupReduce,
    "SubgroupLocalId": SubgroupLocalId, "SubgroupSize": SubgroupSize,
}
#: Variant class -> vyre name (BinOpExpr -> "BinOp").
EXPR_KIND: dict[type, str] = {cls: name for name, cls in EXPR_VARIANTS.items()}
for _name, _cls in EXPR_VARIANTS.items():
    setattr(Expr, _name, _cls)
del _name, _cls, _n, _op


def children(e: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions of `e`, in evaluation order."""
    if isinstance(e, (Load,)):
        return (e.index,)
    if isinstance(e, BinOpExpr):
        return (e.left, e.right)
    if isinstance(e, UnOpExpr):
        return (e.operand,)
    if isinstance(e, Select):
        return (e.cond, e.true_val, e.false_val)
    if isinstance(e, Cast):
        return (e.value,)
    if isinstance(e, Fma):
        return (e.a, e.b, e.c)
    if isinstance(e, Atomic):
        return (e.index,) + ((e.expected,) if e.expected is not None else ()) + (e.value,)
    if isinstance(e, Call):
        return tuple(e.args)
    if isinstance(e, SubgroupBallot):
        return (e.cond,)
    if isinstance(e, SubgroupShuffle):
        return (e.value, e.lane)
    if isinstance(e, SubgroupReduce):
        return (e.value,)
    return ()


def walk(e: Expr):
    """Pre-order iterator over `e` and all its sub-expressions."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(children(x)))
