"""What the visual ops share (port of vyre-libs/src/visual/mod.rs and
vyre-primitives/src/visual/packed_rgba_map.rs): packed RGBA u32 pixels, 16.16 fixed-point
multiplies, and the host-side f32 -> fixed-point conversions vyre's Rust builders do.

A pixel is one u32: bits [7:0] = R, [15:8] = G, [23:16] = B, [31:24] = A. Every visual op runs
one invocation per pixel, ``idx = gid.x; if idx < count { ... }``, workgroup [256,1,1]. All
their IR is integer: the f32 parameters (sigma, brightness, angle, ...) are folded to integer
constants on the host when the program is built, exactly as Rust does it (``f32 * 65536.0``,
``round()`` ties away from zero, ``as u32`` saturating with NaN -> 0), so the reference and
Vulkan agree bit for bit and the NumPy oracles are exact.

Example::

    >>> hex(pack_rgba_host(0x20, 0x40, 0x80, 0xFF)), channels_host(0xFF804020)
    ('0xff804020', (32, 64, 128, 255))
    >>> f32_to_fixed_16_16(0.75), f32_round_to_u32(-3.5), f32_round_to_i32(-2.5)
    (49152, 0, -3)
    >>> packed_rgba_map("in", "out", 4).entry[0].generator
    'vyre-primitives::visual::packed_rgba_map'
"""
from __future__ import annotations

import math
from numbers import Real
from typing import Union

import numpy as np

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import ro_decl, rw_decl
from ..registry import OpParamError

#: vyre-libs visual/mod.rs PIXEL_WORKGROUP_SIZE (also vyre-primitives' packed_rgba_map's).
PIXEL_WORKGROUP_SIZE = (256, 1, 1)
PACKED_RGBA_MAP_OP_ID = "vyre-primitives::visual::packed_rgba_map"
U32_MAX = 0xFFFFFFFF
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
U32 = DataType.U32
#: Channel shifts, in R, G, B, A order.
SHIFTS = (0, 8, 16, 24)


# ---------------------------------------------------------------- builder parameters
def check_u32(op_id: str, name: str, value: object) -> int:
    """`value` as a u32 builder parameter (vyre's builders take u32), or OpParamError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) <= U32_MAX:
        raise OpParamError(f"{op_id}: `{name}` = {value!r} is not a u32. Fix: pass an int {name} in [0, 2^32).")
    return int(value)


def check_f32(op_id: str, name: str, value: object) -> np.float32:
    """`value` as the f32 a Rust builder receives (NaN and infinities pass through, as in Rust)."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise OpParamError(f"{op_id}: `{name}` = {value!r} is not a number. Fix: pass a float {name}, e.g. 1.0.")
    return np.float32(value)


def pixel_count(width: int, height: int) -> int:
    """vyre's ``width.saturating_mul(height)``."""
    return min(width * height, U32_MAX)


# ---------------------------------------------------------------- host f32 -> integer (Rust semantics)
def round_half_away(x: float) -> float:
    """Rust ``f32::round`` / ``f64::round``: ties away from zero (Python's round() ties to even)."""
    if math.isnan(x) or math.isinf(x):
        return x
    r = math.trunc(x)
    # x - trunc(x) is exact for every double, so the tie test is exact.
    return float(r + math.copysign(1.0, x)) if abs(x - r) >= 0.5 else float(r)


def saturating_cast(x: float, lo: int, hi: int) -> int:
    """Rust ``as`` from a float to an integer: truncate, saturate to [lo, hi], NaN -> 0."""
    if math.isnan(x):
        return 0
    if x <= lo:
        return lo
    if x >= hi:
        return hi
    return int(math.trunc(x))


def f32_round_to_u32(x: Union[float, np.float32]) -> int:
    """``(x as f32).round() as u32``."""
    return saturating_cast(round_half_away(float(np.float32(x))), 0, U32_MAX)


def f32_round_to_i32(x: Union[float, np.float32]) -> int:
    """``(x as f32).round() as i32``."""
    return saturating_cast(round_half_away(float(np.float32(x))), I32_MIN, I32_MAX)


def f32_to_fixed_16_16(x: Union[float, np.float32]) -> int:
    """``(x * 65536.0).round() as u32`` with x an f32: the product is taken in f32 (it can
    overflow to infinity, which then saturates to u32::MAX)."""
    with np.errstate(over="ignore", invalid="ignore"):
        product = np.float32(x) * np.float32(65536.0)
    return f32_round_to_u32(product)


