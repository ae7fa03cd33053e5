"""`vyre-libs::visual::upsample`: 2x nearest-neighbour upsample of packed RGBA pixels (port of
vyre-libs/src/visual/upsample/mod.rs, ``upsample_2x``).

`width` x `height` are the full OUTPUT size (vyre requires both even); ``input`` is
``(width/2) x (height/2)`` and ``output[oy*width + ox] = input[(oy/2)*(width/2) + ox/2]``.
With an odd width the last column would read one pixel past its row (the next row's first
pixel, or 0 past the buffer's end): vyre's documented precondition, kept as is.
Buffers: ``input`` ro ((width/2)*(height/2)), ``output`` rw (width*height).

Example::

    >>> p = upsample_2x("input", "output", 4, 4)
    >>> [(b.name, b.count) for b in p.buffers]
    [('input', 4), ('output', 16)]
"""
from __future__ import annotations

from ...ir import Expr, Node, Program, wrap_anonymous
from ..math.elementwise import check_unique_names
from ..registry import register_case
from ..wire import pack_u32_slice
from .pixels import PIXEL_WORKGROUP_SIZE, check_u32, pixel_count, pixel_decls

OP_ID = "vyre-libs::visual::upsample"
ULP = None  # u32 pixels: exact


def upsample_2x(input: str, output: str, width: int, height: int) -> Program:
    """Double a ``(width/2) x (height/2)`` image to ``width x height`` (nearest neighbour)."""
    check_unique_names(OP_ID, input, output)
    width, height = check_u32(OP_ID, "width", width), check_u32(OP_ID, "height", height)
    in_w, in_h = width // 2, height // 2
    input_count, output_count = pixel_count(in_w, in_h), pixel_count(width, height)
    v, u = Expr.var, Expr.u32
    body = [
        Node.let_bind("ox", Expr.rem(v("idx"), u(max(width, 1)))),
        Node.let_bind("oy", Expr.div(v("idx"), u(max(width, 1)))),
        Node.let_bind("ix", Expr.div(v("ox"), u(2))),
        Node.let_bind("iy", Expr.div(v("oy"), u(2))),
        Node.let_bind("pixel", Expr.load(input, Expr.add(Expr.mul(v("iy"), u(max(in_w, 1))), v("ix")))),
        Node.store(output, v("idx"), v("pixel")),
    ]
    entry = [Node.let_bind("idx", Expr.gid_x()), Node.if_then(Expr.lt(v("idx"), u(output_count)), body)]
    return Program.wrapped(pixel_decls((input, input_count, "ro"), (output, output_count, "rw")),
                           PIXEL_WORKGROUP_SIZE, [wrap_anonymous(OP_ID, entry)])


def _build(width: int = 4, height: int = 4) -> Program:
    return upsample_2x("input", "output", width, height)


# vyre's vector: 2x2 all-white -> 4x4 all-white.
ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0xFFFFFFFF] * 4), bytes(64)],
                      [pack_u32_slice([0xFFFFFFFF] * 16)], category="visual", ulp=ULP,
                      bench=dict(width=1920, height=1080))
