"""`vyre-libs::nn::rms_norm`: ``y = x * inverseSqrt(sum(x^2)/n + eps)`` on f32 (no weight)
(port of vyre-libs/src/nn/norm/rms_norm.rs, the tiled program).

``tile = min(256, n)``, workgroup [tile,1,1]; in workgroup 0 each lane accumulates the squares
of its strided slice into ``rms_scratch``, a tree sum (first workgroup only), lane 0 stores
the inverse RMS in ``rms_scale``, barrier, and the lanes write their strided slice.

Example::

    >>> p = rms_norm("input", "output", 4, 1e-5)
    >>> p.workgroup_size, [b.name for b in p.buffers]
    ((4, 1, 1), ['input', 'rms_scratch', 'rms_scale', 'output'])
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, strided_accumulate_child, strided_writeback_child
from ...primitives import FIRST_WORKGROUP, sum_f32_child
from ...registry import register_case
from ...wire import pack_f32_slice
from ..activation.unary import f32_bits
from ..rms import EMPTY_RMS_FIX, inverse_rms_expr, square_expr
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::rms_norm"
RMS_TILE = 256
# 128 ULP: the program uses InverseSqrt (vyre: max(explicit 2, transcendental budget 128)).
ULP = 128


def rms_norm(input: str, output: str, n: int, eps: float) -> Program:
    if n == 0:
        raise OpParamError(EMPTY_RMS_FIX)
    tile = max(min(RMS_TILE, n), 1)
    chunks = -(-n // tile)
    local = Expr.var("local")
    body = [
        Node.let_bind("local", Expr.local_x()),
        strided_accumulate_child(OP_ID, tile, chunks, n, "local_sum", Expr.f32(0.0), "rms_scratch",
                                 lambda idx, acc: Expr.add(acc, square_expr(Expr.load(input, idx)))),
        Node.barrier(),
        sum_f32_child(OP_ID, tile, "rms_scratch", FIRST_WORKGROUP),
        Node.if_then(Expr.and_(Expr.eq(Expr.workgroup_x(), Expr.u32(0)), Expr.eq(local, Expr.u32(0))), [
            Node.store("rms_scale", Expr.u32(0), inverse_rms_expr(Expr.load("rms_scratch", Expr.u32(0)), n, eps))]),
        Node.barrier(),
        strided_writeback_child(OP_ID, tile, chunks, n, output,
                                [Node.let_bind("scale", Expr.load("rms_scale", Expr.u32(0)))],
                                lambda idx: Expr.mul(Expr.load(input, idx), Expr.var("scale"))),
    ]
    return Program.wrapped(
        [ro_decl(input, 0, n), BufferDecl.workgroup("rms_scratch", tile, DataType.F32),
         BufferDecl.workgroup("rms_scale", 1, DataType.F32), out_decl(output, 1, n)],
        (tile, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 4, eps: float = 1e-5) -> Program:
    return rms_norm("input", "output", n, eps)


# vyre: rms = (7.5 + 1e-5).sqrt().recip() in f32; y = x*rms
# [0.36514813, 0.73029625, 1.0954444, 1.4605925]
ENTRY = register_case(OP_ID, _build, [pack_f32_slice([1.0, 2.0, 3.0, 4.0])],
                      [f32_bits([0x3EBAF4B2, 0x3F3AF4B2, 0x3F8C3786, 0x3FBAF4B2])], category="nn", ulp=ULP,
                      bench=dict(n=1 << 20))