# ---------------------------------------------------------------- pixel expressions
def channel(pixel: Expr, index: int) -> Expr:
    """Channel `index` (0 = R .. 3 = A) of a packed pixel, the way vyre writes it: ``p & 0xFF``,
    ``(p >> s) & 0xFF``, and ``p >> 24`` for alpha (no mask needed)."""
    if index == 0:
        return Expr.bitand(pixel, Expr.u32(0xFF))
    if index == 3:
        return Expr.shr(pixel, Expr.u32(24))
    return Expr.bitand(Expr.shr(pixel, Expr.u32(SHIFTS[index])), Expr.u32(0xFF))


def pack_rgba(r: Expr, g: Expr, b: Expr, a: Expr) -> Expr:
    """``(r | g << 8) | (b << 16 | a << 24)``, vyre's packing (channels must already be <= 255)."""
    return Expr.bitor(Expr.bitor(r, Expr.shl(g, Expr.u32(8))),
                      Expr.bitor(Expr.shl(b, Expr.u32(16)), Expr.shl(a, Expr.u32(24))))


def clamp255(x: Expr) -> Expr:
    """``select(x > 255, 255, x)``."""
    return Expr.select(Expr.gt(x, Expr.u32(255)), Expr.u32(255), x)


def wide_mul_shr_u32(left: Expr, right: Expr, shift: int) -> Expr:
    """``(left * right) >> shift`` keeping the high half of the 64-bit product:
    ``(lo >> shift) | (mulhi << (32 - shift))`` (bits shift..shift+31 of the product)."""
    if not 1 <= shift < 32:
        raise OpParamError(f"wide_mul_shr_u32: shift {shift} is outside 1..31. Fix: pass a shift in 1..31.")
    low = Expr.mul(left, right)
    high = Expr.mulhi(left, right)
    return Expr.bitor(Expr.shr(low, Expr.u32(shift)), Expr.shl(high, Expr.u32(32 - shift)))


def fixed_mul_16_16(left: Expr, right: Expr) -> Expr:
    """``(left * right) >> 16`` for unsigned 16.16 fixed-point pixel math."""
    return wide_mul_shr_u32(left, right, 16)


def pixel_decls(*pairs: tuple) -> list[BufferDecl]:
    """vyre's visual buffers: ``(name, count, "ro" | "rw")`` at bindings 0.. in order; the
    written ones are plain ReadWrite storage (an input too: its bytes are its initial contents)."""
    decl = {"ro": ro_decl, "rw": rw_decl}
    return [decl[kind](name, binding, count, U32) for binding, (name, count, kind) in enumerate(pairs)]


# ---------------------------------------------------------------- the vyre-primitives skeleton
def packed_rgba_map_node(input: str, output: str, count: int) -> Node:
    """vyre-primitives' identity packed-RGBA map: ``Region(packed_rgba_map){ idx = gid.x;
    if idx < count { out[idx] = in[idx] } }`` (the shape the visual per-pixel ops specialise)."""
    idx = Expr.var("idx")
    return wrap_anonymous(PACKED_RGBA_MAP_OP_ID, [
        Node.let_bind("idx", Expr.gid_x()),
        Node.if_then(Expr.lt(idx, Expr.u32(count)), [
            Node.let_bind("pixel", Expr.load(input, idx)),
            Node.store(output, idx, Expr.var("pixel")),
        ]),
    ])


def packed_rgba_map(input: str, output: str, count: int) -> Program:
    """The standalone primitive program: ``input`` ro and ``output`` rw, `count` u32 pixels each."""
    op = PACKED_RGBA_MAP_OP_ID
    count = check_u32(op, "count", count)
    if input == output:
        raise OpParamError(f"{op}: buffer name `{input}` is used twice. Fix: give input and output their own names.")
    return Program.wrapped(pixel_decls((input, count, "ro"), (output, count, "rw")), PIXEL_WORKGROUP_SIZE,
                           [packed_rgba_map_node(input, output, count)])


# ---------------------------------------------------------------- host-side helpers (vectors, tests)
def pack_rgba_host(r: int, g: int, b: int, a: int) -> int:
    return (r & 0xFF) | (g & 0xFF) << 8 | (b & 0xFF) << 16 | (a & 0xFF) << 24


def channels_host(pixel: int) -> tuple[int, int, int, int]:
    return tuple((pixel >> s) & 0xFF for s in SHIFTS)  # type: ignore[return-value]


__all__ = ["PIXEL_WORKGROUP_SIZE", "PACKED_RGBA_MAP_OP_ID", "check_u32", "check_f32", "pixel_count",
           "round_half_away", "saturating_cast", "f32_round_to_u32", "f32_round_to_i32", "f32_to_fixed_16_16",
           "channel", "pack_rgba", "clamp255", "wide_mul_shr_u32", "fixed_mul_16_16", "pixel_decls",
           "packed_rgba_map_node", "packed_rgba_map", "pack_rgba_host", "channels_host"]
