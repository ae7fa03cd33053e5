"""`vyre-libs::quant::gptq_round` and `vyre-libs::quant::gptq_sdclip` (port of
vyre-libs/src/nn/quant/gptq.rs), element-wise f32, workgroup [64,1,1], guard ``i < n``.

- round: ``x = finite_or(input, 0); s = positive_finite_or_min(scale)``;
  ``clamp(select(x == s, 1, x / s), 0, max_val)`` (no rounding to an integer, as upstream).
- sdclip: ``clamp(finite_or(input, 0), -k, k)``.
``clamp(v, lo, hi)`` = ``w = finite_or(v, lo); w = select(w < lo, lo, w); select(w > hi, hi, w)``.

Example::

    >>> [b.name for b in gptq_round("input", "scale", "output", 4, 63.0).buffers]
    ['input', 'scale', 'output']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...primitives import F32_MIN_POSITIVE, finite_or
from ...registry import register_op
from ...wire import pack_f32_slice

ROUND_OP_ID = "vyre-libs::quant::gptq_round"
SDCLIP_OP_ID = "vyre-libs::quant::gptq_sdclip"
# 4 ULP: elementary f32 ops only (vyre's program budget); one division, selects are exact.
ULP = 4


def positive_finite_or_min(value: Expr) -> Expr:
    """vyre-primitives f32_stability: non-positive or non-finite scales -> f32::MIN_POSITIVE."""
    return Expr.select(Expr.and_(Expr.is_finite(value), Expr.gt(value, Expr.f32(F32_MIN_POSITIVE))),
                       value, Expr.f32(F32_MIN_POSITIVE))


def clamp_f32(value: Expr, lo: float, hi: float) -> Expr:
    finite = finite_or(value, Expr.f32(lo))
    lower = Expr.select(Expr.lt(finite, Expr.f32(lo)), Expr.f32(lo), finite)
    return Expr.select(Expr.gt(lower, Expr.f32(hi)), Expr.f32(hi), lower)


def gptq_round(input: str, scale: str, output: str, n: int, max_val: float) -> Program:
    i = Expr.var("i")
    x = finite_or(Expr.load(input, i), Expr.f32(0.0))
    s = positive_finite_or_min(Expr.load(scale, i))
    divided = Expr.select(Expr.eq(x, s), Expr.f32(1.0), Expr.div(x, s))
    return elementwise_program(ROUND_OP_ID, [ro_decl(input, 0, n), ro_decl(scale, 1, n), out_decl(output, 2, n)], n,
                               [Node.store(output, i, clamp_f32(divided, 0.0, max_val))])


def gptq_sdclip(input: str, output: str, n: int, k: float) -> Program:
    i = Expr.var("i")
    x = finite_or(Expr.load(input, i), Expr.f32(0.0))
    return elementwise_program(SDCLIP_OP_ID, [ro_decl(input, 0, n), out_decl(output, 1, n)], n,
                               [Node.store(output, i, clamp_f32(x, -k, k))])


def _build_round(n: int = 4, max_val: float = 63.0) -> Program:
    return gptq_round("input", "scale", "output", n, max_val)


def _build_sdclip(n: int = 4, k: float = 30.0) -> Program:
    return gptq_sdclip("input", "output", n, k)


ENTRY_ROUND = register_op(
    ROUND_OP_ID, _build_round,
    test_inputs=lambda: [[pack_f32_slice([100.0, 200.0, 50.0, 10.0]), pack_f32_slice([2.0, 3.0, 1.0, 5.0])]],
    # 100/2=50, 200/3=66.7 -> 63 (clamped), 50/1=50, 10/5=2
    expected_output=lambda: [[pack_f32_slice([50.0, 63.0, 50.0, 2.0])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)

ENTRY_SDCLIP = register_op(
    SDCLIP_OP_ID, _build_sdclip,
    test_inputs=lambda: [[pack_f32_slice([10.0, 50.0, -40.0, 25.0])]],
    expected_output=lambda: [[pack_f32_slice([10.0, 30.0, -30.0, 25.0])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
