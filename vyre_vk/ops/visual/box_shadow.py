"""`vyre-libs::visual::box_shadow`: a box shadow with linear distance falloff, rendered into
packed RGBA pixels (port of vyre-libs/src/visual/shadow/mod.rs, ``box_shadow``).

Host side: ``cx = rect_x + rect_w/2``, ``cy = rect_y + rect_h/2``, ``hw = rect_w/2``,
``hh = rect_h/2``, ``blur = max(round(blur_radius) as u32, 1)``. Per pixel (px, py)::

    sx = max(|px - cx| - hw, 0),  sy = max(|py - cy| - hh, 0),  sd = max(sx, sy)   (Chebyshev)
    falloff = 256 if |px - cx| <= hw and |py - cy| <= hh
              else (0 if sd*256 >= blur*256 else 256 - sd*256 / blur)             (u32)
    pixel = colour RGB | min(colour_A * falloff >> 8, 255) << 24

The "inside" test is inclusive, so the full-alpha box spans ``cx-hw ..= cx+hw``: rect_w + 1
columns for an even rect_w (one more than the CSS box on the right and bottom), as vyre's
registered vector shows. Buffer: ``output`` rw (img_w*img_h).

Example::

    >>> p = box_shadow("out", 8, 8, 2, 2, 4, 4, 2.0, 0x80000000)
    >>> [(b.name, b.count) for b in p.buffers], shadow_blur(2.6)
    ([('out', 64)], 3)
"""
from __future__ import annotations

from ...ir import Expr, Node, Program, wrap_anonymous
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .pixels import (PIXEL_WORKGROUP_SIZE, U32_MAX, channels_host, check_f32, check_u32, clamp255,
                     f32_round_to_u32, pack_rgba, pixel_count, pixel_decls, wide_mul_shr_u32)

OP_ID = "vyre-libs::visual::box_shadow"
ULP = None  # u32 pixels: exact


def shadow_blur(blur_radius: float) -> int:
    """``(blur_radius.round() as u32).max(1)``: the falloff width in whole pixels."""
    return max(f32_round_to_u32(check_f32(OP_ID, "blur_radius", blur_radius)), 1)


def box_shadow(output: str, img_w: int, img_h: int, rect_x: int, rect_y: int, rect_w: int, rect_h: int,
               blur_radius: float, color_rgba: int) -> Program:
    """The shadow of the rect (rect_x, rect_y, rect_w, rect_h) in an ``img_w x img_h`` image."""
    img_w, img_h, rect_x, rect_y, rect_w, rect_h, color_rgba = (
        check_u32(OP_ID, n, x) for n, x in (("img_w", img_w), ("img_h", img_h), ("rect_x", rect_x),
                                            ("rect_y", rect_y), ("rect_w", rect_w), ("rect_h", rect_h),
                                            ("color_rgba", color_rgba)))
    cx, cy, hw, hh = rect_x + rect_w // 2, rect_y + rect_h // 2, rect_w // 2, rect_h // 2
    if max(cx, cy) > U32_MAX:  # Rust's u32 add would overflow (a panic in debug builds)
        raise OpParamError(f"{OP_ID}: rect centre ({cx}, {cy}) overflows u32. Fix: keep rect_x + rect_w/2 and "
                           "rect_y + rect_h/2 below 2^32.")
    blur = shadow_blur(blur_radius)
    s_r, s_g, s_b, s_a = channels_host(color_rgba)
    count = pixel_count(img_w, img_h)
    v, u = Expr.var, Expr.u32
    sd256 = Expr.mul(v("sd"), u(256))
    body = [
        Node.let_bind("px", Expr.rem(v("idx"), u(max(img_w, 1)))),
        Node.let_bind("py", Expr.div(v("idx"), u(max(img_w, 1)))),
        Node.let_bind("dx_abs", Expr.abs_diff(v("px"), u(cx))),
        Node.let_bind("dy_abs", Expr.abs_diff(v("py"), u(cy))),
        Node.let_bind("sd_x", Expr.select(Expr.gt(v("dx_abs"), u(hw)), Expr.sub(v("dx_abs"), u(hw)), u(0))),
        Node.let_bind("sd_y", Expr.select(Expr.gt(v("dy_abs"), u(hh)), Expr.sub(v("dy_abs"), u(hh)), u(0))),
        Node.let_bind("sd", Expr.select(Expr.gt(v("sd_x"), v("sd_y")), v("sd_x"), v("sd_y"))),
        # vyre compares sd*256 >= blur*256 (both u32 products, as written upstream)
        Node.let_bind("falloff", Expr.select(Expr.ge(sd256, Expr.mul(u(blur), u(256))), u(0),
                                             Expr.sub(u(256), Expr.div(sd256, u(blur))))),
        Node.let_bind("inside", Expr.and_(Expr.le(v("dx_abs"), u(hw)), Expr.le(v("dy_abs"), u(hh)))),
        Node.let_bind("final_falloff", Expr.select(v("inside"), u(256), v("falloff"))),
        Node.let_bind("final_a_unclamped", wide_mul_shr_u32(u(s_a), v("final_falloff"), 8)),
        Node.let_bind("final_a", clamp255(v("final_a_unclamped"))),
        Node.let_bind("out_px", pack_rgba(u(s_r), u(s_g), u(s_b), v("final_a"))),
        Node.let_bind("oidx", Expr.add(Expr.mul(v("py"), u(img_w)), v("px"))),
        Node.store(output, v("oidx"), v("out_px")),
    ]
    entry = [Node.let_bind("idx", Expr.gid_x()), Node.if_then(Expr.lt(v("idx"), u(count)), body)]
    return Program.wrapped(pixel_decls((output, count, "rw")), PIXEL_WORKGROUP_SIZE, [wrap_anonymous(OP_ID, entry)])


def _build(img_w: int = 8, img_h: int = 8, rect_x: int = 2, rect_y: int = 2, rect_w: int = 4, rect_h: int = 4,
           blur_radius: float = 2.0, color_rgba: int = 0x80000000) -> Program:
    return box_shadow("out", img_w, img_h, rect_x, rect_y, rect_w, rect_h, blur_radius, color_rgba)


# vyre's vector (bytes listed upstream, computed by its reference interpreter): alpha 0x80 on the
# 5x5 box (2..=6, 2..=6), 0x40 one pixel out, 0 beyond; RGB 0.
_ALPHA = [[0] * 8, [0] + [0x40] * 7] + [[0, 0x40] + [0x80] * 5 + [0x40] for _ in range(5)] + [[0] + [0x40] * 7]
ENTRY = register_case(OP_ID, _build, [bytes(256)], [pack_u32_slice([a << 24 for row in _ALPHA for a in row])],
                      category="visual", ulp=ULP,
                      bench=dict(img_w=1920, img_h=1080, rect_x=480, rect_y=270, rect_w=960, rect_h=540,
                                 blur_radius=24.0))
