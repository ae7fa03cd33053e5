"""`vyre-libs::math::matmul`, `vyre-libs::math::matmul_bias` and `vyre-libs::math::matmul_bias::scalar`:
row-major wrapping u32 GEMM ``out[r,c] = sum_kk a[r*k+kk]*b[kk*n+c] (+ bias[c])``
(port of vyre-libs/src/math/linalg/matmul.rs).

One invocation per output cell: ``idx = gid.x; row = idx / n; col = idx % n``; guard
``idx < buf_len(out)``; a ``kk`` loop accumulates ``acc`` (u32, wrapping). Workgroup [256,1,1].

Example::

    >>> p = matmul("a", "b", "out", 4, 4, 4)
    >>> [(b.name, b.binding, b.count) for b in p.buffers]
    [('a', 0, 16), ('b', 1, 16), ('out', 2, 16)]
"""
from __future__ import annotations

from typing import Optional

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_case, register_op
from ...wire import pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::matmul"
OP_ID_BIAS = "vyre-libs::math::matmul_bias"
OP_ID_BIAS_SCALAR = "vyre-libs::math::matmul_bias::scalar"
# u32 results: byte-exact (no f32 window).
ULP = None


def _check(op_id: str, m: int, k: int, n: int) -> None:
    if m == 0 or k == 0 or n == 0:
        raise OpParamError(f"Fix: {op_id}: ShapeMismatch a/b/out found [{m}, {k}, {n}], expected every dim >= 1.")


def gemm_buffers(a: str, b: str, bias: Optional[str], out: str, m: int, k: int, n: int,
                 dtype: DataType = DataType.U32) -> list[BufferDecl]:
    """``a`` (m*k), ``b`` (k*n), ``bias`` (n, if any) read-only, then ``out`` (m*n): bindings 0.."""
    inputs = [(a, m * k), (b, k * n)] + ([(bias, n)] if bias is not None else [])
    decls = [ro_decl(name, binding, count, dtype) for binding, (name, count) in enumerate(inputs)]
    return decls + [out_decl(out, len(decls), m * n, dtype)]


def matmul_body(a: str, b: str, out: str, k: int, n: int, bias: Optional[str]) -> list:
    """One invocation per output: ``acc = sum_kk a[row*k + kk] * b[kk*n + col]`` (+ ``bias[col]``)."""
    idx, row, col = Expr.var("idx"), Expr.var("row"), Expr.var("col")
    kk = Expr.var("kk")
    acc = Expr.var("acc")
    value = acc if bias is None else Expr.add(acc, Expr.load(bias, col))
    return [
        Node.let_bind("idx", Expr.gid_x()),
        Node.let_bind("row", Expr.div(idx, Expr.u32(n))),
        Node.let_bind("col", Expr.rem(idx, Expr.u32(n))),
        Node.if_then(Expr.lt(idx, Expr.buf_len(out)), [
            Node.let_bind("acc", Expr.u32(0)),
            Node.loop_for("kk", Expr.u32(0), Expr.u32(k), [
                Node.assign("acc", Expr.add(acc, Expr.mul(
                    Expr.load(a, Expr.add(Expr.mul(row, Expr.u32(k)), kk)),
                    Expr.load(b, Expr.add(Expr.mul(kk, Expr.u32(n)), col))))),
            ]),
            Node.store(out, idx, value),
        ]),
    ]


def matmul(a: str, b: str, out: str, m: int, k: int, n: int) -> Program:
    _check(OP_ID, m, k, n)
    return Program.wrapped(gemm_buffers(a, b, None, out, m, k, n), (256, 1, 1),
                           [wrap_anonymous(OP_ID, matmul_body(a, b, out, k, n, None))])


def matmul_bias(a: str, b: str, bias: str, out: str, m: int, k: int, n: int) -> Program:
    _check(OP_ID_BIAS, m, k, n)
    return Program.wrapped(gemm_buffers(a, b, bias, out, m, k, n), (256, 1, 1),
                           [wrap_anonymous(OP_ID_BIAS, matmul_body(a, b, out, k, n, bias))])


def _build(m: int = 4, k: int = 4, n: int = 4) -> Program:
    return matmul("a", "b", "out", m, k, n)


def _build_bias(m: int = 2, k: int = 2, n: int = 2) -> Program:
    return matmul_bias("a", "b", "bias", "out", m, k, n)


def _build_bias_scalar(m: int = 1, k: int = 1, n: int = 1) -> Program:
    # vyre registers the 1x1x1 matmul_bias program under its own id (its Region is matmul_bias's).
    return matmul_bias("a", "b", "bias", "out", m, k, n)


def _matmul_expected() -> list:
    a, b = list(range(16)), [i + 1 for i in range(16)]
    out = [sum(a[i * 4 + kk] * b[kk * 4 + j] for kk in range(4)) & 0xFFFFFFFF for i in range(4) for j in range(4)]
    return [[pack_u32_slice(out)]]


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_u32_slice(range(16)), pack_u32_slice([i + 1 for i in range(16)])]],
    # vyre computes the expected bytes with the same wrapping loop:
    # [62,68,74,80,174,196,218,240,286,324,362,400,398,452,506,560]
    expected_output=_matmul_expected,
    category="math", ulp=ULP,
    bench=dict(m=1024, k=1024, n=1024),
)

def bias_vector_inputs() -> list:
    """vyre's 2x2x2 matmul_bias vector (also matmul_bias_tiled's; matmul_tiled's without the bias)."""
    return [[pack_u32_slice([1, 2, 3, 4]), pack_u32_slice([5, 6, 7, 8]), pack_u32_slice([10, 20])]]


def bias_vector_expected() -> list:
    return [[pack_u32_slice([29, 42, 53, 70])]]


ENTRY_BIAS = register_op(
    OP_ID_BIAS, _build_bias,
    test_inputs=bias_vector_inputs,
    expected_output=bias_vector_expected,
    category="math", ulp=ULP,
    bench=dict(m=1024, k=1024, n=1024),
)

ENTRY_BIAS_SCALAR = register_case(OP_ID_BIAS_SCALAR, _build_bias_scalar,
                                  [pack_u32_slice([2]), pack_u32_slice([3]), pack_u32_slice([5])],
                                  [pack_u32_slice([11])], category="math", ulp=ULP, bench=dict())
