"""The operator table: every BinOp, UnOp, AtomicOp and Cast of the IR, defined once.

Each entry carries the operator's name, its vyre wire code (vyre-spec bin_op.rs /
un_op.rs), which operand types it accepts, how its result type is derived and the NumPy
implementation the reference evaluator runs. Validation, the reference and the optimiser
read these rows; nothing about an operator's meaning is written down anywhere else. The
IR knows no backend: how a backend spells an operator is the backend's own table keyed by
the same enums (the GLSL one is vyre_vk/lower/spelling.py).

Conventions of the NumPy implementations (numerics.py):

* operands are NumPy arrays (any broadcastable shape) of the operand type's *value*
  dtype: uint32, int32, float32, or numpy bool for Bool; uint8 / int8 for the byte types
  U8 / I8 (no operator takes those: only casts, whose table covers them);
* every float32 value entering an op is already canonical (see :func:`canon`), and every
  float32 result is passed through :func:`canon` here, as vyre's reference does;
* ops whose reference behaviour is an *error* for some inputs (i32 division by zero,
  ``MIN / -1``) have an ``error`` predicate; the evaluator raises if it holds on an
  active lane.

Example::

    >>> BINOPS[BinOp.Div].result_type(DataType.U32)
    DataType.U32
    >>> int(BINOPS[BinOp.Div].numpy(np.uint32(7), np.uint32(0), DataType.U32))
    4294967295
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

# canon, FLT_MIN and CANON_NAN* are re-exported: the reference, optimiser and runtime import them from here.
from .numerics import CANON_NAN, CANON_NAN_BITS, FLT_MIN, canon  # noqa: F401
from .numerics import (absdiff, as_f32, as_u32, clz, ctz, div_i32, div_u32, fmax, fmin, i32_div_error, mod_i32,
                       mod_u32, mulhi, popcount, reverse_bits, rotl, rotr, round_away, sat_add, sat_mul, sat_sub, shl,
                       shr, sign, truthy, via64)
from .types import DataType

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
U8, I8 = DataType.U8, DataType.I8


# ----------------------------------------------------------------------------- operator enums
class BinOp(enum.Enum):
    """Binary operators with their vyre wire codes (vyre-spec/src/bin_op.rs)."""

    Add = 0x01
    Sub = 0x02
    Mul = 0x03
    Div = 0x04
    Mod = 0x05
    BitAnd = 0x06
    BitOr = 0x07
    BitXor = 0x08
    Shl = 0x09
    Shr = 0x0A
    Eq = 0x0B
    Ne = 0x0C
    Lt = 0x0D
    Gt = 0x0E
    AbsDiff = 0x0F
    Le = 0x10
    Ge = 0x11
    And = 0x12
    Or = 0x13
    Min = 0x14
    Max = 0x15
    SaturatingAdd = 0x16
    SaturatingSub = 0x17
    SaturatingMul = 0x18
    Shuffle = 0x19
    Ballot = 0x1A
    WaveReduce = 0x1B
    WaveBroadcast = 0x1C
    RotateLeft = 0x1D
    RotateRight = 0x1E
    WrappingAdd = 0x1F
    WrappingSub = 0x20
    MulHigh = 0x21


class UnOp(enum.Enum):
    """Unary operators with their vyre wire codes (vyre-spec/src/un_op.rs)."""

    Negate = 0x01
    BitNot = 0x02
    LogicalNot = 0x03
    Popcount = 0x04
    Clz = 0x05
    Ctz = 0x06
    ReverseBits = 0x07
    Cos = 0x08
    Sin = 0x09
    Abs = 0x0A
    Sqrt = 0x0B
    Floor = 0x0C
    Ceil = 0x0D
    Round = 0x0E
    Trunc = 0x0F
    Sign = 0x10
    IsNan = 0x11
    IsInf = 0x12
    IsFinite = 0x13
    Exp = 0x14
    Log = 0x15
    Log2 = 0x16
    Exp2 = 0x17
    Tan = 0x18
    Acos = 0x19
    Asin = 0x1A
    Atan = 0x1B
    Tanh = 0x1C
    Sinh = 0x1D
    Cosh = 0x1E
    InverseSqrt = 0x1F
    Unpack4Low = 0x20
    Unpack4High = 0x21
    Unpack8Low = 0x22
    Unpack8High = 0x23
    Reciprocal = 0x24


class AtomicOp(enum.Enum):
    """Atomic read-modify-write operations (vyre-spec atomic_op.rs)."""

    Add = "Add"
    Or = "Or"
    And = "And"
    Xor = "Xor"
    Min = "Min"
    Max = "Max"
    Exchange = "Exchange"
    CompareExchange = "CompareExchange"
    CompareExchangeWeak = "CompareExchangeWeak"
    FetchNand = "FetchNand"
    LruUpdate = "LruUpdate"


# ----------------------------------------------------------------------------- table rows
#: Result-type rule values: "same" (the operand type), or a fixed DataType.
SAME = "same"


class _OpInfo:
    """Name, wire code and result type, shared by the binary and unary operator entries."""

    @property
    def name(self) -> str:
        return self.op.name  # type: ignore[attr-defined]

    @property
    def code(self) -> int:
        return self.op.value  # type: ignore[attr-defined]

    def result_type(self, t: DataType) -> DataType:
        return t if self.result == SAME else self.result  # type: ignore[attr-defined, return-value]


@dataclass(frozen=True)
class BinOpInfo(_OpInfo):
    """One binary operator.

    `types`: operand types accepted; `match`: both operands must have the same type;
    `result`: SAME or a DataType; `numpy(a, b, t)`: reference implementation for operand
    type t; `error(a, b, t)`: boolean array of lanes where the reference aborts (or None);
    `supported`: False for subgroup-only forms.
    """

    op: BinOp
    types: tuple[DataType, ...]
    match: bool
    result: object
    numpy: Optional[Callable]
    error: Optional[Callable] = None
    error_message: str = ""
    static_zero_divisor: bool = False  # V044: a literal-zero right operand is rejected
    supported: bool = True


@dataclass(frozen=True)
class UnOpInfo(_OpInfo):
    """One unary operator (fields as in :class:`BinOpInfo`). `transcendental` marks the ops
    that raise vyre's f32 parity window to 128 ULP (vyre-harness fp_contract.rs)."""

    op: UnOp
    types: tuple[DataType, ...]
    result: object
    numpy: Callable
    transcendental: bool = False


