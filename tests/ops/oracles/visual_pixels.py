"""What the visual oracles share (no oracle is registered here): packed RGBA u32 pixels as
(..., 4) int64 channel arrays and back, random pixels with the edge channel values (0, 1, 127,
128, 254, 255) mixed in, and Rust's f32 -> 16.16 fixed-point rounding written with NumPy."""
from __future__ import annotations

import numpy as np

from .core import U32, ru32

SHIFTS = np.asarray([0, 8, 16, 24], np.uint64)
EDGE_CHANNELS = np.asarray([0, 1, 127, 128, 129, 254, 255], np.int64)


def unpack(words: np.ndarray) -> np.ndarray:
    """(..., ) u32 -> (..., 4) int64 channels R, G, B, A."""
    w = np.asarray(words, np.uint64)[..., None]
    return ((w >> SHIFTS) & np.uint64(0xFF)).astype(np.int64)


def pack(ch: np.ndarray) -> np.ndarray:
    """(..., 4) channels in [0, 255] -> (...,) u32 (checks the range: an oracle bug otherwise)."""
    ch = np.asarray(ch, np.int64)
    assert ch.min(initial=0) >= 0 and ch.max(initial=0) <= 255, "oracle produced a channel outside [0, 255]"
    return (ch.astype(np.uint64) << SHIFTS).sum(axis=-1).astype(U32)


def edgy_pixels(rng: np.random.Generator, n: int) -> np.ndarray:
    """`n` random pixels; about a third of the channels replaced by an edge value."""
    ch = unpack(ru32(rng, n))
    pick = rng.integers(0, 3, ch.shape) == 0
    ch[pick] = EDGE_CHANNELS[rng.integers(0, EDGE_CHANNELS.size, int(pick.sum()))]
    return pack(ch)


def fixed_16_16(x: float) -> int:
    """``round(f32(x) * 65536)`` half away from zero, saturated to u32 (NaN -> 0)."""
    v = float(np.float32(x)) * 65536.0   # exact in f64; equal to the f32 product unless it overflows f32
    if np.isnan(v):
        return 0
    r = np.floor(abs(v) + 0.5) * np.sign(v)
    return int(min(max(r, 0.0), 2.0**32 - 1))
