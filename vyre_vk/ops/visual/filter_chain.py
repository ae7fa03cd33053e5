"""`vyre-libs::visual::filter_chain`: brightness, contrast, saturate and invert applied in place
to packed RGBA pixels (port of vyre-libs/src/visual/filter_chain/mod.rs).

The four f32 factors become 16.16 constants on the host (``(x * 65536.0).round() as u32``, the
invert factor clamped to [0, 1] first): B, C, S, I. Per pixel, on R, G, B (alpha is kept), with
``fx(a, k) = a * k >> 16`` (u32 wrapping operands, the 64-bit product's bits 16..47)::

    1. brightness  c = min(fx(c, B), 255)
    2. contrast    c = c >= 128 ? 128 + fx(c - 128, C) : max(128 - fx(128 - c, C), 0);  c = min(c, 255)
    3. saturate    luma = fx(r, 13933) + fx(g, 46871) + fx(b, 4732)      (BT.709, 16.16)
                   c = c >= luma ? luma + fx(c - luma, S) : max(luma - fx(luma - c, S), 0);  c = min(c, 255)
    4. invert      (only when I > 0) c = min(fx(c, 65536 - I) + fx(255 - c, I), 255)

Buffer: ``pixels`` rw (`count`), read and rewritten in place.

Example::

    >>> p = filter_chain("pixels", 4, 1.0, 1.0, 1.0, 0.0)
    >>> [(b.name, b.access.name) for b in p.buffers], p.entry[0].body[0].generator
    ([('pixels', 'ReadWrite')], 'vyre-primitives::visual::packed_rgba_map')
"""
from __future__ import annotations

import numpy as np

from ...ir import Expr, Node, Program, wrap_anonymous, wrap_child
from ..registry import register_case
from ..wire import pack_u32_slice
from .pixels import (PACKED_RGBA_MAP_OP_ID, PIXEL_WORKGROUP_SIZE, channel, check_f32, check_u32, clamp255,
                     f32_to_fixed_16_16, fixed_mul_16_16, pack_rgba, pixel_decls)

OP_ID = "vyre-libs::visual::filter_chain"
ULP = None  # u32 pixels: exact
#: BT.709 luma weights in 16.16 (0.2126, 0.7152, 0.0722), as vyre rounds them (sum 65536).
LUMA_R, LUMA_G, LUMA_B = 13933, 46871, 4732
RGB = "rgb"


def filter_factors(brightness: float, contrast: float, saturate: float, invert: float) -> tuple[int, int, int, int]:
    """The host-side 16.16 constants (B, C, S, I) of the four f32 factors."""
    f = {n: check_f32(OP_ID, n, x) for n, x in
         (("brightness", brightness), ("contrast", contrast), ("saturate", saturate), ("invert", invert))}
    # Rust f32::clamp: NaN stays NaN (then `as u32` gives 0).
    inv = f["invert"] if np.isnan(f["invert"]) else np.float32(min(max(f["invert"], np.float32(0)), np.float32(1)))
    return (f32_to_fixed_16_16(f["brightness"]), f32_to_fixed_16_16(f["contrast"]),
            f32_to_fixed_16_16(f["saturate"]), f32_to_fixed_16_16(inv))


def _toward(ch: str, pivot: Expr, factor: int, suffix: str) -> list[Node]:
    """``ch = ch >= pivot ? pivot + fx(ch - pivot, k) : max(pivot - fx(pivot - ch, k), 0)`` with
    vyre's select-based signed arithmetic (both deltas are computed; u32 wraps harmlessly)."""
    v, k = Expr.var, Expr.u32(factor)
    up, down = fixed_mul_16_16(Expr.sub(v(ch), pivot), k), fixed_mul_16_16(Expr.sub(pivot, v(ch)), k)
    if suffix == "sd":  # saturate: one delta let, chosen by the same comparison
        delta = f"{ch}_sd"
        return [
            Node.let_bind(delta, Expr.select(Expr.ge(v(ch), pivot), up, down)),
            Node.assign(ch, Expr.select(Expr.ge(v(ch), pivot), Expr.add(pivot, v(delta)),
                                        Expr.select(Expr.ge(pivot, v(delta)), Expr.sub(pivot, v(delta)),
                                                    Expr.u32(0)))),
        ]
    pos, neg = f"{ch}_cdp", f"{ch}_cdn"
    return [
        Node.let_bind(pos, up),
        Node.let_bind(neg, down),
        Node.assign(ch, Expr.select(Expr.ge(v(ch), pivot), Expr.add(pivot, v(pos)),
                                    Expr.select(Expr.ge(pivot, v(neg)), Expr.sub(pivot, v(neg)), Expr.u32(0)))),
    ]


def _clamp_all() -> list[Node]:
    return [Node.assign(c, clamp255(Expr.var(c))) for c in RGB]


def filter_chain(pixels: str, count: int, brightness: float, contrast: float, saturate: float,
                 invert: float) -> Program:
    """The in-place filter program over `count` pixels (1.0, 1.0, 1.0, 0.0 is the identity)."""
    count = check_u32(OP_ID, "count", count)
    br, ct, sat, inv = filter_factors(brightness, contrast, saturate, invert)
    v, u = Expr.var, Expr.u32
    body = [Node.let_bind("pixel", Expr.load(pixels, v("idx")))]
    body += [Node.let_bind(c, channel(v("pixel"), i)) for i, c in enumerate("rgba")]
    body += [Node.assign(c, fixed_mul_16_16(v(c), u(br))) for c in RGB] + _clamp_all()
    for c in RGB:
        body += _toward(c, u(128), ct, "cd")
    body += _clamp_all()
    body.append(Node.let_bind("luma", Expr.add(Expr.add(fixed_mul_16_16(v("r"), u(LUMA_R)),
                                                        fixed_mul_16_16(v("g"), u(LUMA_G))),
                                               fixed_mul_16_16(v("b"), u(LUMA_B)))))
    for c in RGB:
        body += _toward(c, v("luma"), sat, "sd")
    body += _clamp_all()
    if inv > 0:  # vyre emits the invert step only for a non-zero factor
        body += [Node.assign(c, Expr.add(fixed_mul_16_16(v(c), Expr.sub(u(65536), u(inv))),
                                         fixed_mul_16_16(Expr.sub(u(255), v(c)), u(inv)))) for c in RGB]
        body += _clamp_all()
    body += [Node.let_bind("out", pack_rgba(v("r"), v("g"), v("b"), v("a"))), Node.store(pixels, v("idx"), v("out"))]
    child = wrap_child(PACKED_RGBA_MAP_OP_ID, OP_ID, [
        Node.let_bind("idx", Expr.gid_x()),
        Node.if_then(Expr.lt(v("idx"), u(count)), body),
    ])
    return Program.wrapped(pixel_decls((pixels, count, "rw")), PIXEL_WORKGROUP_SIZE, [wrap_anonymous(OP_ID, [child])])


def _build(count: int = 4, brightness: float = 1.0, contrast: float = 1.0, saturate: float = 1.0,
           invert: float = 0.0) -> Program:
    return filter_chain("pixels", count, brightness, contrast, saturate, invert)


# vyre's vector: the identity factors leave the pixels as they are.
_PIXELS = pack_u32_slice([0xFF804020, 0xFFFF0000, 0xFF00FF00, 0xFF0000FF])
ENTRY = register_case(OP_ID, _build, [_PIXELS], [_PIXELS], category="visual", ulp=ULP,
                      bench=dict(count=1920 * 1080, brightness=1.1, contrast=0.9, saturate=0.75, invert=0.25))