@dataclass(frozen=True)
class AtomicInfo:
    """One atomic op. `numpy(old, value, expected)` returns the new word (uint32 scalars);
    the atomic always returns the old value."""

    op: AtomicOp
    numpy: Optional[Callable]
    needs_expected: bool = False
    supported: bool = True

    @property
    def name(self) -> str:
        return self.op.name


@dataclass(frozen=True)
class CastInfo:
    """A legal cast between two supported types and its NumPy implementation."""

    src: DataType
    dst: DataType
    numpy: Callable


def _b(op, types, match, result, fn, **kw) -> BinOpInfo:
    return BinOpInfo(op, tuple(types), match, result, fn, **kw)


_NUM = (U32, I32, F32)
_INT = (U32, I32)


def _arith(fn_int, fn_f32):
    def impl(a, b, t):
        return canon(fn_f32(a, b)) if t is F32 else np.asarray(fn_int(a, b)).astype(t.numpy, copy=False)
    return impl


_I32_ERR = "i32 division or remainder by zero, or i32::MIN / -1 (undefined backend semantics in vyre)"

#: The BinOp table.
BINOPS: dict[BinOp, BinOpInfo] = {i.op: i for i in [
    _b(BinOp.Add, _NUM, True, SAME, _arith(np.add, np.add)),
    _b(BinOp.Sub, _NUM, True, SAME, _arith(np.subtract, np.subtract)),
    _b(BinOp.Mul, _NUM, True, SAME, _arith(np.multiply, np.multiply)),
    _b(BinOp.Div, _NUM, True, SAME,
       lambda a, b, t: div_u32(a, b, t) if t is U32 else div_i32(a, b, t) if t is I32 else canon(a / b),
       error=i32_div_error, error_message=_I32_ERR, static_zero_divisor=True),
    _b(BinOp.Mod, _INT, True, SAME,
       lambda a, b, t: mod_u32(a, b, t) if t is U32 else mod_i32(a, b, t),
       error=i32_div_error, error_message=_I32_ERR, static_zero_divisor=True),
    _b(BinOp.WrappingAdd, _INT, True, SAME, lambda a, b, t: np.asarray(a + b).astype(t.numpy)),
    _b(BinOp.WrappingSub, _INT, True, SAME, lambda a, b, t: np.asarray(a - b).astype(t.numpy)),
    _b(BinOp.BitAnd, _INT, True, SAME, lambda a, b, t: a & b),
    _b(BinOp.BitOr, _INT, True, SAME, lambda a, b, t: a | b),
    _b(BinOp.BitXor, _INT, True, SAME, lambda a, b, t: a ^ b),
    # Shift and rotate amounts are taken mod 32.
    _b(BinOp.Shl, (U32,), True, SAME, shl),
    _b(BinOp.Shr, (U32,), True, SAME, shr),
    _b(BinOp.RotateLeft, (U32,), True, SAME, rotl),
    _b(BinOp.RotateRight, (U32,), True, SAME, rotr),
    _b(BinOp.Eq, (U32, I32, F32, BOOL), True, BOOL, lambda a, b, t: np.equal(a, b)),
    _b(BinOp.Ne, (U32, I32, F32, BOOL), True, BOOL, lambda a, b, t: np.not_equal(a, b)),  # NaN != x is true
    _b(BinOp.Lt, _NUM, True, BOOL, lambda a, b, t: np.less(a, b)),
    _b(BinOp.Gt, _NUM, True, BOOL, lambda a, b, t: np.greater(a, b)),
    _b(BinOp.Le, _NUM, True, BOOL, lambda a, b, t: np.less_equal(a, b)),
    _b(BinOp.Ge, _NUM, True, BOOL, lambda a, b, t: np.greater_equal(a, b)),
    # Logical, on truthiness (!= 0), never short-circuiting: both operands are evaluated.
    _b(BinOp.And, (U32, BOOL), False, BOOL, lambda a, b, t: np.logical_and(truthy(a), truthy(b))),
    _b(BinOp.Or, (U32, BOOL), False, BOOL, lambda a, b, t: np.logical_or(truthy(a), truthy(b))),
    # f32 min/max ignore a NaN operand (Rust f32::min/max); a +0/-0 tie returns the first operand.
    _b(BinOp.Min, _NUM, True, SAME, _arith(np.minimum, fmin)),
    _b(BinOp.Max, _NUM, True, SAME, _arith(np.maximum, fmax)),
    _b(BinOp.AbsDiff, (U32,), True, SAME, absdiff),
    _b(BinOp.SaturatingAdd, (U32,), True, SAME, sat_add),
    _b(BinOp.SaturatingSub, (U32,), True, SAME, sat_sub),
    _b(BinOp.SaturatingMul, (U32,), True, SAME, sat_mul),
    _b(BinOp.MulHigh, (U32,), True, SAME, mulhi),
    # Subgroup forms: vyre's validator always rejects them ("requires backend subgroup semantics").
    _b(BinOp.Shuffle, (), True, SAME, None, supported=False),
    _b(BinOp.Ballot, (), True, SAME, None, supported=False),
    _b(BinOp.WaveReduce, (), True, SAME, None, supported=False),
    _b(BinOp.WaveBroadcast, (), True, SAME, None, supported=False),
]}


