"""`vyre-libs::math::conv::im2col_3x3`: ``[h, w]`` f32 image -> ``[h*w, 9]`` zero-padded 3x3 patches
(port of vyre-libs/src/math/conv/im2col.rs): ``out[flat*9 + ky*3+kx] = select(in_bounds,
in[(y+ky-1)*w + x+kx-1], 0)``; one invocation per pixel (guard ``flat < h*w``; the output, and so
the dispatch, has ``9*h*w`` cells), 9 stores in a Block. Workgroup [64,1,1].

Example::

    >>> [(b.name, b.count) for b in im2col_3x3("input", "output", 4, 4).buffers]
    [('input', 16), ('output', 144)]
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from .taps import pixel_coords, taps

OP_ID = "vyre-libs::math::conv::im2col_3x3"
# 4 ULP: no f32 arithmetic at all (copies and zeros: exact); 4 is vyre's program budget.
ULP = 4


def im2col_3x3(input: str, output: str, h: int, w: int) -> Program:
    pixels = h * w
    writes = [Node.store(output, Expr.add(Expr.mul(Expr.var("flat"), Expr.u32(9)), Expr.u32(t)),
                         Expr.select(ok, Expr.load(input, idx), Expr.f32(0.0)))
              for t, ok, idx in taps(h, w)]
    return elementwise_program(OP_ID, [ro_decl(input, 0, pixels), out_decl(output, 1, pixels * 9)], pixels,
                               [*pixel_coords(w), Node.block(writes)], index="flat")


def _build(h: int = 4, w: int = 4) -> Program:
    return im2col_3x3("input", "output", h, w)


def _fixture_input() -> list:
    return [float(i) + 1.0 for i in range(16)]


def _naive_im2col(img: list, h: int, w: int) -> list:
    """vyre computes the expected bytes with this loop (naive_im2col_3x3 in im2col.rs)."""
    out = [0.0] * (h * w * 9)
    for y in range(h):
        for x in range(w):
            for ky in range(3):
                for kx in range(3):
                    ny, nx = y + ky - 1, x + kx - 1
                    if 0 <= ny < h and 0 <= nx < w:
                        out[(y * w + x) * 9 + ky * 3 + kx] = img[ny * w + nx]
    return out


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice(_fixture_input())]],
    expected_output=lambda: [[pack_f32_slice(_naive_im2col(_fixture_input(), 4, 4))]],
    category="math", ulp=ULP,
    bench=dict(h=2048, w=2048),
)
