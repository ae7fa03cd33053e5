"""`vyre-libs::visual::composite`: Porter-Duff "over" of packed RGBA pixels (port of
vyre-libs/src/visual/composite/mod.rs, ``alpha_over``).

Per pixel and channel c (alpha included), with ``inv = 255 - fg_a``::

    out_c = min(fg_c + ((bg_c * inv + 128) * 257 >> 16), 255)

``(x + 128) * 257 >> 16`` is the usual integer stand-in for round(x / 255); for every
x = bg_c * inv in [0, 255^2] it equals round-half-up(x / 255) exactly (checked exhaustively in
tests/ops/visual/test_composite.py). vyre takes the product through ``wide_mul_shr_u32`` (mulhi),
although it cannot exceed 32 bits here. Buffers: ``fg``, ``bg`` ro, ``out`` rw (`count` each).

Example::

    >>> p = alpha_over("fg", "bg", "out", 2)
    >>> [(b.name, b.binding) for b in p.buffers], p.entry[0].body[0].generator
    ([('fg', 0), ('bg', 1), ('out', 2)], 'vyre-primitives::visual::packed_rgba_map')
"""
from __future__ import annotations

from ...ir import Expr, Node, Program, wrap_anonymous, wrap_child
from ..math.elementwise import check_unique_names
from ..registry import register_case
from ..wire import pack_u32_slice
from .pixels import (PACKED_RGBA_MAP_OP_ID, PIXEL_WORKGROUP_SIZE, channel, check_u32, clamp255, pack_rgba,
                     pixel_decls, wide_mul_shr_u32)

OP_ID = "vyre-libs::visual::composite"
ULP = None  # u32 pixels: exact


def alpha_over(fg: str, bg: str, output: str, count: int) -> Program:
    """``output[i] = fg[i] over bg[i]`` for `count` pixels."""
    check_unique_names(OP_ID, fg, bg, output)
    count = check_u32(OP_ID, "count", count)
    v = Expr.var
    body = [Node.let_bind("fg_px", Expr.load(fg, v("idx"))), Node.let_bind("bg_px", Expr.load(bg, v("idx")))]
    for src in ("fg", "bg"):
        body += [Node.let_bind(f"{src}_{c}", channel(v(f"{src}_px"), i)) for i, c in enumerate("rgba")]
    body.append(Node.let_bind("inv_a", Expr.sub(Expr.u32(255), v("fg_a"))))
    for c in "rgba":
        scaled = Expr.add(Expr.mul(v(f"bg_{c}"), v("inv_a")), Expr.u32(128))
        body.append(Node.let_bind(f"out_{c}", Expr.add(v(f"fg_{c}"), wide_mul_shr_u32(scaled, Expr.u32(257), 16))))
    body += [Node.let_bind(f"c{c}", clamp255(v(f"out_{c}"))) for c in "rgba"]
    body += [Node.let_bind("packed", pack_rgba(*(v(f"c{c}") for c in "rgba"))),
             Node.store(output, v("idx"), v("packed"))]
    child = wrap_child(PACKED_RGBA_MAP_OP_ID, OP_ID, [
        Node.let_bind("idx", Expr.gid_x()),
        Node.if_then(Expr.lt(v("idx"), Expr.u32(count)), body),
    ])
    return Program.wrapped(pixel_decls((fg, count, "ro"), (bg, count, "ro"), (output, count, "rw")),
                           PIXEL_WORKGROUP_SIZE, [wrap_anonymous(OP_ID, [child])])


def _build(count: int = 2) -> Program:
    return alpha_over("fg", "bg", "out", count)


# vyre's vector: half-transparent red over opaque blue -> 0xFF7F00FF; opaque green over white -> itself.
ENTRY = register_case(OP_ID, _build,
                      [pack_u32_slice([0x800000FF, 0xFF00FF00]), pack_u32_slice([0xFFFF0000, 0xFFFFFFFF]), bytes(8)],
                      [pack_u32_slice([0xFF7F00FF, 0xFF00FF00])], category="visual", ulp=ULP,
                      bench=dict(count=1920 * 1080))