def _u(op, types, result, fn, transcendental=False) -> UnOpInfo:
    return UnOpInfo(op, tuple(types), result, fn, transcendental)


def _tr128(op, np_fn, transcendental):
    return UnOpInfo(op, (F32,), SAME, via64(np_fn), transcendental)


#: The UnOp table.
UNOPS: dict[UnOp, UnOpInfo] = {i.op: i for i in [
    # i32 Negate is rejected by vyre (MIN overflows); write 0 - x.
    _u(UnOp.Negate, (U32, F32), SAME,
       lambda a, t: canon(-a) if t is F32 else (np.uint32(0) - a).astype(np.uint32)),
    _u(UnOp.BitNot, _INT, SAME, lambda a, t: np.invert(a)),
    _u(UnOp.LogicalNot, (U32, BOOL), BOOL, lambda a, t: np.asarray(a) == 0),
    _u(UnOp.Popcount, _INT, SAME, popcount),
    _u(UnOp.Clz, _INT, SAME, clz),
    _u(UnOp.Ctz, _INT, SAME, ctz),
    _u(UnOp.ReverseBits, _INT, SAME, reverse_bits),
    _u(UnOp.Abs, (F32,), SAME, lambda a, t: canon(np.abs(a))),
    _u(UnOp.Floor, (F32,), SAME, lambda a, t: canon(np.floor(a))),
    _u(UnOp.Ceil, (F32,), SAME, lambda a, t: canon(np.ceil(a))),
    _u(UnOp.Trunc, (F32,), SAME, lambda a, t: canon(np.trunc(a))),
    _u(UnOp.Round, (F32,), SAME, round_away),  # ties away from zero
    _u(UnOp.Sign, (F32,), SAME, sign),  # sign(+-0) = +0, NaN -> NaN
    _u(UnOp.IsNan, (F32,), BOOL, lambda a, t: np.isnan(a)),
    _u(UnOp.IsInf, (F32,), BOOL, lambda a, t: np.isinf(a)),
    _u(UnOp.IsFinite, (F32,), BOOL, lambda a, t: np.isfinite(a)),
    # sqrt is correctly rounded in float32 (IEEE); inverse sqrt is 1/sqrt with two roundings.
    _u(UnOp.Sqrt, (F32,), SAME, lambda a, t: canon(np.sqrt(as_f32(a))), True),
    _u(UnOp.InverseSqrt, (F32,), SAME, lambda a, t: canon(np.float32(1) / np.sqrt(as_f32(a))), True),
    _u(UnOp.Reciprocal, (F32,), SAME, lambda a, t: canon(np.float32(1) / as_f32(a))),
    _tr128(UnOp.Sin, np.sin, True),
    _tr128(UnOp.Cos, np.cos, True),
    _tr128(UnOp.Tan, np.tan, False),
    _tr128(UnOp.Asin, np.arcsin, False),
    _tr128(UnOp.Acos, np.arccos, False),
    _tr128(UnOp.Atan, np.arctan, False),
    _tr128(UnOp.Sinh, np.sinh, True),
    _tr128(UnOp.Cosh, np.cosh, True),
    _tr128(UnOp.Tanh, np.tanh, True),
    _tr128(UnOp.Exp, np.exp, True),
    _tr128(UnOp.Exp2, np.exp2, False),
    _tr128(UnOp.Log, np.log, True),
    _tr128(UnOp.Log2, np.log2, False),
    _u(UnOp.Unpack4Low, _INT, U32, lambda a, t: as_u32(a) & np.uint32(0xF)),
    _u(UnOp.Unpack4High, _INT, U32, lambda a, t: (as_u32(a) >> np.uint32(4)) & np.uint32(0xF)),
    _u(UnOp.Unpack8Low, _INT, U32, lambda a, t: as_u32(a) & np.uint32(0xFF)),
    _u(UnOp.Unpack8High, _INT, U32, lambda a, t: (as_u32(a) >> np.uint32(24)) & np.uint32(0xFF)),
]}

