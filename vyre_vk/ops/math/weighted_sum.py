"""`vyre-libs::math::weighted_sum_fma_f32`: ``output[0] = sum_i weights[i] * values[i]`` on f32,
accumulated in index order as ``acc = fma(weights[i], values[i], acc)`` (one rounding per term)
from ``acc = 0`` (port of vyre-libs/src/math/weighted_sum.rs).

One invocation's work: workgroup [1,1,1], no guard (every invocation runs the loop and stores;
the inferred grid is one invocation, the output's count). ``weights``, ``values`` ro (bindings
0, 1, count n), ``output`` output (2, count 1). ``n == 0`` is rejected.

Example::

    >>> weighted_sum_fma_f32("weights", "values", "output", 4).workgroup_size
    (1, 1, 1)
"""
from __future__ import annotations

from ...ir import Expr, Node, Program, wrap_anonymous
from ..builder import out_decl, ro_decl
from ..registry import OpParamError, register_op
from ..wire import pack_f32_slice

OP_ID = "vyre-libs::math::weighted_sum_fma_f32"
# 4 ULP: elementary f32 ops only (vyre's program budget); Fma is one rounding on both sides.
ULP = 4


def weighted_sum_fma_f32(weights: str, values: str, output: str, n: int) -> Program:
    if n == 0:
        raise OpParamError("Fix: weighted_sum_fma_f32 n=0 is invalid: empty reduction; pass n >= 1.")
    i = Expr.var("i")
    body = [
        Node.let_bind("acc", Expr.f32(0.0)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(n), [
            Node.assign("acc", Expr.fma(Expr.load(weights, i), Expr.load(values, i), Expr.var("acc")))]),
        Node.store(output, Expr.u32(0), Expr.var("acc")),
    ]
    return Program.wrapped([ro_decl(weights, 0, n), ro_decl(values, 1, n), out_decl(output, 2, 1)], (1, 1, 1),
                           [wrap_anonymous(OP_ID, body)])


def _build(n: int = 4) -> Program:
    return weighted_sum_fma_f32("weights", "values", "output", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([0.5, 0.25, 0.125, 0.125]), pack_f32_slice([1.0, 2.0, 4.0, 8.0])]],
    # 0.5*1 + 0.25*2 + 0.125*4 + 0.125*8 = 2.5
    expected_output=lambda: [[pack_f32_slice([2.5])]],
    category="math", ulp=ULP, bench=dict(n=1 << 16),
)
