"""`vyre-libs::nn::layer_norm`: ``y = (x - mean) * inverseSqrt((sum(x^2)/n - mean^2) + eps)`` on
f32, no gamma/beta (port of vyre-libs/src/nn/norm/layer_norm.rs, the tiled program).

``tile = min(256, n)``, workgroup [tile,1,1]; workgroup 0 accumulates (sum, sum of squares) per
lane over its strided slice into ``ln_sum_scratch`` / ``ln_sq_scratch``, two tree sums (first
workgroup only), lane 0 stores ``mean`` and the inverse std in ``ln_stats[0..2]``, barrier,
and the lanes write their strided slice. One-pass variance: catastrophic cancellation when
|mean| >> std, as in vyre.

Example::

    >>> p = layer_norm("input", "output", 4, 1e-5)
    >>> p.workgroup_size, [b.name for b in p.buffers]
    ((4, 1, 1), ['input', 'ln_sum_scratch', 'ln_sq_scratch', 'ln_stats', 'output'])
"""
from __future__ import annotations

import math

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap
from ...builder import out_decl, ro_decl, strided_accumulate2_child
from ...primitives import FIRST_WORKGROUP, sum_f32_child
from ...registry import register_op
from ...wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::layer_norm"
LAYER_NORM_TILE = 256
# 128 ULP: the program uses InverseSqrt (vyre: max(explicit 1, transcendental budget 128)).
ULP = 128


def layer_norm(input: str, output: str, n: int, eps: float, workgroup_size=None,
               region_generator: str = OP_ID) -> Program:
    """``workgroup_size`` / ``region_generator``: vyre's LayerNorm builder options."""
    if n == 0:
        raise OpParamError(f"{OP_ID}: n=0. Fix: pass at least one element.")
    if eps < 0.0 or math.isnan(eps):
        raise OpParamError(f"{OP_ID}: eps={eps}. Fix: eps must be >= 0.")
    wg = tuple(workgroup_size) if workgroup_size else (LAYER_NORM_TILE, 1, 1)
    tile = min(max(wg[0], 1), n)
    wg = (tile, wg[1], wg[2])
    chunks = -(-n // tile)
    local, idx = Expr.var("local"), Expr.var("idx")
    nf = Expr.f32(float(n))
    wg0 = Expr.eq(Expr.workgroup_x(), Expr.u32(0))
    body = [
        Node.let_bind("local", Expr.local_x()),
        strided_accumulate2_child(
            OP_ID, tile, chunks, n,
            ("local_sum", Expr.f32(0.0), "ln_sum_scratch", lambda i, acc: Expr.add(acc, Expr.load(input, i))),
            ("local_sq_sum", Expr.f32(0.0), "ln_sq_scratch",
             lambda i, acc: Expr.add(acc, Expr.mul(Expr.load(input, i), Expr.load(input, i))))),
        Node.barrier(),
        sum_f32_child(OP_ID, tile, "ln_sum_scratch", FIRST_WORKGROUP),
        sum_f32_child(OP_ID, tile, "ln_sq_scratch", FIRST_WORKGROUP),
        Node.if_then(Expr.and_(wg0, Expr.eq(local, Expr.u32(0))), [
            Node.let_bind("mean", Expr.div(Expr.load("ln_sum_scratch", Expr.u32(0)), nf)),
            Node.let_bind("mean_sq", Expr.div(Expr.load("ln_sq_scratch", Expr.u32(0)), nf)),
            Node.let_bind("variance", Expr.sub(Expr.var("mean_sq"), Expr.mul(Expr.var("mean"), Expr.var("mean")))),
            Node.store("ln_stats", Expr.u32(0), Expr.var("mean")),
            Node.store("ln_stats", Expr.u32(1), Expr.inverse_sqrt(Expr.add(Expr.var("variance"), Expr.f32(eps)))),
        ]),
        Node.barrier(),
        Node.if_then(wg0, [
            Node.let_bind("mean", Expr.load("ln_stats", Expr.u32(0))),
            Node.let_bind("scale", Expr.load("ln_stats", Expr.u32(1))),
            Node.loop_for("chunk", Expr.u32(0), Expr.u32(chunks), [
                Node.let_bind("idx", Expr.add(Expr.mul(Expr.var("chunk"), Expr.u32(tile)), local)),
                Node.if_then(Expr.lt(idx, Expr.u32(n)), [
                    Node.store(output, idx, Expr.mul(Expr.sub(Expr.load(input, idx), Expr.var("mean")),
                                                     Expr.var("scale")))]),
            ]),
        ]),
    ]
    return Program.wrapped(
        [ro_decl(input, 0, n), BufferDecl.workgroup("ln_sum_scratch", tile, DataType.F32),
         BufferDecl.workgroup("ln_sq_scratch", tile, DataType.F32), BufferDecl.workgroup("ln_stats", 2, DataType.F32),
         out_decl(output, 1, n)],
        wg,
        [wrap(region_generator, body, None)],
    )


def _build(n: int = 4, eps: float = 1e-5) -> Program:
    return layer_norm("input", "output", n, eps)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([2.0, 2.0, 2.0, 2.0])]],
    expected_output=lambda: [[bytes(16)]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 20),
)