#: UnOps whose presence raises the program's f32 parity window to 128 ULP.
TRANSCENDENTAL_UNOPS = frozenset(op for op, i in UNOPS.items() if i.transcendental)
ELEMENTARY_F32_ULP = 4
TRANSCENDENTAL_F32_ULP = 128


def _old_new(fn):
    return lambda old, v, expected: np.uint32(fn(np.uint32(old), np.uint32(v)))


#: The AtomicOp table (u32 words only; the atomic returns the old value).
ATOMICS: dict[AtomicOp, AtomicInfo] = {i.op: i for i in [
    AtomicInfo(AtomicOp.Add, _old_new(lambda o, v: o + v)),
    AtomicInfo(AtomicOp.Or, _old_new(lambda o, v: o | v)),
    AtomicInfo(AtomicOp.And, _old_new(lambda o, v: o & v)),
    AtomicInfo(AtomicOp.Xor, _old_new(lambda o, v: o ^ v)),
    AtomicInfo(AtomicOp.Min, _old_new(min)),
    AtomicInfo(AtomicOp.Max, _old_new(max)),
    AtomicInfo(AtomicOp.Exchange, _old_new(lambda o, v: v)),
    AtomicInfo(AtomicOp.CompareExchange,  # strong CAS
               lambda old, v, e: np.uint32(v) if np.uint32(old) == np.uint32(e) else np.uint32(old),
               needs_expected=True),
    AtomicInfo(AtomicOp.LruUpdate, _old_new(max)),  # same as Max in vyre's reference
    AtomicInfo(AtomicOp.CompareExchangeWeak, None, needs_expected=True, supported=False),
    AtomicInfo(AtomicOp.FetchNand, None, supported=False),
]}


