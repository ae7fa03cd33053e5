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

The helpers check their arguments (literal ranges, names, operand kinds) and raise
:class:`IRError`. The variant constructors take an Expr or an atom (None, bool, int, float,
str, enum member) in every field and leave judging the value to validation (``LitU32(-1)``
builds; ``validate`` reports it); every expression records its :attr:`Expr.depth` and none
may exceed :data:`EXPR_DEPTH_CAP`.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .atoms import ATOM_TYPES as _ATOMS, INT_BOUND as _INT_BOUND, is_atom, refuse_field  # noqa: F401 (re-exported)
from .helper_names import ATOMIC_HELPERS, BIN_HELPERS, SUBGROUP_HELPERS, UN_HELPERS
from .optable import AtomicOp, BinOp, UnOp
from .types import (DataType, IRDepthError, IRError, MemoryOrdering, bits_f32, check_int, check_member,  # noqa: F401
                    check_name, check_seq, f32_bits, f32_literal_bits, show)  # bits_f32, f32_bits: historical home

#: Deepest expression a constructor builds (a leaf is 1 level, a Call 2 more than its deepest
#: argument). Validation rejects more than 129 levels (V033); the cap leaves room for that report
#: while every recursive walk (==, repr, hash, JSON, validation, reference, optimiser, lowering)
#: still fits Python's default recursion limit at the cap together with node.NESTING_CAP
#: (measured: == and repr need ~3 frames a level, tests/ir/test_hostile_ir.py).
EXPR_DEPTH_CAP = 160


def _operand(v: Any, what: str) -> "Expr":
    if not isinstance(v, Expr):
        raise IRError(f"{what} must be an Expr, got {type(v).__name__} {show(v)}. "
                      "Fix: wrap constants with Expr.u32/i32/f32/bool and names with Expr.var.")
    return v


def _check_fields(self: "Expr") -> None:
    """__post_init__ of every variant: each field is an Expr or an atom, and the depth is
    computed in O(1) from the operands' stored depths."""
    vals = self.__dict__  # the dataclass fields of a (non-slotted) variant live here
    d = 0
    for name in self._field_names:
        v = vals[name]
        t = type(v)
        if t in _ATOMS or (t is int and -_INT_BOUND <= v <= _INT_BOUND):
            continue
        if isinstance(v, Expr):
            if v._depth > d:
                d = v._depth
        elif not is_atom(v):
            refuse_field(self, name, v, "an Expr, or a str / int / float / bool / enum member")
    if d:  # leaves keep the class default of 1
        if d >= EXPR_DEPTH_CAP:
            _too_deep(self, d + 1)
        vals["_depth"] = d + 1  # not a field: eq, hash, repr and JSON ignore it


