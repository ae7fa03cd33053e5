"""`vyre-libs::optim::newton_schulz_5step`: **element-wise** quintic
``x <- 3.4445x - 4.7750x^3 + 2.0315x^5`` applied 5 times per cell (port of
vyre-libs/src/nn/optim/newton_schulz.rs = ``tag_program`` over vyre-primitives
``newton_schulz_poly5_f32``; no matrix products despite the upstream doc comment).

Per step: ``x2 = x*x; x3 = x2*x; x5 = x3*x2; next = (3.4445x + -4.775x3) + 2.0315x5``.
Entry: ``Region(op_id){ Region("vyre-primitives::math::newton_schulz_poly5_f32",
source=op_id){ ... } }``. Workgroup [64,1,1], guard ``i < rows*cols``.

Example::

    >>> p = newton_schulz_5step("mat", "output", 2, 2)
    >>> p.entry[0].body[0].generator
    'vyre-primitives::math::newton_schulz_poly5_f32'
"""
from __future__ import annotations

from ....ir import Expr, Node, Program, wrap_anonymous, wrap_child
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::optim::newton_schulz_5step"
POLY5_F32_OP_ID = "vyre-primitives::math::newton_schulz_poly5_f32"
# 64 ULP: vyre's explicit window for this id (program budget 4; effective = max).
ULP = 64


def newton_schulz_poly5_body(mat: str, output: str, total: int) -> list:
    i = Expr.var("i")
    it = [Node.let_bind("x0", Expr.load(mat, i))]
    for step in range(5):
        x = Expr.var(f"x{step}")
        x2, x3, x5 = f"x{step}_2", f"x{step}_3", f"x{step}_5"
        it += [
            Node.let_bind(x2, Expr.mul(x, x)),
            Node.let_bind(x3, Expr.mul(Expr.var(x2), x)),
            Node.let_bind(x5, Expr.mul(Expr.var(x3), Expr.var(x2))),
            Node.let_bind(f"x{step + 1}", Expr.add(
                Expr.add(Expr.mul(Expr.f32(3.4445), x), Expr.mul(Expr.f32(-4.7750), Expr.var(x3))),
                Expr.mul(Expr.f32(2.0315), Expr.var(x5)))),
        ]
    it.append(Node.store(output, i, Expr.var("x5")))
    return [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(total)), it)]


def newton_schulz_5step(mat: str, output: str, rows: int, cols: int) -> Program:
    total = rows * cols
    return Program.wrapped(
        [ro_decl(mat, 0, total), out_decl(output, 1, total)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, [wrap_child(POLY5_F32_OP_ID, OP_ID, newton_schulz_poly5_body(mat, output, total))])],
    )


def _build(rows: int = 2, cols: int = 2) -> Program:
    return newton_schulz_5step("mat", "output", rows, cols)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.5, 0.0, 0.0, 0.5])]],
    # vyre's listed bytes: [0.76543725 (0x3f43f3b2), 0, 0, 0.76543725]
    expected_output=lambda: [[bytes([178, 243, 67, 63, 0, 0, 0, 0, 0, 0, 0, 0, 178, 243, 67, 63])]],
    category="nn", ulp=ULP,
    bench=dict(rows=4096, cols=4096),
)
