"""`vyre-libs::visual::downsample`: 2x box-filter downsample of packed RGBA pixels (port of
vyre-libs/src/visual/downsample/mod.rs, ``downsample_2x``).

``output`` is ``(width/2) x (height/2)``; each output pixel (ox, oy) averages the 2x2 block at
(2ox, 2oy) of ``input`` per channel, rounding half up: ``(c00 + c10 + c01 + c11 + 2) >> 2``.
vyre documents even sizes; an odd last row or column is simply never read (a crop).
Buffers: ``input`` ro (width*height), ``output`` rw ((width/2)*(height/2)).

Example::

    >>> p = downsample_2x("input", "output", 4, 4)
    >>> [(b.name, b.count) for b in p.buffers]
    [('input', 16), ('output', 4)]
"""
from __future__ import annotations

from ...ir import Expr, Node, Program, wrap_anonymous
from ..math.elementwise import check_unique_names
from ..registry import register_case
from ..wire import pack_u32_slice
from .pixels import PIXEL_WORKGROUP_SIZE, channel, check_u32, pack_rgba, pixel_count, pixel_decls

OP_ID = "vyre-libs::visual::downsample"
ULP = None  # u32 pixels: exact


def downsample_2x(input: str, output: str, width: int, height: int) -> Program:
    """Halve a ``width x height`` image (both should be even) by 2x2 averaging."""
    check_unique_names(OP_ID, input, output)
    width, height = check_u32(OP_ID, "width", width), check_u32(OP_ID, "height", height)
    out_w, out_h = width // 2, height // 2
    input_count, output_count = pixel_count(width, height), pixel_count(out_w, out_h)
    v, u = Expr.var, Expr.u32
    row0 = Expr.mul(v("sy"), u(width))
    row1 = Expr.mul(Expr.add(v("sy"), u(1)), u(width))
    col1 = Expr.add(v("sx"), u(1))
    body = [
        Node.let_bind("ox", Expr.rem(v("idx"), u(max(out_w, 1)))),
        Node.let_bind("oy", Expr.div(v("idx"), u(max(out_w, 1)))),
        Node.let_bind("sx", Expr.mul(v("ox"), u(2))),
        Node.let_bind("sy", Expr.mul(v("oy"), u(2))),
        Node.let_bind("p00", Expr.load(input, Expr.add(row0, v("sx")))),
        Node.let_bind("p10", Expr.load(input, Expr.add(row0, col1))),
        Node.let_bind("p01", Expr.load(input, Expr.add(row1, v("sx")))),
        Node.let_bind("p11", Expr.load(input, Expr.add(row1, col1))),
    ]
    for i, c in enumerate("rgba"):
        ch = [channel(v(p), i) for p in ("p00", "p10", "p01", "p11")]
        total = Expr.add(Expr.add(ch[0], ch[1]), Expr.add(ch[2], ch[3]))
        body.append(Node.let_bind(c, Expr.shr(Expr.add(total, u(2)), u(2))))
    body += [
        Node.let_bind("packed", pack_rgba(v("r"), v("g"), v("b"), v("a"))),
        Node.let_bind("oidx", Expr.add(Expr.mul(v("oy"), u(out_w)), v("ox"))),
        Node.store(output, v("oidx"), v("packed")),
    ]
    entry = [Node.let_bind("idx", Expr.gid_x()), Node.if_then(Expr.lt(v("idx"), u(output_count)), body)]
    return Program.wrapped(pixel_decls((input, input_count, "ro"), (output, output_count, "rw")),
                           PIXEL_WORKGROUP_SIZE, [wrap_anonymous(OP_ID, entry)])


def _build(width: int = 4, height: int = 4) -> Program:
    return downsample_2x("input", "output", width, height)


# vyre's vector: 4x4 all-white -> 2x2 all-white.
ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0xFFFFFFFF] * 16), bytes(16)],
                      [pack_u32_slice([0xFFFFFFFF] * 4)], category="visual", ulp=ULP,
                      bench=dict(width=1920, height=1080))
