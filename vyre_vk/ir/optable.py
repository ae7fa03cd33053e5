"""The operator table: every BinOp, UnOp, AtomicOp and Cast of the IR, defined once.

Each entry carries the operator's name, its vyre wire code (vyre-spec bin_op.rs /
un_op.rs), which operand types it accepts, how its result type is derived, the NumPy
implementation the reference evaluator runs, and the GLSL template the lowering will
emit. Validation, the reference and the lowering all read these tables; nothing about
an operator is written down anywhere else.

Conventions of the NumPy implementations:

* operands are NumPy arrays (any broadcastable shape) of the operand type's *value*
  dtype: uint32, int32, float32, or numpy bool for Bool;
* every float32 value entering an op is already canonical (see :func:`canon`), and every
  float32 result is passed through :func:`canon` here, as vyre's reference does;
* ops whose reference behaviour is an *error* for some inputs (i32 division by zero,
  ``MIN / -1``) have an ``error`` predicate; the evaluator raises if it holds on an
  active lane.

GLSL templates use ``{a}``/``{b}`` for operands; names starting with ``vyre_`` refer to
helper functions whose GLSL source is in :data:`GLSL_HELPERS`.

Example::

    >>> BINOPS[BinOp.Div].glsl["u32"]
    'vyre_div_u32({a}, {b})'
    >>> int(BINOPS[BinOp.Div].numpy(np.uint32(7), np.uint32(0), DataType.U32))
    4294967295
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from . import ffmath, ieee
from .types import DataType

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

FLT_MIN = np.float32(1.17549435e-38)
CANON_NAN_BITS = 0x7FC00000
CANON_NAN = np.array([CANON_NAN_BITS], dtype=np.uint32).view(np.float32)[0]
_U32_MAX = np.uint32(0xFFFFFFFF)


def canon(x) -> np.ndarray:
    """vyre's ``canonical_f32``: NaN -> 0x7FC00000, subnormal -> signed zero, else unchanged.

    >>> canon(np.float32(1e-40)), canon(np.float32(-1e-40))
    (array(0., dtype=float32), array(-0., dtype=float32))
    """
    x = np.asarray(x, dtype=np.float32)
    nan = np.isnan(x)
    tiny = (np.abs(x) < FLT_MIN) & (x != 0)
    if nan.any() or tiny.any():  # rare: only pay for the rewrite when needed
        x = np.where(tiny, np.copysign(np.float32(0), x), x)
        x = np.where(nan, CANON_NAN, x)
    return x


def _f(fn):
    """Wrap a float32 -> float32 NumPy op so its result is canonicalised."""
    return lambda a, b, t: canon(fn(a, b))


def _via64(fn):
    """Transcendental in float64, rounded once to float32 (close to libm's f32 results)."""
    return lambda a, t: canon(fn(np.asarray(a, np.float64)).astype(np.float32))


# ----------------------------------------------------------------------------- integer helpers
def _u32(x) -> np.ndarray:
    return np.asarray(x).astype(np.uint32, copy=False)


def _as_u32(x) -> np.ndarray:
    """Reinterpret an int32/uint32 array as uint32 bits."""
    x = np.asarray(x)
    return x.view(np.uint32) if x.dtype == np.int32 else x


def _back(bits: np.ndarray, t: DataType) -> np.ndarray:
    return bits.view(np.int32) if t is I32 else bits


def _div_u32(a, b, t):
    zero = b == 0
    return np.where(zero, _U32_MAX, a // np.where(zero, np.uint32(1), b)).astype(np.uint32)


def _mod_u32(a, b, t):
    zero = b == 0
    return np.where(zero, np.uint32(0), a % np.where(zero, np.uint32(1), b)).astype(np.uint32)


def _div_i32(a, b, t):
    # Truncating division, computed exactly in int64; the error cases are masked out here
    # and reported by _i32_div_error.
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    b64 = np.where(b64 == 0, 1, b64)
    q = np.abs(a64) // np.abs(b64)
    q = np.where((a64 < 0) ^ (b64 < 0), -q, q)
    return np.asarray(q).astype(np.int32)  # MIN / -1 wraps here; it is an error lane anyway


def _mod_i32(a, b, t):
    q = np.asarray(_div_i32(a, b, t), np.int64)
    b64 = np.where(np.asarray(b, np.int64) == 0, 1, np.asarray(b, np.int64))
    r = np.asarray(a, np.int64) - q * b64  # sign of the dividend, like Rust's %
    return np.asarray(r.astype(np.int32))


def _i32_div_error(a, b, t):
    if t is not I32:
        return None
    return (b == 0) | ((a == np.int32(-2**31)) & (b == -1))


def _shl(a, b, t):
    return (a << (b & np.uint32(31))).astype(np.uint32)


def _shr(a, b, t):
    return (a >> (b & np.uint32(31))).astype(np.uint32)


def _rotl(a, b, t):
    s = b & np.uint32(31)
    return ((a << s) | (a >> ((np.uint32(32) - s) & np.uint32(31)))).astype(np.uint32)


def _rotr(a, b, t):
    s = b & np.uint32(31)
    return ((a >> s) | (a << ((np.uint32(32) - s) & np.uint32(31)))).astype(np.uint32)


def _sat_add(a, b, t):
    s = (a + b).astype(np.uint32)
    return np.where(s < a, _U32_MAX, s).astype(np.uint32)


def _sat_sub(a, b, t):
    return np.where(a < b, np.uint32(0), a - b).astype(np.uint32)


def _sat_mul(a, b, t):
    p = np.asarray(a, np.uint64) * np.asarray(b, np.uint64)
    return np.minimum(p, np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _mulhi(a, b, t):
    return ((np.asarray(a, np.uint64) * np.asarray(b, np.uint64)) >> np.uint64(32)).astype(np.uint32)


def _absdiff(a, b, t):
    return np.where(a > b, a - b, b - a).astype(np.uint32)


def _truthy(x) -> np.ndarray:
    """Truthiness of a u32/i32/bool/f32 value (float NaN is true, like vyre)."""
    return np.asarray(x) != 0


def _popcount(a, t):
    return _back(np.bitwise_count(_as_u32(a)).astype(np.uint32), t)


def _clz(a, t):
    x = _as_u32(a).astype(np.uint32)
    n = np.zeros(x.shape, np.uint32)
    for s, m in ((16, 0xFFFF0000), (8, 0xFF000000), (4, 0xF0000000), (2, 0xC0000000), (1, 0x80000000)):
        z = (x & np.uint32(m)) == 0
        n = n + np.where(z, np.uint32(s), np.uint32(0))
        x = np.where(z, x << np.uint32(s), x).astype(np.uint32)
    n = np.where(_as_u32(a) == 0, np.uint32(32), n).astype(np.uint32)  # Clz(0) = 32
    return _back(n, t)


def _ctz(a, t):
    x = _as_u32(a)
    low = (x & (~x + np.uint32(1))) - np.uint32(1)  # ones below the lowest set bit; 0 -> all 32
    return _back(np.bitwise_count(low.astype(np.uint32)).astype(np.uint32), t)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint32)


def _reverse_bits(a, t):
    x = _as_u32(a)
    r = (_REV8[x & 0xFF] << 24) | (_REV8[(x >> 8) & 0xFF] << 16) | (_REV8[(x >> 16) & 0xFF] << 8) \
        | _REV8[(x >> 24) & 0xFF]
    return _back(np.asarray(r, np.uint32), t)


def _round_away(a, t):
    # Rust f32::round: ties away from zero. x - trunc(x) is exact in f32.
    r = np.trunc(a)
    return canon(np.where(np.abs(a - r) >= np.float32(0.5), r + np.sign(a), r).astype(np.float32))


def _sign(a, t):
    one = np.float32(1)
    return canon(np.where(a > 0, one, np.where(a < 0, -one, np.where(np.isnan(a), a, np.float32(0)))))


def _fmin(a, b):
    # Rust f32::min ignores a NaN operand; on a tie (+0 vs -0) return the first operand,
    # exactly like the GLSL helper vyre_fmin (NumPy's fmin returns the second one).
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(b < a, b, a)))


