"""Scalar data types, buffer access modes and memory orderings of the vyre IR, and
:class:`IRError`, the error every IR constructor raises for a value of the wrong kind.

One table (:data:`DTYPES`) holds every per-type fact (wire tag, NumPy dtype, byte size,
zero value, whether the Vulkan backend supports it). Validation, the reference evaluator
and the optimiser read it from here; a backend's type names are its own (the GLSL ones are
in vyre_vk/lower/spelling.py).

U8 and I8 are byte types (:data:`BYTE_TYPES`, IR-SPEC 10.2): a buffer of them is indexed by
byte, a load gives the byte zero-extended (I8: sign-extended), BufLen is the byte count; on
the host it is a NumPy uint8/int8 array. Their values only pass through loads, stores, lets,
selects and casts (cast to u32/i32 for arithmetic, as vyre's reference requires).

Example::

    >>> DataType.F32.numpy, DataType.F32.size
    (dtype('float32'), 4)
"""
from __future__ import annotations

import enum
import numbers
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from vyre_vk.errors import VyreError


class IRError(VyreError, ValueError):
    """An IR value built wrongly: a literal out of range, a name that is not a string, an
    operand that is not an Expr, a bad buffer declaration or workgroup size. Raised by the
    constructors, so the mistake points at the line that made it; ends with a ``Fix:`` hint."""


class IRDepthError(IRError):
    """An expression or statement nesting deeper than the construction cap
    (``expr.EXPR_DEPTH_CAP`` / ``node.NESTING_CAP``), past which Python recursion is unsafe."""


def show(v: Any, limit: int = 60) -> str:
    """A short repr for error messages that cannot itself fail (ints over 4300 digits, deep
    containers and hostile __repr__ methods raise from repr())."""
    try:
        s = repr(v)
    except Exception:  # noqa: BLE001 - any failure just means "describe it by type"
        s = f"<{type(v).__name__}>"
    return s if len(s) <= limit else s[:limit - 3] + "..."


def check_int(v: Any, what: str, lo: int, hi: int, fix: str = "") -> int:
    """`v` as a Python int in [lo, hi]; NumPy integer scalars are accepted, bools and floats are not."""
    if type(v) is int and lo <= v <= hi:  # the common case, first
        return v
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise IRError(f"{what} must be an integer, got {type(v).__name__} {show(v)}. "
                      f"Fix: {fix or f'pass an int in [{lo}, {hi}]'}.")
    n = int(v)
    if not lo <= n <= hi:
        raise IRError(f"{what} {show(n)} is out of range [{lo}, {hi}]. Fix: {fix or 'use a value in range'}.")
    return n


def check_name(v: Any, what: str, nonempty: bool = False) -> str:
    """A str (variable, buffer, op and tag names). Empty names are validation's to report, except
    where `nonempty` (a buffer's name is its identity from the start)."""
    if not isinstance(v, str) or (nonempty and not v):
        raise IRError(f"{what} must be a{' non-empty' if nonempty else ''} string, got {type(v).__name__} "
                      f"{show(v)}. Fix: pass the name as a str, e.g. \"x\".")
    return v


def check_seq(v: Any, what: str, fix: str) -> tuple:
    """`v` as a tuple: lists and other iterables are copied; str, bytes, dicts and non-iterables refused."""
    if isinstance(v, tuple):
        return v
    if isinstance(v, list):
        return tuple(v)
    if not isinstance(v, (str, bytes, bytearray, dict)):
        try:
            return tuple(v)
        except TypeError:
            pass
    raise IRError(f"{what} must be a list or tuple, got {type(v).__name__} {show(v)}. Fix: {fix}.")


def check_member(v: Any, cls: type, what: str) -> Any:
    """`v` if it is a member of the enum `cls`."""
    if not isinstance(v, cls):
        names = [f"{cls.__name__}.{m}" for m in cls.__members__]
        raise IRError(f"{what} must be a {cls.__name__}, got {type(v).__name__} {show(v)}. "
                      f"Fix: use one of {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}.")
    return v


_F32_INF, _F32_NEG_INF = 0x7F800000, 0xFF800000


def f32_bits(value: float) -> int:
    """The IEEE binary32 bit pattern of `value`, rounded to nearest-even as a C/NumPy/Rust cast
    does: finite values past FLT_MAX become +-inf. >>> f32_bits(1.0) -> 0x3F800000"""
    try:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:  # struct refuses what the IEEE cast rounds to infinity
        with np.errstate(over="ignore"):
            return int(np.array(value, np.float64).astype(np.float32).view(np.uint32))


