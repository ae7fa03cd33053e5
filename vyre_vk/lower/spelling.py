"""How GLSL spells the IR: every operator, cast, type and literal, keyed by the IR's own enums.

The IR (vyre_vk.ir.optable) says what an operator means; this table says how the lowering
writes it, like tinygrad's ``code_for_op``. Templates use ``{a}``/``{b}`` for operands
(``{c}``/``{t}``/``{f}`` in Select); names starting with ``vyre_`` are helper functions whose
source is in :data:`vyre_vk.lower.helpers.GLSL_HELPERS`. Each template uses every operand
exactly once, so operands are evaluated left to right exactly once.

Every BinOp, UnOp and AtomicOp has an entry; an op the Vulkan backend does not implement
has an empty one (``{}`` or None). A per-type entry exists exactly for the operand types
the optable row accepts (tests/lower/test_spelling.py checks both).

Example::

    >>> BINOP_GLSL[BinOp.Div][DataType.U32]
    'vyre_div_u32({a}, {b})'
    >>> VALUE_TYPE[DataType.Bool], STORAGE_TYPE[DataType.Bool]
    ('bool', 'uint')
"""
from __future__ import annotations

import math
from typing import Optional

from ..ir.optable import CANON_NAN_BITS, AtomicOp, BinOp, UnOp
from ..ir.types import DataType, bits_f32

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
U8, I8 = DataType.U8, DataType.I8

#: GLSL type of a *value* of each supported type (a U8 is a uint in 0..255, an I8 an int in -128..127).
VALUE_TYPE: dict[DataType, str] = {U32: "uint", I32: "int", F32: "float", BOOL: "bool", U8: "uint", I8: "int"}
#: GLSL element type inside a storage buffer: a Bool is one 32-bit word (0 = false); U8/I8 buffers
#: are arrays of words packing four bytes each (vyre_vk/lower/bytes.py).
STORAGE_TYPE: dict[DataType, str] = {U32: "uint", I32: "int", F32: "float", BOOL: "uint", U8: "uint", I8: "uint"}
#: The zero value of each supported type.
ZERO: dict[DataType, str] = {U32: "0u", I32: "0", F32: "0.0", BOOL: "false", U8: "0u", I8: "0"}

Spelling = dict[DataType, str]  # operand type -> template


def _each(types: tuple[DataType, ...], template: str) -> Spelling:
    return {t: template for t in types}


def _arith(sym: str, f32_helper: str) -> Spelling:
    # f32 arithmetic goes through `precise` helpers: one IEEE op, never contracted into an fma
    # with a neighbour (the reference rounds a*b and +c separately), then canonicalised.
    return {U32: f"({{a}} {sym} {{b}})", I32: f"({{a}} {sym} {{b}})", F32: f"{f32_helper}({{a}}, {{b}})"}


def _cmp(sym: str, types: tuple[DataType, ...]) -> Spelling:
    return _each(types, f"({{a}} {sym} {{b}})")


_INT = (U32, I32)
_NUM = (U32, I32, F32)
_ALL = (U32, I32, F32, BOOL)

#: BinOp -> operand type -> template.
BINOP_GLSL: dict[BinOp, Spelling] = {
    BinOp.Add: _arith("+", "vyre_fadd"),
    BinOp.Sub: _arith("-", "vyre_fsub"),
    BinOp.Mul: _arith("*", "vyre_fmul"),
    BinOp.Div: {U32: "vyre_div_u32({a}, {b})", I32: "vyre_div_i32({a}, {b})", F32: "vyre_fdiv({a}, {b})"},
    BinOp.Mod: {U32: "vyre_mod_u32({a}, {b})", I32: "vyre_mod_i32({a}, {b})"},
    BinOp.WrappingAdd: _each(_INT, "({a} + {b})"),
    BinOp.WrappingSub: _each(_INT, "({a} - {b})"),
    BinOp.BitAnd: _each(_INT, "({a} & {b})"),
    BinOp.BitOr: _each(_INT, "({a} | {b})"),
    BinOp.BitXor: _each(_INT, "({a} ^ {b})"),
    # Shift amounts are masked with 31 (GLSL shifts >= 32 are undefined).
    BinOp.Shl: {U32: "({a} << ({b} & 31u))"},
    BinOp.Shr: {U32: "({a} >> ({b} & 31u))"},
    BinOp.RotateLeft: {U32: "vyre_rotl({a}, {b})"},
    BinOp.RotateRight: {U32: "vyre_rotr({a}, {b})"},
    BinOp.Eq: _cmp("==", _ALL),
    # NaN != x is true: never rely on the compiler's FOrd/FUnord choice.
    BinOp.Ne: {**_cmp("!=", _ALL), F32: "(!({a} == {b}))"},
    BinOp.Lt: _cmp("<", _NUM),
    BinOp.Gt: _cmp(">", _NUM),
    BinOp.Le: _cmp("<=", _NUM),
    BinOp.Ge: _cmp(">=", _NUM),
    # Function calls, so both operands are always evaluated (no short circuit).
    BinOp.And: _each((U32, BOOL), "vyre_and(vyre_truthy({a}), vyre_truthy({b}))"),
    BinOp.Or: _each((U32, BOOL), "vyre_or(vyre_truthy({a}), vyre_truthy({b}))"),
    BinOp.Min: {U32: "min({a}, {b})", I32: "min({a}, {b})", F32: "vyre_fmin({a}, {b})"},
    BinOp.Max: {U32: "max({a}, {b})", I32: "max({a}, {b})", F32: "vyre_fmax({a}, {b})"},
    BinOp.AbsDiff: {U32: "vyre_absdiff({a}, {b})"},
    BinOp.SaturatingAdd: {U32: "vyre_sat_add({a}, {b})"},
    BinOp.SaturatingSub: {U32: "vyre_sat_sub({a}, {b})"},
    BinOp.SaturatingMul: {U32: "vyre_sat_mul({a}, {b})"},
    BinOp.MulHigh: {U32: "vyre_mulhi({a}, {b})"},
    # Subgroup forms of vyre's BinOp: always rejected by validation.
    BinOp.Shuffle: {},
    BinOp.Ballot: {},
    BinOp.WaveReduce: {},
    BinOp.WaveBroadcast: {},
}