def _fmax(a, b):
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.where(a < b, b, a)))


def _f32(x):
    return np.asarray(x, np.float32)


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
    `glsl`: value-type name -> template; `supported`: False for subgroup-only forms.
    """

    op: BinOp
    types: tuple[DataType, ...]
    match: bool
    result: object
    numpy: Optional[Callable]
    glsl: dict[str, str]
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
    glsl: dict[str, str]
    transcendental: bool = False


@dataclass(frozen=True)
class AtomicInfo:
    """One atomic op. `numpy(old, value, expected)` returns the new word (uint32 scalars);
    the atomic always returns the old value. `glsl` is the GLSL builtin or helper."""

    op: AtomicOp
    numpy: Optional[Callable]
    glsl: str
    needs_expected: bool = False
    supported: bool = True

    @property
    def name(self) -> str:
        return self.op.name


@dataclass(frozen=True)
class CastInfo:
    """A legal cast between two supported types: NumPy implementation and GLSL template."""

    src: DataType
    dst: DataType
    numpy: Callable
    glsl: str


def _b(op, types, match, result, fn, glsl, **kw) -> BinOpInfo:
    return BinOpInfo(op, tuple(types), match, result, fn, glsl, **kw)


_NUM = (U32, I32, F32)
_INT = (U32, I32)
# f32 arithmetic goes through `precise` helpers: one IEEE op, never contracted into an fma
# with a neighbour (the reference rounds a*b and +c separately), then canonicalised.
_F32_ARITH = {"+": "vyre_fadd", "-": "vyre_fsub", "*": "vyre_fmul", "/": "vyre_fdiv"}
_ARITH_GLSL = lambda sym: {"u32": f"({{a}} {sym} {{b}})", "i32": f"({{a}} {sym} {{b}})",  # noqa: E731
                           "f32": f"{_F32_ARITH[sym]}({{a}}, {{b}})"}
_CMP_GLSL = lambda sym: {k: f"({{a}} {sym} {{b}})" for k in ("u32", "i32", "f32", "bool")}  # noqa: E731


def _arith(fn_int, fn_f32):
    def impl(a, b, t):
        return canon(fn_f32(a, b)) if t is F32 else np.asarray(fn_int(a, b)).astype(t.numpy, copy=False)
    return impl


_I32_ERR = "i32 division or remainder by zero, or i32::MIN / -1 (undefined backend semantics in vyre)"

#: The BinOp table.
BINOPS: dict[BinOp, BinOpInfo] = {i.op: i for i in [
    _b(BinOp.Add, _NUM, True, SAME, _arith(np.add, np.add), _ARITH_GLSL("+")),
    _b(BinOp.Sub, _NUM, True, SAME, _arith(np.subtract, np.subtract), _ARITH_GLSL("-")),
    _b(BinOp.Mul, _NUM, True, SAME, _arith(np.multiply, np.multiply), _ARITH_GLSL("*")),
    _b(BinOp.Div, _NUM, True, SAME,
       lambda a, b, t: _div_u32(a, b, t) if t is U32 else _div_i32(a, b, t) if t is I32 else canon(a / b),
       {"u32": "vyre_div_u32({a}, {b})", "i32": "vyre_div_i32({a}, {b})", "f32": "vyre_fdiv({a}, {b})"},
       error=_i32_div_error, error_message=_I32_ERR, static_zero_divisor=True),
    _b(BinOp.Mod, _INT, True, SAME,
       lambda a, b, t: _mod_u32(a, b, t) if t is U32 else _mod_i32(a, b, t),
       {"u32": "vyre_mod_u32({a}, {b})", "i32": "vyre_mod_i32({a}, {b})"},
       error=_i32_div_error, error_message=_I32_ERR, static_zero_divisor=True),
    _b(BinOp.WrappingAdd, _INT, True, SAME, lambda a, b, t: np.asarray(a + b).astype(t.numpy),
       {"u32": "({a} + {b})", "i32": "({a} + {b})"}),
    _b(BinOp.WrappingSub, _INT, True, SAME, lambda a, b, t: np.asarray(a - b).astype(t.numpy),
       {"u32": "({a} - {b})", "i32": "({a} - {b})"}),
    _b(BinOp.BitAnd, _INT, True, SAME, lambda a, b, t: a & b, {"u32": "({a} & {b})", "i32": "({a} & {b})"}),
    _b(BinOp.BitOr, _INT, True, SAME, lambda a, b, t: a | b, {"u32": "({a} | {b})", "i32": "({a} | {b})"}),
    _b(BinOp.BitXor, _INT, True, SAME, lambda a, b, t: a ^ b, {"u32": "({a} ^ {b})", "i32": "({a} ^ {b})"}),
    # Shift amounts are masked with 31 (GLSL shifts >= 32 are undefined).
    _b(BinOp.Shl, (U32,), True, SAME, _shl, {"u32": "({a} << ({b} & 31u))"}),
    _b(BinOp.Shr, (U32,), True, SAME, _shr, {"u32": "({a} >> ({b} & 31u))"}),
    _b(BinOp.RotateLeft, (U32,), True, SAME, _rotl, {"u32": "vyre_rotl({a}, {b})"}),
    _b(BinOp.RotateRight, (U32,), True, SAME, _rotr, {"u32": "vyre_rotr({a}, {b})"}),
    _b(BinOp.Eq, (U32, I32, F32, BOOL), True, BOOL, lambda a, b, t: np.equal(a, b), _CMP_GLSL("==")),
    _b(BinOp.Ne, (U32, I32, F32, BOOL), True, BOOL, lambda a, b, t: np.not_equal(a, b),
       {**_CMP_GLSL("!="), "f32": "(!({a} == {b}))"}),  # NaN != x is true: never rely on FOrd/FUnord choice
    _b(BinOp.Lt, _NUM, True, BOOL, lambda a, b, t: np.less(a, b), _CMP_GLSL("<")),
    _b(BinOp.Gt, _NUM, True, BOOL, lambda a, b, t: np.greater(a, b), _CMP_GLSL(">")),
    _b(BinOp.Le, _NUM, True, BOOL, lambda a, b, t: np.less_equal(a, b), _CMP_GLSL("<=")),
    _b(BinOp.Ge, _NUM, True, BOOL, lambda a, b, t: np.greater_equal(a, b), _CMP_GLSL(">=")),
    # Logical, on truthiness (!= 0), never short-circuiting: both operands are evaluated.
    _b(BinOp.And, (U32, BOOL), False, BOOL, lambda a, b, t: np.logical_and(_truthy(a), _truthy(b)),
       {"*": "vyre_and(vyre_truthy({a}), vyre_truthy({b}))"}),
    _b(BinOp.Or, (U32, BOOL), False, BOOL, lambda a, b, t: np.logical_or(_truthy(a), _truthy(b)),
       {"*": "vyre_or(vyre_truthy({a}), vyre_truthy({b}))"}),
    # f32 min/max ignore a NaN operand (Rust f32::min/max); a +0/-0 tie returns the first operand.
    _b(BinOp.Min, _NUM, True, SAME, _arith(np.minimum, _fmin),
       {"u32": "min({a}, {b})", "i32": "min({a}, {b})", "f32": "vyre_fmin({a}, {b})"}),
    _b(BinOp.Max, _NUM, True, SAME, _arith(np.maximum, _fmax),
       {"u32": "max({a}, {b})", "i32": "max({a}, {b})", "f32": "vyre_fmax({a}, {b})"}),
    _b(BinOp.AbsDiff, (U32,), True, SAME, _absdiff, {"u32": "vyre_absdiff({a}, {b})"}),
    _b(BinOp.SaturatingAdd, (U32,), True, SAME, _sat_add, {"u32": "vyre_sat_add({a}, {b})"}),
    _b(BinOp.SaturatingSub, (U32,), True, SAME, _sat_sub, {"u32": "vyre_sat_sub({a}, {b})"}),
    _b(BinOp.SaturatingMul, (U32,), True, SAME, _sat_mul, {"u32": "vyre_sat_mul({a}, {b})"}),
    _b(BinOp.MulHigh, (U32,), True, SAME, _mulhi, {"u32": "vyre_mulhi({a}, {b})"}),
    # Subgroup forms: vyre's validator always rejects them ("requires backend subgroup semantics").
    _b(BinOp.Shuffle, (), True, SAME, None, {}, supported=False),
    _b(BinOp.Ballot, (), True, SAME, None, {}, supported=False),
    _b(BinOp.WaveReduce, (), True, SAME, None, {}, supported=False),
    _b(BinOp.WaveBroadcast, (), True, SAME, None, {}, supported=False),
]}


def _u(op, types, result, fn, glsl, transcendental=False) -> UnOpInfo:
    return UnOpInfo(op, tuple(types), result, fn, glsl, transcendental)


def _tr128(op, np_fn, glsl_fn, transcendental):
    return UnOpInfo(op, (F32,), SAME, _via64(np_fn), {"f32": f"vyre_canon({glsl_fn}({{a}}))"}, transcendental)


# sin/cos/tan lower to helpers with their own range reduction (a NaN r for inf/NaN x
# propagates through the polynomials): lavapipe's builtins lose it
# above |x| ~ 1e8 (cos(-8.55e14) off by millions of ULP; found by tools/fuzz) and GLSL
# leaves their precision undefined.
# GLSL's asin/acos/atan/sinh/tanh are far less accurate than libm on common drivers
# (lavapipe: asin 3771 ULP, acos 2231, atan 324 near 0, sinh/tanh 144 near 0), so these
# lower to helpers: musl's acosf/asinf rational approximations, Taylor series near 0;
# exp and tanh are evaluated in float-float (ffmath) so ops that cancel after them match.
_GLSL_ACCURATE = {UnOp.Asin: "vyre_asin", UnOp.Acos: "vyre_acos", UnOp.Atan: "vyre_atan",
                  UnOp.Sinh: "vyre_sinh", UnOp.Tanh: "vyre_tanh", UnOp.Exp: "vyre_exp"}


#: The UnOp table.
UNOPS: dict[UnOp, UnOpInfo] = {i.op: i for i in [
    # i32 Negate is rejected by vyre (MIN overflows); write 0 - x.
    _u(UnOp.Negate, (U32, F32), SAME,
       lambda a, t: canon(-a) if t is F32 else (np.uint32(0) - a).astype(np.uint32),
       {"u32": "(0u - {a})", "f32": "vyre_canon(-({a}))"}),
    _u(UnOp.BitNot, _INT, SAME, lambda a, t: np.invert(a), {"u32": "(~{a})", "i32": "(~{a})"}),
    _u(UnOp.LogicalNot, (U32, BOOL), BOOL, lambda a, t: np.asarray(a) == 0,
       {"u32": "({a} == 0u)", "bool": "(!{a})"}),
    _u(UnOp.Popcount, _INT, SAME, _popcount, {"u32": "uint(bitCount({a}))", "i32": "bitCount({a})"}),
    _u(UnOp.Clz, _INT, SAME, _clz, {"u32": "vyre_clz({a})", "i32": "int(vyre_clz(uint({a})))"}),
    _u(UnOp.Ctz, _INT, SAME, _ctz, {"u32": "vyre_ctz({a})", "i32": "int(vyre_ctz(uint({a})))"}),
    _u(UnOp.ReverseBits, _INT, SAME, _reverse_bits, {"u32": "bitfieldReverse({a})", "i32": "bitfieldReverse({a})"}),
    # abs() by the sign bit: lavapipe folds abs(-0.0) to -0.0 (found by a constant-operand sweep)
    _u(UnOp.Abs, (F32,), SAME, lambda a, t: canon(np.abs(a)),
       {"f32": "vyre_canon(uintBitsToFloat(floatBitsToUint({a}) & 0x7FFFFFFFu))"}),
    _u(UnOp.Floor, (F32,), SAME, lambda a, t: canon(np.floor(a)), {"f32": "floor({a})"}),
    _u(UnOp.Ceil, (F32,), SAME, lambda a, t: canon(np.ceil(a)), {"f32": "ceil({a})"}),
    _u(UnOp.Trunc, (F32,), SAME, lambda a, t: canon(np.trunc(a)), {"f32": "trunc({a})"}),
    _u(UnOp.Round, (F32,), SAME, _round_away, {"f32": "vyre_round({a})"}),  # ties away from zero
    _u(UnOp.Sign, (F32,), SAME, _sign, {"f32": "vyre_sign({a})"}),  # sign(+-0) = +0, NaN -> NaN
    _u(UnOp.IsNan, (F32,), BOOL, lambda a, t: np.isnan(a), {"f32": "vyre_isnan({a})"}),
    _u(UnOp.IsInf, (F32,), BOOL, lambda a, t: np.isinf(a), {"f32": "vyre_isinf({a})"}),
    _u(UnOp.IsFinite, (F32,), BOOL, lambda a, t: np.isfinite(a), {"f32": "vyre_isfinite({a})"}),
    # sqrt is correctly rounded in float32 (IEEE); inverse sqrt is 1/sqrt with two roundings.
    _u(UnOp.Sqrt, (F32,), SAME, lambda a, t: canon(np.sqrt(_f32(a))), {"f32": "vyre_sqrt_rn({a})"}, True),
    _u(UnOp.InverseSqrt, (F32,), SAME, lambda a, t: canon(np.float32(1) / np.sqrt(_f32(a))),
       {"f32": "vyre_rsqrt({a})"}, True),
    _u(UnOp.Reciprocal, (F32,), SAME, lambda a, t: canon(np.float32(1) / _f32(a)), {"f32": "vyre_frcp({a})"}),
    _tr128(UnOp.Sin, np.sin, "vyre_sin", True),
    _tr128(UnOp.Cos, np.cos, "vyre_cos", True),
    _tr128(UnOp.Tan, np.tan, "vyre_tan", False),
    _tr128(UnOp.Asin, np.arcsin, _GLSL_ACCURATE[UnOp.Asin], False),
    _tr128(UnOp.Acos, np.arccos, _GLSL_ACCURATE[UnOp.Acos], False),
    _tr128(UnOp.Atan, np.arctan, _GLSL_ACCURATE[UnOp.Atan], False),
    _tr128(UnOp.Sinh, np.sinh, _GLSL_ACCURATE[UnOp.Sinh], True),
    _tr128(UnOp.Cosh, np.cosh, "cosh", True),
    _tr128(UnOp.Tanh, np.tanh, _GLSL_ACCURATE[UnOp.Tanh], True),
    _tr128(UnOp.Exp, np.exp, _GLSL_ACCURATE[UnOp.Exp], True),
    _tr128(UnOp.Exp2, np.exp2, "exp2", False),
    _tr128(UnOp.Log, np.log, "log", True),
    _tr128(UnOp.Log2, np.log2, "log2", False),
    _u(UnOp.Unpack4Low, _INT, U32, lambda a, t: _as_u32(a) & np.uint32(0xF), {"*": "(uint({a}) & 0xFu)"}),
    _u(UnOp.Unpack4High, _INT, U32, lambda a, t: (_as_u32(a) >> np.uint32(4)) & np.uint32(0xF),
       {"*": "((uint({a}) >> 4u) & 0xFu)"}),
    _u(UnOp.Unpack8Low, _INT, U32, lambda a, t: _as_u32(a) & np.uint32(0xFF), {"*": "(uint({a}) & 0xFFu)"}),
    _u(UnOp.Unpack8High, _INT, U32, lambda a, t: (_as_u32(a) >> np.uint32(24)) & np.uint32(0xFF),
       {"*": "((uint({a}) >> 24u) & 0xFFu)"}),
]}

#: UnOps whose presence raises the program's f32 parity window to 128 ULP.
TRANSCENDENTAL_UNOPS = frozenset(op for op, i in UNOPS.items() if i.transcendental)
ELEMENTARY_F32_ULP = 4
TRANSCENDENTAL_F32_ULP = 128


def _old_new(fn):
    return lambda old, v, expected: np.uint32(fn(np.uint32(old), np.uint32(v)))


#: The AtomicOp table (u32 words only; the atomic returns the old value).
ATOMICS: dict[AtomicOp, AtomicInfo] = {i.op: i for i in [
    AtomicInfo(AtomicOp.Add, _old_new(lambda o, v: o + v), "atomicAdd"),
    AtomicInfo(AtomicOp.Or, _old_new(lambda o, v: o | v), "atomicOr"),
    AtomicInfo(AtomicOp.And, _old_new(lambda o, v: o & v), "atomicAnd"),
    AtomicInfo(AtomicOp.Xor, _old_new(lambda o, v: o ^ v), "atomicXor"),
    AtomicInfo(AtomicOp.Min, _old_new(min), "atomicMin"),
    AtomicInfo(AtomicOp.Max, _old_new(max), "atomicMax"),
    AtomicInfo(AtomicOp.Exchange, _old_new(lambda o, v: v), "atomicExchange"),
    AtomicInfo(AtomicOp.CompareExchange,
               lambda old, v, e: np.uint32(v) if np.uint32(old) == np.uint32(e) else np.uint32(old),
               "atomicCompSwap", needs_expected=True),  # strong CAS: (mem, compare, data)
    AtomicInfo(AtomicOp.LruUpdate, _old_new(max), "atomicMax"),  # same as Max in vyre's reference
    AtomicInfo(AtomicOp.CompareExchangeWeak, None, "", needs_expected=True, supported=False),
    AtomicInfo(AtomicOp.FetchNand, None, "", supported=False),
]}


# ----------------------------------------------------------------------------- casts
def _f32_to_int(lo: float, hi: float, dt):
    # Rust `as`: truncate toward zero, saturate, NaN -> 0. Exact in float64.
    def impl(x):
        f = np.asarray(x, np.float64)
        r = np.clip(np.trunc(np.where(np.isnan(f), 0.0, f)), lo, hi)
        return r.astype(np.int64).astype(dt)
    return impl


#: Legal casts among the supported types (vyre validate/cast.rs restricted to u32/i32/f32/bool),
#: with the reference semantics of vyre-reference expr_cast.rs.
CASTS: dict[tuple[DataType, DataType], CastInfo] = {(c.src, c.dst): c for c in [
    CastInfo(U32, U32, lambda x: x, "{a}"),
    CastInfo(I32, I32, lambda x: x, "{a}"),
    CastInfo(F32, F32, lambda x: x, "{a}"),
    CastInfo(BOOL, BOOL, lambda x: x, "{a}"),
    CastInfo(I32, U32, lambda x: np.asarray(x, np.int32).view(np.uint32), "uint({a})"),  # bit reinterpret
    CastInfo(U32, I32, lambda x: np.asarray(x, np.uint32).view(np.int32), "int({a})"),
    CastInfo(BOOL, U32, lambda x: np.asarray(x).astype(np.uint32), "uint({a})"),
    CastInfo(BOOL, I32, lambda x: np.asarray(x).astype(np.int32), "int({a})"),
    CastInfo(U32, BOOL, _truthy, "({a} != 0u)"),
    CastInfo(I32, BOOL, _truthy, "({a} != 0)"),
    CastInfo(F32, BOOL, _truthy, "vyre_f32_truthy({a})"),  # NaN is true
    CastInfo(U32, F32, lambda x: canon(np.asarray(x).astype(np.float32)), "float({a})"),  # RNE
    CastInfo(I32, F32, lambda x: canon(np.asarray(x).astype(np.float32)), "float({a})"),
    CastInfo(BOOL, F32, lambda x: np.asarray(x).astype(np.float32), "({a} ? 1.0 : 0.0)"),
    CastInfo(F32, U32, _f32_to_int(0.0, 4294967295.0, np.uint32), "vyre_f32_to_u32({a})"),
    CastInfo(F32, I32, _f32_to_int(-2147483648.0, 2147483647.0, np.int32), "vyre_f32_to_i32({a})"),
]}


#: GLSL templates of the two non-operator expressions whose semantics need care: Select
#: evaluates both arms (a function call evaluates every argument; `?:` would not), and
#: Fma is one fused rounding.
EXPR_GLSL: dict[str, str] = {
    "Select": "vyre_select({c}, {t}, {f})",
    "Fma": "vyre_fma({a}, {b}, {c})",
}

#: GLSL source of every helper the templates above name. The lowering emits the ones a
#: shader uses (and, transitively, the helpers those call). `vyre_trap(code)` is provided by
#: the lowering: it records a trap in a flag buffer so the runtime can raise, as the
#: reference does.
#:
#: Float classification is done on the bit pattern, never with isnan()/abs() compares: a
#: driver may flush subnormals in compares or assume no NaNs, and the canonical form is a
#: bit-level contract (NaN -> 0x7FC00000, subnormal -> signed zero).
GLSL_HELPERS: dict[str, str] = {
    "vyre_isnan": "bool vyre_isnan(float x) { uint b = floatBitsToUint(x); "
                  "return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu) != 0u; }",
    "vyre_isinf": "bool vyre_isinf(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) == 0x7F800000u; }",
    "vyre_isfinite": "bool vyre_isfinite(float x) { return (floatBitsToUint(x) & 0x7F800000u) != 0x7F800000u; }",
    "vyre_canon": """float vyre_canon(float x) {
    uint b = floatBitsToUint(x);
    uint e = b & 0x7F800000u;
    if (e == 0u) return uintBitsToFloat(b & 0x80000000u);
    if (e == 0x7F800000u && (b & 0x007FFFFFu) != 0u) return uintBitsToFloat(0x7FC00000u);
    return x;
}""",
    # Zero operands are spelled out with bit tests: lavapipe folds `x + 0.0` to x, `0.0 - x`
    # to -x, `x * 0.0` to 0.0 and `0.0 / x` to 0.0 when the zero is a compile-time
    # constant, `precise` notwithstanding (wrong for x = -0, NaN, +-inf; found by tools/fuzz).
    # vyre_fzsum: the exact result of a + b when it is a zero (both zero, or x + -x).
    "vyre_fzsum": """bool vyre_fzsum(uint ua, uint ub) {
    return ((ua | ub) & 0x7FFFFFFFu) == 0u || ((ua ^ ub) == 0x80000000u && (ua & 0x7F800000u) != 0x7F800000u);
}""",
    "vyre_fadd": """float vyre_fadd(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    if (vyre_fzsum(ua, ub)) return uintBitsToFloat(ua & ub & 0x80000000u);
    precise float r = a + b; return vyre_canon(r);
}""",
    "vyre_fsub": """float vyre_fsub(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b) ^ 0x80000000u;
    if (vyre_fzsum(ua, ub)) return uintBitsToFloat(ua & ub & 0x80000000u);
    precise float r = a - b; return vyre_canon(r);
}""",
    "vyre_fmul": """float vyre_fmul(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    if ((ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u) {
        if (!vyre_isfinite(a) || !vyre_isfinite(b)) return uintBitsToFloat(0x7FC00000u);
        return uintBitsToFloat((ua ^ ub) & 0x80000000u);
    }
    precise float r = a * b; return vyre_canon(r);
}""",
    # vyre_fdiv and vyre_sqrt_rn live in ieee.py: correctly rounded in integers, special
    # operands by their bits (Vulkan lets drivers be 2.5/3 ULP off, NVIDIA is, and lavapipe
    # folds a division by a constant zero to 0.0, found by tools/fuzz). Results are canonical.
    "vyre_frcp": "float vyre_frcp(float a) { return vyre_fdiv(1.0, a); }",
    # two roundings, as the reference's 1 / sqrt(a)
    "vyre_rsqrt": "float vyre_rsqrt(float a) { return vyre_fdiv(1.0, vyre_sqrt_rn(a)); }",
    # Vulkan lets fma() round twice (its precision is "inherited from OpFMul then OpFAdd"),
    # and lavapipe does. So: exact product a*b = p + e (Veltkamp/Dekker), exact p + c = s + t
    # (TwoSum), result s + (t + e). Exact in the cancellation cases that tell fused from
    # unfused; otherwise at most 1 ULP from a single rounding. Falls back to fma() when
    # an intermediate overflows (|a| or |b| above ~1e34).
    # Zero, infinite and NaN operands are decided up front (exactly, with bit tests): the
    # split below loses NaN and the sign of zero, and lavapipe folds `0.0 * x` (see vyre_fmul).
    "vyre_fma": """float vyre_fma(float a, float b, float c) {
    if (vyre_isnan(a) || vyre_isnan(b) || vyre_isnan(c)) return uintBitsToFloat(0x7FC00000u);
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b), uc = floatBitsToUint(c), ps = (ua ^ ub) & 0x80000000u;
    if ((ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u) {  // the product is an exact +-0 (or 0 * inf)
        if (vyre_isinf(a) || vyre_isinf(b)) return uintBitsToFloat(0x7FC00000u);
        return (uc & 0x7FFFFFFFu) == 0u ? uintBitsToFloat(ps & uc) : c;
    }
    if (vyre_isinf(a) || vyre_isinf(b)) {  // the product is +-inf
        if (vyre_isinf(c) && (uc & 0x80000000u) != ps) return uintBitsToFloat(0x7FC00000u);
        return uintBitsToFloat(ps | 0x7F800000u);
    }
    if (vyre_isinf(c)) return c;  // the exact product of finite a, b never overflows
    float p, e, s, t;
    vyre_two_prod(a, b, p, e);
    vyre_two_sum(p, c, s, t);
    precise float r = s + (t + e);
    precise float ta = 4097.0 * a, tb = 4097.0 * b;  // two_prod's split, overflowed?
    if (!vyre_isfinite(ta) || !vyre_isfinite(tb) || !vyre_isfinite(s) || !vyre_isfinite(r)) {
        precise float f = fma(a, b, c);
        r = f;
    }
    // an exact zero: +0 from cancellation (c != 0), the product's sign if it underflowed (c == +-0)
    if ((floatBitsToUint(r) & 0x7FFFFFFFu) == 0u) return uintBitsToFloat((uc & 0x7FFFFFFFu) == 0u ? ps : 0u);
    return vyre_canon(r);
}""",
    "vyre_select": "\n".join(f"{t} vyre_select(bool c, {t} a, {t} b) {{ return c ? a : b; }}"
                             for t in ("uint", "int", "float", "bool")),
    # |x| = (4k + quad) * pi/2 + r, |r| <= pi/4. Payne-Hanek: a 96-bit window of 2/pi's bits
    # (table: 2/pi to 320 bits after two zero words) times the 24-bit mantissa gives x*2/pi
    # mod 4 with 94 fraction bits; the fraction's top 64 bits, normalised, times pi/2 in two
    # parts. Exact enough for every f32 (its worst case sits ~2^-30 from a multiple of pi/2).
    "vyre_trig_reduce": """float vyre_trig_reduce(float ax, out uint quad) {
    quad = 0u;
    if ((floatBitsToUint(ax) & 0x7F800000u) == 0x7F800000u) return uintBitsToFloat(0x7FC00000u);  // inf, NaN
    if (ax < 0.78539816) return ax;
    const uint T[12] = uint[](0u, 0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,
                              0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u);
    uint bits = floatBitsToUint(ax);
    int start = int((bits >> 23) & 0xFFu) - 88;  // first window bit - 1: (exponent - 150) + 62
    uint m = (bits & 0x7FFFFFu) | 0x800000u;
    int q = start >> 5;
    int sh = start & 31;
    uint u0 = T[q], u1 = T[q + 1], u2 = T[q + 2];
    if (sh != 0) {
        u0 = (u0 << sh) | (u1 >> (32 - sh));
        u1 = (u1 << sh) | (u2 >> (32 - sh));
        u2 = (u2 << sh) | (T[q + 3] >> (32 - sh));
    }
    uint hi2, lo2, hi1, lo1, hi0, lo0, carry;
    umulExtended(m, u2, hi2, lo2);
    umulExtended(m, u1, hi1, lo1);
    umulExtended(m, u0, hi0, lo0);
    uint w1 = uaddCarry(hi2, lo1, carry);
    uint w2 = hi1 + lo0 + carry;
    quad = w2 >> 30;
    uint hi = (w2 << 2) | (w1 >> 30), lo = (w1 << 2) | (lo2 >> 30);
    bool neg = (hi >> 31) != 0u;  // fraction >= 1/2: round to the next quadrant, r < 0
    if (neg) {
        quad = (quad + 1u) & 3u;
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0u ? 1u : 0u);
    }
    int e = 0;
    if (hi == 0u) { hi = lo; lo = 0u; e = 32; }
    if (hi == 0u) return 0.0;
    int lz = 31 - findMSB(hi);
    if (lz > 0) { hi = (hi << lz) | (lo >> (32 - lz)); lo = lo << lz; }
    float scale = ldexp(1.0, -32 - (e + lz));
    precise float a = float(hi & 0xFFFFFF00u) * scale;
    precise float b = (float(hi & 0xFFu) + float(lo) * 2.3283064365386963e-10) * scale;
    precise float r = fma(a, 1.5707963705062866, fma(a, -4.371139000186241e-08, b * 1.5707963705062866));
    return neg ? -r : r;
}""",
    # Cephes sinf/cosf minimax polynomials on [-pi/4, pi/4] (about 1 ULP).
    "vyre_sin_poly": """float vyre_sin_poly(float r) {
    precise float z = r * r;
    precise float p = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
    return p;
}""",
    "vyre_cos_poly": """float vyre_cos_poly(float r) {
    precise float z = r * r;
    precise float p = (1.0 - 0.5 * z) + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3
                                                                           + z * 2.443315711809948e-5));
    return p;
}""",
    "vyre_sin": """float vyre_sin(float x) {
    uint ix = floatBitsToUint(x), quad;
    float r = vyre_trig_reduce(uintBitsToFloat(ix & 0x7FFFFFFFu), quad);
    float s = (quad & 1u) == 0u ? vyre_sin_poly(r) : vyre_cos_poly(r);
    if (quad >= 2u) s = -s;
    return (ix >> 31) != 0u ? -s : s;
}""",
    "vyre_cos": """float vyre_cos(float x) {
    uint ix = floatBitsToUint(x), quad;
    float r = vyre_trig_reduce(uintBitsToFloat(ix & 0x7FFFFFFFu), quad);
    float c = (quad & 1u) == 0u ? vyre_cos_poly(r) : vyre_sin_poly(r);
    return (quad == 1u || quad == 2u) ? -c : c;
}""",
    "vyre_tan": """float vyre_tan(float x) {
    uint ix = floatBitsToUint(x), quad;
    float r = vyre_trig_reduce(uintBitsToFloat(ix & 0x7FFFFFFFu), quad);
    float s = vyre_sin_poly(r), c = vyre_cos_poly(r);
    float t = (quad & 1u) == 0u ? s / c : -c / s;
    return (ix >> 31) != 0u ? -t : t;
}""",
    # musl acosf (rational approximation R(z), split pi/2); asin via acos for |x| >= 0.5.
    "vyre_asin_r": """float vyre_asin_r(float z) {
    precise float p = z * (1.6666586697e-01 + z * (-4.2743422091e-02 + z * -8.6563630030e-03));
    precise float q = 1.0 + z * -7.0662963390e-01;
    return p / q;
}""",
    "vyre_acos": """float vyre_acos(float x) {
    const float pio2_hi = 1.5707962513e+00, pio2_lo = 7.5497894159e-08;
    uint hx = floatBitsToUint(x), ix = hx & 0x7FFFFFFFu;
    if (ix >= 0x3F800000u) {
        if (ix == 0x3F800000u) return (hx >> 31) != 0u ? 2.0 * pio2_hi : 0.0;
        return uintBitsToFloat(0x7FC00000u);
    }
    if (ix < 0x3F000000u) {
        if (ix <= 0x32800000u) return pio2_hi;
        precise float r = pio2_hi - (x - (pio2_lo - x * vyre_asin_r(x * x)));
        return r;
    }
    if ((hx >> 31) != 0u) {
        precise float z = (1.0 + x) * 0.5;
        precise float s = sqrt(z);
        precise float w = vyre_asin_r(z) * s - pio2_lo;
        precise float r = 2.0 * (pio2_hi - (s + w));
        return r;
    }
    precise float z = (1.0 - x) * 0.5;
    precise float s = sqrt(z);
    precise float df = uintBitsToFloat(floatBitsToUint(s) & 0xFFFFF000u);
    precise float c = (z - df * df) / (s + df);
    precise float w = vyre_asin_r(z) * s + c;
    precise float r = 2.0 * (df + w);
    return r;
}""",
    "vyre_asin": """float vyre_asin(float x) {
    const float pio2_hi = 1.5707962513e+00, pio2_lo = 7.5497894159e-08;
    uint ix = floatBitsToUint(x) & 0x7FFFFFFFu;
    if (ix >= 0x3F000000u) {
        precise float r = pio2_hi - (vyre_acos(abs(x)) - pio2_lo);
        return ix > 0x3F800000u ? r : (x < 0.0 ? -r : r);
    }
    if (ix < 0x39800000u) return x;
    precise float r = x + x * vyre_asin_r(x * x);
    return r;
}""",
    # Near 0 the builtins lose relative accuracy; Taylor terms are exact to < 1e-11 there.
    "vyre_atan": """float vyre_atan(float x) {
    if (abs(x) >= 0.125) return atan(x);
    precise float z = x * x;
    precise float r = x - x * z * (1.0 / 3.0 - z * (0.2 - z * (1.0 / 7.0 - z * (1.0 / 9.0))));
    return r;
}""",
    "vyre_sinh": """float vyre_sinh(float x) {
    if (abs(x) >= 0.125) return sinh(x);
    precise float z = x * x;
    precise float r = x + x * z * (1.0 / 6.0 + z * (1.0 / 120.0 + z * (1.0 / 5040.0)));
    return r;
}""",
    "vyre_div_u32": "uint vyre_div_u32(uint a, uint b) { return b == 0u ? 0xFFFFFFFFu : a / b; }",
    "vyre_mod_u32": "uint vyre_mod_u32(uint a, uint b) { return b == 0u ? 0u : a % b; }",
    "vyre_div_i32": """int vyre_div_i32(int a, int b) {
    if (b == 0 || (a == int(0x80000000u) && b == -1)) { vyre_trap(1u); return 0; }
    return a / b;
}""",
    "vyre_mod_i32": """int vyre_mod_i32(int a, int b) {
    if (b == 0 || (a == int(0x80000000u) && b == -1)) { vyre_trap(1u); return 0; }
    return a - (a / b) * b;
}""",
    "vyre_rotl": "uint vyre_rotl(uint a, uint b) { uint s = b & 31u; return (a << s) | (a >> ((32u - s) & 31u)); }",
    "vyre_rotr": "uint vyre_rotr(uint a, uint b) { uint s = b & 31u; return (a >> s) | (a << ((32u - s) & 31u)); }",
    "vyre_truthy": "bool vyre_truthy(bool x) { return x; }\nbool vyre_truthy(uint x) { return x != 0u; }",
    "vyre_and": "bool vyre_and(bool a, bool b) { return a && b; }",
    "vyre_or": "bool vyre_or(bool a, bool b) { return a || b; }",
    # min/max(+-0, -+0) is the first operand, as the reference's: decided by bits, because
    # NVIDIA's compiler turns `b < a ? b : a` into its min instruction, which orders -0 < +0.
    "vyre_fzeros": "bool vyre_fzeros(float a, float b) { return ((floatBitsToUint(a) | floatBitsToUint(b)) & 0x7FFFFFFFu) == 0u; }",
    "vyre_fmin": """float vyre_fmin(float a, float b) {
    return vyre_isnan(a) ? b : (vyre_isnan(b) || vyre_fzeros(a, b) ? a : (b < a ? b : a));
}""",
    "vyre_fmax": """float vyre_fmax(float a, float b) {
    return vyre_isnan(a) ? b : (vyre_isnan(b) || vyre_fzeros(a, b) ? a : (a < b ? b : a));
}""",
    "vyre_absdiff": "uint vyre_absdiff(uint a, uint b) { return a > b ? a - b : b - a; }",
    "vyre_sat_add": "uint vyre_sat_add(uint a, uint b) { uint s = a + b; return s < a ? 0xFFFFFFFFu : s; }",
    "vyre_sat_sub": "uint vyre_sat_sub(uint a, uint b) { return a < b ? 0u : a - b; }",
    "vyre_sat_mul": """uint vyre_sat_mul(uint a, uint b) {
    uint hi, lo; umulExtended(a, b, hi, lo); return hi != 0u ? 0xFFFFFFFFu : lo;
}""",
    "vyre_mulhi": "uint vyre_mulhi(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); return hi; }",
    "vyre_clz": "uint vyre_clz(uint x) { return x == 0u ? 32u : uint(31 - findMSB(x)); }",
    "vyre_ctz": "uint vyre_ctz(uint x) { return x == 0u ? 32u : uint(findLSB(x)); }",
    "vyre_round": """float vyre_round(float x) {
    precise float r = trunc(x);
    precise float d = abs(x - r);
    if (d >= 0.5) r += sign(x);
    return vyre_canon(r);
}""",
    # On the bits: a compiler may turn the compare chain into its own fsign, which gives -0.
    "vyre_sign": """float vyre_sign(float x) {
    uint b = floatBitsToUint(x);
    if (vyre_isnan(x)) return x;
    if ((b & 0x7FFFFFFFu) == 0u) return 0.0;
    return (b & 0x80000000u) != 0u ? -1.0 : 1.0;
}""",
    "vyre_f32_truthy": "bool vyre_f32_truthy(float x) { return vyre_isnan(x) || x != 0.0; }",
    "vyre_f32_to_u32": """uint vyre_f32_to_u32(float x) {
    if (vyre_isnan(x) || x <= 0.0) return 0u;
    if (x >= 4294967296.0) return 0xFFFFFFFFu;
    return uint(x);
}""",
    "vyre_f32_to_i32": """int vyre_f32_to_i32(float x) {
    if (vyre_isnan(x)) return 0;
    if (x >= 2147483648.0) return 0x7FFFFFFF;
    if (x <= -2147483648.0) return int(0x80000000u);
    return int(x);
}""",
    **ffmath.GLSL,  # exp, tanh: float-float, correctly rounded but for ~1 in 10^7 (see ffmath)
    **ieee.GLSL,  # division, sqrt: correctly rounded in integer arithmetic (see ieee)
}
