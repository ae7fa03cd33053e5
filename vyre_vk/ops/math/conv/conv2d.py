"""`vyre-libs::math::conv::conv2d_3x3_direct`: zero-padded 3x3 convolution (cross-correlation),
unit stride, f32 (port of vyre-libs/src/math/conv/conv2d.rs):
``out[y,x] = sum_{ky,kx} in[y+ky-1, x+kx-1] * kernel[ky*3+kx]``.

One invocation per pixel (``flat = gid.x < h*w; y = flat / w; x = flat % w``); ``acc = 0``
then, in a Block, 9 taps in row-major order ``acc = acc + select(in_bounds, in[idx]*k[t], 0)``.
Workgroup [64,1,1].

Example::

    >>> [(b.name, b.count) for b in conv2d_3x3_direct("input", "kernel", "output", 4, 4).buffers]
    [('input', 16), ('kernel', 9), ('output', 16)]
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from .taps import pixel_coords, taps
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::conv::conv2d_3x3_direct"
# 4 ULP: elementary f32 ops only (vyre's program budget; a backend may contract a*b+c).
ULP = 4


def conv2d_3x3_direct(input: str, kernel: str, output: str, h: int, w: int) -> Program:
    if h == 0 or w == 0:
        raise OpParamError("Fix: conv2d_3x3_direct requires non-zero height and width.")
    elements = h * w
    acc = Expr.var("acc")
    tap_nodes = [Node.assign("acc", Expr.add(acc, Expr.select(
        ok, Expr.mul(Expr.load(input, idx), Expr.load(kernel, Expr.u32(t))), Expr.f32(0.0))))
        for t, ok, idx in taps(h, w)]
    buffers = [ro_decl(input, 0, elements), ro_decl(kernel, 1, 9), out_decl(output, 2, elements)]
    return elementwise_program(OP_ID, buffers, elements, [
        *pixel_coords(w), Node.let_bind("acc", Expr.f32(0.0)), Node.block(tap_nodes),
        Node.store(output, Expr.var("flat"), acc)], index="flat")


def _build(h: int = 4, w: int = 4) -> Program:
    return conv2d_3x3_direct("input", "kernel", "output", h, w)


ENTRY = register_op(
    OP_ID, _build,
    # 4x4 identity, 3x3 box kernel
    test_inputs=lambda: [[pack_f32_slice([1.0 if r == c else 0.0 for r in range(4) for c in range(4)]),
                          pack_f32_slice([1.0] * 9)]],
    expected_output=lambda: [[pack_f32_slice([2.0, 2.0, 1.0, 0.0, 2.0, 3.0, 2.0, 1.0,
                                              1.0, 2.0, 3.0, 2.0, 0.0, 1.0, 2.0, 2.0])]],
    category="math", ulp=ULP,
    bench=dict(h=2048, w=2048),
)
