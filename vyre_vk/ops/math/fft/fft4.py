"""`vyre-libs::math::fft::fft4_complex`: 4-point complex DFT, interleaved re/im f32
(port of vyre-libs/src/math/fft/fft4.rs), straight-line, workgroup [1,1,1], no guard:
``X0 = (x0+x1)+(x2+x3)``; ``X1 = (((x0r+x1i)-x2r)-x3i, ((x0i-x1r)-x2i)+x3r)``;
``X2 = (x0-x1)+(x2-x3)``; ``X3 = (((x0r-x1i)-x2r)+x3i, ((x0i+x1r)-x2i)-x3r)``.

Example::

    >>> [(b.name, b.count) for b in fft4_complex("input", "output").buffers]
    [('input', 8), ('output', 8)]
"""
from __future__ import annotations

from ....ir import Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_case
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::math::fft::fft4_complex"
# 4 ULP: elementary f32 ops only (vyre's program budget).
ULP = 4


def fft4_complex(input: str, output: str) -> Program:
    v, add, sub = Expr.var, Expr.add, Expr.sub
    names = ["x0r", "x0i", "x1r", "x1i", "x2r", "x2i", "x3r", "x3i"]
    body = [Node.let_bind(nm, Expr.load(input, Expr.u32(k))) for k, nm in enumerate(names)]
    values = [
        add(add(v("x0r"), v("x1r")), add(v("x2r"), v("x3r"))),
        add(add(v("x0i"), v("x1i")), add(v("x2i"), v("x3i"))),
        sub(sub(add(v("x0r"), v("x1i")), v("x2r")), v("x3i")),
        add(sub(sub(v("x0i"), v("x1r")), v("x2i")), v("x3r")),
        add(sub(v("x0r"), v("x1r")), sub(v("x2r"), v("x3r"))),
        add(sub(v("x0i"), v("x1i")), sub(v("x2i"), v("x3i"))),
        add(sub(sub(v("x0r"), v("x1i")), v("x2r")), v("x3i")),
        sub(sub(add(v("x0i"), v("x1r")), v("x2i")), v("x3r")),
    ]
    body += [Node.store(output, Expr.u32(k), val) for k, val in enumerate(values)]
    return Program.wrapped(
        [ro_decl(input, 0, 8), out_decl(output, 1, 8)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build() -> Program:
    return fft4_complex("input", "output")


ENTRY = register_case(OP_ID, _build, [pack_f32_slice([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])],
                      [pack_f32_slice([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])], category="math", ulp=ULP,
                      bench=dict())