class Expr:
    """Base class of all expression variants, and home of vyre's helper constructors."""

    __slots__ = ()
    #: Levels of this expression (1 for a leaf); composite variants store their own at construction.
    _depth = 1
    #: Dataclass field names of the variant (set below the variants), read by __post_init__.
    _field_names: tuple = ()

    @property
    def depth(self) -> int:
        """Levels of this expression tree: 1 for a leaf, else 1 + the deepest operand (Call: 2 +)."""
        return self._depth

    __post_init__ = _check_fields  # run by every variant's dataclass __init__

    # ---- literals and leaves
    @staticmethod
    def u32(v: int) -> "LitU32":
        """A u32 literal in [0, 2**32); NumPy integer scalars are accepted, bools and floats are not."""
        return LitU32(check_int(v, "u32 literal", 0, 0xFFFFFFFF,
                                "use a value in [0, 4294967295]; mask wrap-around values with v & 0xFFFFFFFF"))

    @staticmethod
    def i32(v: int) -> "LitI32":
        return LitI32(check_int(v, "i32 literal", -2**31, 2**31 - 1,
                                "use a value in [-2147483648, 2147483647] (Expr.u32 for larger unsigned values)"))

    @staticmethod
    def f32(v: float) -> "LitF32":
        """An f32 literal, rounded to nearest like Rust's `v as f32` (1e40 -> +inf); stored as its
        bit pattern so NaN payloads and -0.0 survive."""
        return LitF32(f32_literal_bits(v))

    @staticmethod
    def bool(v: bool) -> "LitBool":  # noqa: A003 - vyre's name
        if not isinstance(v, (bool, np.bool_)):
            raise IRError(f"bool literal must be True or False, got {type(v).__name__} {show(v)}. "
                          "Fix: pass a bool (e.g. bool(x)), or compare: Expr.ne(x, Expr.u32(0)).")
        return LitBool(bool(v))

    @staticmethod
    def var(name: str) -> "Var":
        return Var(check_name(name, "variable name"))

    @staticmethod
    def load(buffer: str, index: "Expr") -> "Load":
        return Load(check_name(buffer, "load buffer name"), _operand(index, "load index"))

    @staticmethod
    def buf_len(buffer: str) -> "BufLen":
        return BufLen(check_name(buffer, "buf_len buffer name"))

    # gid_x .. gid_z, local_x .. local_z, workgroup_x .. workgroup_z (and vyre's aliases) are set
    # below the variant classes.

    @staticmethod
    def subgroup_local_id() -> "SubgroupLocalId":
        return SubgroupLocalId()

    @staticmethod
    def subgroup_size() -> "SubgroupSize":
        return SubgroupSize()

    # ---- composite
    @staticmethod
    def select(cond: "Expr", true_val: "Expr", false_val: "Expr") -> "Select":
        return Select(_operand(cond, "select cond"), _operand(true_val, "select true_val"),
                      _operand(false_val, "select false_val"))

    @staticmethod
    def cast(target: DataType, value: "Expr") -> "Cast":
        return Cast(check_member(target, DataType, "cast target"), _operand(value, "cast value"))

    @staticmethod
    def fma(a: "Expr", b: "Expr", c: "Expr") -> "Fma":
        return Fma(_operand(a, "fma a"), _operand(b, "fma b"), _operand(c, "fma c"))

    @staticmethod
    def call(op_id: str, args: Sequence["Expr"]) -> "Call":
        args = check_seq(args, "call arguments", "pass the arguments as a list, e.g. [Expr.u32(1)]")
        return Call(check_name(op_id, "call op id"), tuple(_operand(a, "call argument") for a in args))

    @staticmethod
    def binop(op: BinOp, left: "Expr", right: "Expr") -> "BinOpExpr":
        return BinOpExpr(check_member(op, BinOp, "binary operator"), _operand(left, f"{op.name} left"),
                         _operand(right, f"{op.name} right"))

    @staticmethod
    def unop(op: UnOp, operand: "Expr") -> "UnOpExpr":
        return UnOpExpr(check_member(op, UnOp, "unary operator"), _operand(operand, f"{op.name} operand"))

    # ---- atomics (SeqCst unless an ordering is given)
    @staticmethod
    def atomic(op: AtomicOp, buffer: str, index: "Expr", value: "Expr",
               expected: Optional["Expr"] = None,
               ordering: MemoryOrdering = MemoryOrdering.SeqCst) -> "Atomic":
        return _atomic_expr(check_member(op, AtomicOp, "atomic operator"), buffer, index, expected, value,
                            ordering)

    @staticmethod
    def atomic_compare_exchange(buffer: str, index: "Expr", expected: "Expr", new: "Expr") -> "Atomic":
        return _atomic_expr(AtomicOp.CompareExchange, buffer, index, _operand(expected, "atomic expected"), new,
                            MemoryOrdering.SeqCst)

    @staticmethod
    def atomic_add_ordered(buffer: str, index: "Expr", value: "Expr", ordering: MemoryOrdering) -> "Atomic":
        return _atomic_expr(AtomicOp.Add, buffer, index, None, value, ordering)

    # ---- subgroup: vyre's simulated width-32 subgroups (IR-SPEC 2.6; SUBGROUP_WIDTH)
    @staticmethod
    def subgroup_ballot(cond: "Expr") -> "SubgroupBallot":
        return SubgroupBallot(_operand(cond, "subgroup_ballot cond"))

    @staticmethod
    def subgroup_shuffle(value: "Expr", lane: "Expr") -> "SubgroupShuffle":
        return SubgroupShuffle(_operand(value, "subgroup_shuffle value"), _operand(lane, "subgroup_shuffle lane"))

    @staticmethod
    def subgroup_reduce(op: str, value: "Expr") -> "SubgroupReduce":
        """`op` is one of SUBGROUP_REDUCE_OPS ("Add", "Mul", "Min", "Max", "And", "Or", "Xor")."""
        # Only the kind is checked: an unknown op name is validation's UnsupportedFeature.
        return SubgroupReduce(check_name(op, "subgroup reduce op"), _operand(value, "subgroup_reduce value"))


