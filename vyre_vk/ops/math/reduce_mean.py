"""`vyre-libs::math::reduce_mean`: ``output[0] = (sum_i input[i]) / f32(n)`` on f32 (port of
vyre-libs/src/math/reduce_mean.rs, the tiled program).

Workgroup [256,1,1]. In workgroup 0 each lane sums its strided slice (``idx = chunk*256 + local``,
``chunk < ceil(n/256)``, in index order) into ``mean_scratch[local]``; a barrier; the f32 tree
sum of vyre-primitives (strides 128..1, first workgroup only, a barrier after each); lane 0 of
workgroup 0 stores ``mean_scratch[0] / f32(n)`` (``n`` rounded to f32 on the host, as vyre's
``n as f32``). ``n == 0`` is rejected (vyre builds a trapping program).

Example::

    >>> [(b.name, b.count) for b in reduce_mean("input", "output", 4).buffers]
    [('input', 4), ('mean_scratch', 256), ('output', 1)]
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import out_decl, ro_decl
from ..primitives import FIRST_WORKGROUP, sum_f32_child
from ..registry import OpParamError, register_case
from ..wire import pack_f32_slice

OP_ID = "vyre-libs::math::reduce_mean"
REDUCE_MEAN_TILE = 256
EMPTY_REDUCTION_FIX = ("Fix: reduce_mean n=0 is invalid; pass at least one input element or route empty "
                       "reductions to a caller-defined identity.")
# 4 ULP: elementary f32 ops only (vyre's program budget).
ULP = 4


def reduce_mean(input: str, output: str, n: int) -> Program:
    if n == 0:
        raise OpParamError(EMPTY_REDUCTION_FIX)
    tile = REDUCE_MEAN_TILE
    chunks = -(-n // tile)
    u32, local, idx = Expr.u32, Expr.var("local"), Expr.var("idx")
    wg0 = Expr.eq(Expr.workgroup_x(), u32(0))
    body = [
        Node.let_bind("local", Expr.local_x()),
        Node.if_then(wg0, [
            Node.let_bind("local_sum", Expr.f32(0.0)),
            Node.loop_for("chunk", u32(0), u32(chunks), [
                Node.let_bind("idx", Expr.add(Expr.mul(Expr.var("chunk"), u32(tile)), local)),
                Node.if_then(Expr.lt(idx, u32(n)), [
                    Node.assign("local_sum", Expr.add(Expr.var("local_sum"), Expr.load(input, idx)))]),
            ]),
            Node.store("mean_scratch", local, Expr.var("local_sum")),
        ]),
        Node.barrier(),
        sum_f32_child(OP_ID, tile, "mean_scratch", FIRST_WORKGROUP),
        Node.if_then(Expr.and_(wg0, Expr.eq(local, u32(0))), [
            Node.store(output, u32(0), Expr.div(Expr.load("mean_scratch", u32(0)), Expr.f32(float(n))))]),
    ]
    return Program.wrapped(
        [ro_decl(input, 0, n), BufferDecl.workgroup("mean_scratch", tile, DataType.F32), out_decl(output, 1, 1)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 4) -> Program:
    return reduce_mean("input", "output", n)


ENTRY = register_case(OP_ID, _build, [pack_f32_slice([1.0, 2.0, 3.0, 4.0])], [pack_f32_slice([2.5])], category="math",
                      ulp=ULP, bench=dict(n=1 << 20))
