"""`vyre-libs::math::linalg::matmul_strassen_2x2`: ``C = A @ B`` for 2x2 row-major f32 matrices
with Strassen's 7 products (port of vyre-libs/src/math/linalg/matmul_strassen.rs).

Straight-line: ``m1=(a00+a11)(b00+b11), m2=(a10+a11)b00, m3=a00(b01-b11), m4=a11(b10-b00),
m5=(a00+a01)b11, m6=(a10-a00)(b00+b01), m7=(a01-a11)(b10+b11)``;
``c00=((m1+m4)-m5)+m7, c01=m3+m5, c10=m2+m4, c11=((m1-m2)+m3)+m6``. Workgroup [1,1,1], no guard.

Example::

    >>> [b.name for b in matmul_strassen_2x2("a", "b", "c").buffers]
    ['a', 'b', 'c']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::math::linalg::matmul_strassen_2x2"
# 4 ULP: elementary f32 ops only (vyre's program budget; a backend may contract a*b+c).
ULP = 4


def matmul_strassen_2x2(a: str, b: str, c: str) -> Program:
    v = Expr.var
    add, sub, mul = Expr.add, Expr.sub, Expr.mul
    body = [Node.let_bind(name, Expr.load(buf, Expr.u32(i)))
            for buf, names in ((a, ("a00", "a01", "a10", "a11")), (b, ("b00", "b01", "b10", "b11")))
            for i, name in enumerate(names)]
    body += [
        Node.let_bind("m1", mul(add(v("a00"), v("a11")), add(v("b00"), v("b11")))),
        Node.let_bind("m2", mul(add(v("a10"), v("a11")), v("b00"))),
        Node.let_bind("m3", mul(v("a00"), sub(v("b01"), v("b11")))),
        Node.let_bind("m4", mul(v("a11"), sub(v("b10"), v("b00")))),
        Node.let_bind("m5", mul(add(v("a00"), v("a01")), v("b11"))),
        Node.let_bind("m6", mul(sub(v("a10"), v("a00")), add(v("b00"), v("b01")))),
        Node.let_bind("m7", mul(sub(v("a01"), v("a11")), add(v("b10"), v("b11")))),
        Node.store(c, Expr.u32(0), add(sub(add(v("m1"), v("m4")), v("m5")), v("m7"))),
        Node.store(c, Expr.u32(1), add(v("m3"), v("m5"))),
        Node.store(c, Expr.u32(2), add(v("m2"), v("m4"))),
        Node.store(c, Expr.u32(3), add(add(sub(v("m1"), v("m2")), v("m3")), v("m6"))),
    ]
    return Program.wrapped(
        [ro_decl(a, 0, 4), ro_decl(b, 1, 4), out_decl(c, 2, 4)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build() -> Program:
    return matmul_strassen_2x2("a", "b", "c")


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]), pack_f32_slice([5.0, 6.0, 7.0, 8.0])]],
    expected_output=lambda: [[pack_f32_slice([19.0, 22.0, 43.0, 50.0])]],
    category="math", ulp=ULP,
    bench=dict(),
)