def _canon_call(fn: str) -> Spelling:
    return {F32: f"vyre_canon({fn}({{a}}))"}


# sin/cos/tan are helpers with their own range reduction (a NaN r for inf/NaN x propagates
# through the polynomials): lavapipe's builtins lose it above |x| ~ 1e8 (cos(-8.55e14) off
# by millions of ULP; found by tools/fuzz) and GLSL leaves their precision undefined.
# GLSL's asin/acos/atan/sinh/tanh are far less accurate than libm on common drivers
# (lavapipe: asin 3771 ULP, acos 2231, atan 324 near 0, sinh/tanh 144 near 0), so these are
# helpers too: musl's acosf/asinf rational approximations, Taylor series near 0; exp and
# tanh are evaluated in float-float (ffmath.py) so ops that cancel after them match.
#: UnOp -> operand type -> template.
UNOP_GLSL: dict[UnOp, Spelling] = {
    UnOp.Negate: {U32: "(0u - {a})", F32: "vyre_canon(-({a}))"},
    UnOp.BitNot: _each(_INT, "(~{a})"),
    UnOp.LogicalNot: {U32: "({a} == 0u)", BOOL: "(!{a})"},
    UnOp.Popcount: {U32: "uint(bitCount({a}))", I32: "bitCount({a})"},
    UnOp.Clz: {U32: "vyre_clz({a})", I32: "int(vyre_clz(uint({a})))"},
    UnOp.Ctz: {U32: "vyre_ctz({a})", I32: "int(vyre_ctz(uint({a})))"},
    UnOp.ReverseBits: _each(_INT, "bitfieldReverse({a})"),
    # abs() by the sign bit: lavapipe folds abs(-0.0) to -0.0 (found by a constant-operand sweep)
    UnOp.Abs: {F32: "vyre_canon(uintBitsToFloat(floatBitsToUint({a}) & 0x7FFFFFFFu))"},
    # f32 ops spelled as one call of a GLSL builtin or of a helper (correctly rounded ones: helpers)
    **{op: {F32: f"{fn}({{a}})"} for op, fn in (
        (UnOp.Floor, "floor"), (UnOp.Ceil, "ceil"), (UnOp.Trunc, "trunc"), (UnOp.Round, "vyre_round"),
        (UnOp.Sign, "vyre_sign"), (UnOp.IsNan, "vyre_isnan"), (UnOp.IsInf, "vyre_isinf"),
        (UnOp.IsFinite, "vyre_isfinite"), (UnOp.Sqrt, "vyre_sqrt_rn"), (UnOp.InverseSqrt, "vyre_rsqrt"),
        (UnOp.Reciprocal, "vyre_frcp"))},
    UnOp.Sin: _canon_call("vyre_sin"),
    UnOp.Cos: _canon_call("vyre_cos"),
    UnOp.Tan: _canon_call("vyre_tan"),
    UnOp.Asin: _canon_call("vyre_asin"),
    UnOp.Acos: _canon_call("vyre_acos"),
    UnOp.Atan: _canon_call("vyre_atan"),
    UnOp.Sinh: _canon_call("vyre_sinh"),
    UnOp.Cosh: _canon_call("cosh"),
    UnOp.Tanh: _canon_call("vyre_tanh"),
    UnOp.Exp: _canon_call("vyre_exp"),
    UnOp.Exp2: _canon_call("exp2"),
    UnOp.Log: _canon_call("log"),
    UnOp.Log2: _canon_call("log2"),
    UnOp.Unpack4Low: _each(_INT, "(uint({a}) & 0xFu)"),
    UnOp.Unpack4High: _each(_INT, "((uint({a}) >> 4u) & 0xFu)"),
    UnOp.Unpack8Low: _each(_INT, "(uint({a}) & 0xFFu)"),
    UnOp.Unpack8High: _each(_INT, "((uint({a}) >> 24u) & 0xFFu)"),
}