def bits_f32(bits: int) -> float:
    """The float value of a binary32 bit pattern."""
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def f32_literal_bits(v: Any) -> int:
    """Bits of a real number rounded once to binary32 (integers exactly, however large)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise IRError(f"f32 literal must be a real number, got {type(v).__name__} {show(v)}. "
                      "Fix: pass a float (Expr.bool for booleans, float('nan') / float('inf') for specials).")
    if isinstance(v, (int, np.integer)):
        n = int(v)
        m = abs(n)
        if m < 2**53:  # exact as a double: a single rounding to f32
            return f32_bits(float(n))
        shift = m.bit_length() - 24  # keep 24 significant bits, round half to even
        q, r = divmod(m, 1 << shift)
        if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
            q += 1
        if q << shift >= 2**128:
            return _F32_INF if n > 0 else _F32_NEG_INF
        return f32_bits(float(q << shift)) | (0x80000000 if n < 0 else 0)
    try:
        return f32_bits(float(v))
    except OverflowError:  # a Fraction beyond the double range: beyond f32 as well
        return _F32_INF if v > 0 else _F32_NEG_INF


class DataType(enum.Enum):
    """Element / value types (vyre-spec data_type.rs). Values are vyre's display names."""

    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    U64 = "u64"
    Vec2U32 = "vec2<u32>"
    Vec4U32 = "vec4<u32>"
    Bool = "bool"
    Bytes = "bytes"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    Tensor = "tensor"

    # Convenience accessors into DTYPES (the single source of truth).
    @property
    def info(self) -> "DTypeInfo":
        return DTYPES[self]

    @property
    def numpy(self) -> np.dtype:
        """NumPy dtype of one element as stored in a buffer (Bool is a u32 word)."""
        return DTYPES[self].numpy

    @property
    def size(self) -> int:
        return DTYPES[self].size

    @property
    def zero(self) -> Any:
        return DTYPES[self].zero

    @property
    def supported(self) -> bool:
        """True if the Vulkan backend (and the reference) can handle this type today."""
        return DTYPES[self].supported

    @property
    def wire_tag(self) -> int:
        return DTYPES[self].wire_tag

    @property
    def is_byte(self) -> bool:
        """U8 or I8: byte-indexed buffers, values only loaded, stored, bound, selected and cast."""
        return self in (DataType.U8, DataType.I8)

    @property
    def is_float(self) -> bool:
        return self in (DataType.F16, DataType.BF16, DataType.F32, DataType.F64)

    def __repr__(self) -> str:  # short, readable in error messages and test ids
        return f"DataType.{self.name}"


@dataclass(frozen=True)
class DTypeInfo:
    """Facts about one DataType. `numpy` is None where no NumPy dtype exists."""

    name: str
    wire_tag: int
    size: int
    numpy: np.dtype | None
    zero: Any
    supported: bool


def _info(dt: DataType, tag: int, size: int, npdt: Any, zero: Any, supported: bool) -> DTypeInfo:
    return DTypeInfo(dt.value, tag, size, None if npdt is None else np.dtype(npdt), zero, supported)


DT = DataType
#: The DataType table: wire tag (vyre-spec), byte size (min_bytes), numpy dtype, zero.
DTYPES: dict[DataType, DTypeInfo] = {
    DT.U32: _info(DT.U32, 0x01, 4, np.uint32, 0, True),
    DT.I32: _info(DT.I32, 0x02, 4, np.int32, 0, True),
    DT.F32: _info(DT.F32, 0x0B, 4, np.float32, 0.0, True),
    # Bool: one 32-bit word per element in storage (0 = false, non-zero = true).
    DT.Bool: _info(DT.Bool, 0x06, 4, np.uint32, False, True),
    # U8/I8: one byte per element (a GPU buffer packs four per 32-bit word, little-endian lanes).
    DT.U8: _info(DT.U8, 0x0E, 1, np.uint8, 0, True),
    DT.U16: _info(DT.U16, 0x0F, 2, np.uint16, 0, False),
    DT.I8: _info(DT.I8, 0x10, 1, np.int8, 0, True),
    DT.I16: _info(DT.I16, 0x11, 2, np.int16, 0, False),
    DT.I64: _info(DT.I64, 0x12, 8, np.int64, 0, False),
    DT.U64: _info(DT.U64, 0x03, 8, np.uint64, 0, False),
    DT.Vec2U32: _info(DT.Vec2U32, 0x04, 8, None, 0, False),
    DT.Vec4U32: _info(DT.Vec4U32, 0x05, 16, None, 0, False),
    DT.Bytes: _info(DT.Bytes, 0x07, 1, np.uint8, 0, False),
    DT.F16: _info(DT.F16, 0x09, 2, np.float16, 0.0, False),
    DT.BF16: _info(DT.BF16, 0x0A, 2, None, 0.0, False),
    DT.F64: _info(DT.F64, 0x0C, 8, np.float64, 0.0, False),
    DT.Tensor: _info(DT.Tensor, 0x0D, 0, None, 0, False),
}
del DT

#: Types the Vulkan backend handles now.
SUPPORTED_DTYPES: tuple[DataType, ...] = tuple(t for t, i in DTYPES.items() if i.supported)
#: Byte-addressed element types (see the module doc).
BYTE_TYPES = frozenset({DataType.U8, DataType.I8})


class BufferAccess(enum.Enum):
    """How a program may touch a buffer (vyre-spec buffer_access.rs)."""

    ReadOnly = "ReadOnly"
    ReadWrite = "ReadWrite"
    WriteOnly = "WriteOnly"
    Uniform = "Uniform"
    Workgroup = "Workgroup"

    @property
    def writable(self) -> bool:
        return self in (BufferAccess.ReadWrite, BufferAccess.WriteOnly, BufferAccess.Workgroup)


class MemoryOrdering(enum.Enum):
    """Memory ordering of atomics and barriers (vyre runtime/memory_model.rs)."""

    Relaxed = "Relaxed"
    Acquire = "Acquire"
    Release = "Release"
    AcqRel = "AcqRel"
    SeqCst = "SeqCst"
    GridSync = "GridSync"


#: Orderings an Atomic may carry (V042) and a Barrier may carry on Vulkan (V043 minus GridSync,
#: which needs a grid-wide sync Vulkan compute does not have).
ATOMIC_ORDERINGS = frozenset({MemoryOrdering.Relaxed, MemoryOrdering.Acquire, MemoryOrdering.Release,
                              MemoryOrdering.AcqRel, MemoryOrdering.SeqCst})
BARRIER_ORDERINGS = frozenset({MemoryOrdering.Acquire, MemoryOrdering.Release, MemoryOrdering.AcqRel,
                               MemoryOrdering.SeqCst})