# ----------------------------------------------------------------------------- casts
def _f32_to_int(lo: float, hi: float, dt):
    # Rust `as`: truncate toward zero, saturate, NaN -> 0. Exact in float64.
    def impl(x):
        f = np.asarray(x, np.float64)
        r = np.clip(np.trunc(np.where(np.isnan(f), 0.0, f)), lo, hi)
        return r.astype(np.int64).astype(dt)
    return impl


#: Legal casts among the supported types (vyre validate/cast.rs restricted to u32/i32/f32/bool/u8/i8),
#: with the reference semantics of vyre-reference expr_cast.rs.
CASTS: dict[tuple[DataType, DataType], CastInfo] = {(c.src, c.dst): c for c in [
    CastInfo(U32, U32, lambda x: x),
    CastInfo(I32, I32, lambda x: x),
    CastInfo(F32, F32, lambda x: x),
    CastInfo(BOOL, BOOL, lambda x: x),
    CastInfo(I32, U32, lambda x: np.asarray(x, np.int32).view(np.uint32)),  # bit reinterpret
    CastInfo(U32, I32, lambda x: np.asarray(x, np.uint32).view(np.int32)),
    CastInfo(BOOL, U32, lambda x: np.asarray(x).astype(np.uint32)),
    CastInfo(BOOL, I32, lambda x: np.asarray(x).astype(np.int32)),
    CastInfo(U32, BOOL, truthy),
    CastInfo(I32, BOOL, truthy),
    CastInfo(F32, BOOL, truthy),  # NaN is true
    CastInfo(U32, F32, lambda x: canon(np.asarray(x).astype(np.float32))),  # RNE
    CastInfo(I32, F32, lambda x: canon(np.asarray(x).astype(np.float32))),
    CastInfo(BOOL, F32, lambda x: np.asarray(x).astype(np.float32)),
    CastInfo(F32, U32, _f32_to_int(0.0, 4294967295.0, np.uint32)),
    CastInfo(F32, I32, _f32_to_int(-2147483648.0, 2147483647.0, np.int32)),
    # Byte types (vyre cast.rs: integer-like scalars convert to each other; f32 <-> u8/i8 is V012).
    # Narrowing keeps the low 8 bits (I8 then reads them as signed); widening zero-extends a U8
    # and sign-extends an I8 (IR-SPEC 5.2; i8 -> u32 is the sign-extended word's bits).
    CastInfo(U8, U8, lambda x: x),
    CastInfo(I8, I8, lambda x: x),
    CastInfo(U8, I8, lambda x: np.asarray(x, np.uint8).view(np.int8)),
    CastInfo(I8, U8, lambda x: np.asarray(x, np.int8).view(np.uint8)),
    CastInfo(U8, U32, lambda x: np.asarray(x).astype(np.uint32)),
    CastInfo(U8, I32, lambda x: np.asarray(x).astype(np.int32)),
    CastInfo(I8, U32, lambda x: np.asarray(x).astype(np.int32).view(np.uint32)),
    CastInfo(I8, I32, lambda x: np.asarray(x).astype(np.int32)),
    CastInfo(U8, BOOL, truthy),
    CastInfo(I8, BOOL, truthy),
    CastInfo(U32, U8, lambda x: np.asarray(x).astype(np.uint8)),  # modular: the low byte
    CastInfo(I32, U8, lambda x: np.asarray(x).astype(np.uint8)),
    CastInfo(BOOL, U8, lambda x: np.asarray(x).astype(np.uint8)),
    CastInfo(U32, I8, lambda x: np.asarray(x).astype(np.int8)),
    CastInfo(I32, I8, lambda x: np.asarray(x).astype(np.int8)),
    CastInfo(BOOL, I8, lambda x: np.asarray(x).astype(np.int8)),
]}