#: AtomicOp -> GLSL builtin on a u32 word (None: not implemented by the Vulkan backend).
ATOMIC_GLSL: dict[AtomicOp, Optional[str]] = {
    AtomicOp.Add: "atomicAdd",
    AtomicOp.Or: "atomicOr",
    AtomicOp.And: "atomicAnd",
    AtomicOp.Xor: "atomicXor",
    AtomicOp.Min: "atomicMin",
    AtomicOp.Max: "atomicMax",
    AtomicOp.Exchange: "atomicExchange",
    AtomicOp.CompareExchange: "atomicCompSwap",  # strong CAS: (mem, compare, data)
    AtomicOp.LruUpdate: "atomicMax",  # same as Max in vyre's reference
    AtomicOp.CompareExchangeWeak: None,
    AtomicOp.FetchNand: None,
}

#: (source, target) -> template, for every cast among the supported types.
CAST_GLSL: dict[tuple[DataType, DataType], str] = {
    (U32, U32): "{a}",
    (I32, I32): "{a}",
    (F32, F32): "{a}",
    (BOOL, BOOL): "{a}",
    (I32, U32): "uint({a})",  # bit reinterpretation
    (U32, I32): "int({a})",
    (BOOL, U32): "uint({a})",
    (BOOL, I32): "int({a})",
    (U32, BOOL): "({a} != 0u)",
    (I32, BOOL): "({a} != 0)",
    (F32, BOOL): "vyre_f32_truthy({a})",  # NaN is true
    (U32, F32): "float({a})",  # round to nearest even
    (I32, F32): "float({a})",
    (BOOL, F32): "({a} ? 1.0 : 0.0)",
    (F32, U32): "vyre_f32_to_u32({a})",  # saturating, NaN -> 0
    (F32, I32): "vyre_f32_to_i32({a})",
    # Byte values live in 32-bit registers: narrowing masks (U8) or sign-extends the low byte (I8).
    (U8, U8): "{a}",
    (I8, I8): "{a}",
    (U8, I8): "(int({a} << 24u) >> 24)",
    (I8, U8): "(uint({a}) & 0xFFu)",
    (U8, U32): "{a}",
    (U8, I32): "int({a})",
    (I8, U32): "uint({a})",  # the sign-extended word's bits
    (I8, I32): "{a}",
    (U8, BOOL): "({a} != 0u)",
    (I8, BOOL): "({a} != 0)",
    (U32, U8): "({a} & 0xFFu)",
    (I32, U8): "(uint({a}) & 0xFFu)",
    (BOOL, U8): "uint({a})",
    (U32, I8): "(int({a} << 24u) >> 24)",
    (I32, I8): "(({a} << 24) >> 24)",
    (BOOL, I8): "int({a})",
}

#: Byte `i` of a byte buffer's word `w` (lane i & 3, little-endian), as a value of the byte type.
BYTE_EXTRACT: dict[DataType, str] = {U8: "(({w} >> (({i} & 3u) << 3u)) & 0xFFu)",
                                     I8: "(int({w} << ((3u - ({i} & 3u)) << 3u)) >> 24)"}

#: Select evaluates both arms (a function call evaluates every argument; `?:` would not).
SELECT_GLSL = "vyre_select({c}, {t}, {f})"
#: Fma is one fused rounding (the helper's notes say how).
FMA_GLSL = "vyre_fma({a}, {b}, {c})"


# ----------------------------------------------------------------------------- literals
def f32_literal(bits: int) -> str:
    """GLSL spelling of the *canonical* f32 with these bits (as the reference canonicalises
    literals): finite normals as round-trip decimals, the rest through uintBitsToFloat.

    >>> f32_literal(0x3F800000), f32_literal(0xFF800000)
    ('1.0', 'uintBitsToFloat(0xFF800000u)')
    """
    bits &= 0xFFFFFFFF
    exp = bits & 0x7F800000
    if exp == 0:
        bits &= 0x80000000  # subnormal -> signed zero
    elif exp == 0x7F800000 and bits & 0x007FFFFF:
        bits = CANON_NAN_BITS
    v = bits_f32(bits)
    if bits == 0:
        return "0.0"
    if not math.isfinite(v) or bits == 0x80000000:
        return f"uintBitsToFloat(0x{bits:08X}u)"
    text = repr(v)  # shortest decimal that round-trips the (exact) double -> exact f32
    if "e" not in text and "." not in text:
        text += ".0"
    return text if v > 0 else f"({text})"


def u32_literal(v: int) -> str:
    return f"{v & 0xFFFFFFFF}u"


def i32_literal(v: int) -> str:
    if v == -2**31:
        return "int(0x80000000u)"  # 2147483648 is not an int literal
    return str(v) if v >= 0 else f"({v})"