def _atomic_expr(op: AtomicOp, buffer: Any, index: Any, expected: Any, value: Any, ordering: Any) -> "Atomic":
    if expected is not None:
        _operand(expected, "atomic expected")
    return Atomic(op, check_name(buffer, "atomic buffer name"), _operand(index, "atomic index"), expected,
                  _operand(value, "atomic value"), check_member(ordering, MemoryOrdering, "atomic ordering"))


def _binary(op: BinOp):
    lw, rw = f"{op.name} left", f"{op.name} right"

    def helper(left: Expr, right: Expr) -> "BinOpExpr":
        return BinOpExpr(op, _operand(left, lw), _operand(right, rw))
    helper.__doc__ = f"BinOp{{{op.name}}}(left, right)"
    return staticmethod(helper)


def _unary(op: UnOp):
    what = f"{op.name} operand"

    def helper(operand: Expr) -> "UnOpExpr":
        return UnOpExpr(op, _operand(operand, what))
    helper.__doc__ = f"UnOp{{{op.name}}}(operand)"
    return staticmethod(helper)


def _atomic(op: AtomicOp):
    def helper(buffer: str, index: Expr, value: Expr) -> "Atomic":
        return _atomic_expr(op, buffer, index, None, value, MemoryOrdering.SeqCst)
    helper.__doc__ = f"Atomic{{{op.name}}}(buffer, index, value), SeqCst; returns the old value"
    return staticmethod(helper)


def _subgroup(op: str):
    what = f"subgroup_{op.lower()} value"

    def helper(value: Expr) -> "SubgroupReduce":
        return SubgroupReduce(op, _operand(value, what))
    helper.__doc__ = f"SubgroupReduce{{{op}}}(value)"
    return staticmethod(helper)


for _n, _op in BIN_HELPERS.items():
    setattr(Expr, _n, _binary(_op))
for _n, _op in UN_HELPERS.items():
    setattr(Expr, _n, _unary(_op))
for _n, _op in ATOMIC_HELPERS.items():
    setattr(Expr, _n, _atomic(_op))
for _n in SUBGROUP_HELPERS:  # subgroup_add, ..., subgroup_xor
    setattr(Expr, f"subgroup_{_n.lower()}", _subgroup(_n))


_frozen = dataclass(frozen=True)


def _too_deep(self: Expr, d: int) -> None:
    raise IRDepthError(f"{type(self).__name__} expression {d} levels deep, over the cap of {EXPR_DEPTH_CAP} "
                       "(validation's V033 limit is lower). Fix: bind sub-expressions with Node.let_bind and "
                       "refer to them with Expr.var.")


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
        if not is_atom(self.op_id):
            refuse_field(self, "op_id", self.op_id, "the op id as a str")
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", check_seq(self.args, "Call args", "pass a list of Expr"))
        d = 0
        for a in self.args:
            if isinstance(a, Expr):
                d = max(d, a._depth)
            elif not is_atom(a):
                refuse_field(self, "args", a, "a list of Expr")
        # The args tuple is a level of its own for ==, repr and JSON: a Call counts 2.
        if d + 2 > EXPR_DEPTH_CAP:
            _too_deep(self, d + 2)
        self.__dict__["_depth"] = d + 2


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
    _cls._field_names = tuple(f.name for f in fields(_cls))


def _axis_helper(cls: type, axis: int):
    def helper() -> Expr:
        return cls(axis)
    helper.__doc__ = f"{cls.__name__}({axis})"
    return staticmethod(helper)


for _n, _cls in (("gid", InvocationId), ("local", LocalId), ("workgroup", WorkgroupId),
                 ("invocation_local", LocalId), ("parallel_region", WorkgroupId)):
    for _axis, _xyz in enumerate("xyz"):
        setattr(Expr, f"{_n}_{_xyz}", _axis_helper(_cls, _axis))
del _name, _cls, _n, _op, _axis, _xyz


