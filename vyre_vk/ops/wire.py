"""Little-endian byte packing used by op test vectors (vyre-primitives/src/wire.rs).

Example::

    >>> pack_f32_slice([1.0, 2.0]).hex()
    '0000803f00000040'
    >>> unpack_u32_slice(pack_u32_slice([7, 8]))
    [7, 8]
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np
from vyre_vk.ops.registry import OpParamError

_F32, _U32, _I32 = np.dtype("<f4"), np.dtype("<u4"), np.dtype("<i4")


def pack_f32_slice(values: Iterable[float]) -> bytes:
    """4 bytes LE per value (bit pattern of the f32; NaN payloads kept)."""
    return np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=_F32).tobytes()


def pack_u32_slice(values: Iterable[int]) -> bytes:
    """4 bytes LE per u32 word (values must fit in u32)."""
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values)
    if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise OpParamError("pack_u32_slice: value out of u32 range. Fix: mask values with & 0xFFFFFFFF.")
    return arr.astype(_U32).tobytes()


def pack_i32_slice(values: Iterable[int]) -> bytes:
    arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values)
    if arr.size and (arr.min() < -2**31 or arr.max() > 2**31 - 1):
        raise OpParamError("pack_i32_slice: value out of i32 range. Fix: use values in [-2^31, 2^31).")
    return arr.astype(_I32).tobytes()


def pack_bytes_as_u32_slice(data: bytes) -> bytes:
    """Each byte widened to one u32 word (how text is fed to u32 kernels)."""
    return np.frombuffer(bytes(data), np.uint8).astype(_U32).tobytes()


def _unpack(data: bytes, dt: np.dtype, count: Optional[int], name: str) -> np.ndarray:
    raw = bytes(data)
    if count is None:
        return np.frombuffer(raw[: len(raw) // 4 * 4], dt)  # a trailing partial word is dropped
    if len(raw) < 4 * count:
        raise OpParamError(f"{name}: need {4 * count} bytes for {count} words, got {len(raw)}. "
                         "Fix: pass the whole buffer.")
    return np.frombuffer(raw[: 4 * count], dt)


def unpack_f32_slice(data: bytes, count: Optional[int] = None) -> list[float]:
    return [float(x) for x in _unpack(data, _F32, count, "unpack_f32_slice")]


def unpack_u32_slice(data: bytes, count: Optional[int] = None) -> list[int]:
    return [int(x) for x in _unpack(data, _U32, count, "unpack_u32_slice")]


def unpack_i32_slice(data: bytes, count: Optional[int] = None) -> list[int]:
    return [int(x) for x in _unpack(data, _I32, count, "unpack_i32_slice")]


def decode_f32(data: bytes) -> np.ndarray:
    """Bytes -> float32 array (trailing partial word dropped)."""
    return _unpack(data, _F32, None, "decode_f32").astype(np.float32)


def decode_u32(data: bytes) -> np.ndarray:
    return _unpack(data, _U32, None, "decode_u32").astype(np.uint32)


decode_f32_le_bytes_all = decode_f32
decode_u32_le_bytes_all = decode_u32
