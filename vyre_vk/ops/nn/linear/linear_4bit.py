"""`vyre-libs::nn::linear_4bit`: f32 affine layer over 4-bit unsigned weight codes,
``out[i] = b[i] + sum_k x[k] * f32(nibble(k, i))`` (port of vyre-libs/src/nn/linear/inner/linear_4bit.rs
``linear_4bit``; no scale or zero point).

Weights: eight 4-bit codes per u32; code (k, i) is ``(w[(k/8)*out_dim + i] >> ((k%8)*4)) & 0xF``
(so word row k/8 holds column i's codes for k = 8*(k/8) .. +7, lowest nibble first). One
invocation per output (``i = gid.x < out_dim``), sequential ``acc = b[i]; acc += x[k] * w``.
Buffers x ro f32 (0, in_dim), w ro u32 (1, in_dim/8*out_dim), b ro f32 (2, out_dim), out
f32 output (3, out_dim); workgroup [256,1,1]. in_dim must be a multiple of 8.

Example::

    >>> [b.count for b in linear_4bit("x", "w", "b", "out", 8, 4).buffers]
    [8, 4, 4, 4]
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::linear_4bit"
# 4 ULP: elementary ops only (an exact u32->f32 cast of a nibble, then a mul/add dot product).
ULP = 4


def linear_4bit(x: str, w_packed: str, b: str, out: str, in_dim: int, out_dim: int) -> Program:
    if in_dim == 0:
        raise OpParamError("Fix: linear_4bit in_dim=0 is invalid: empty reduction")
    if out_dim == 0:
        raise OpParamError("Fix: linear_4bit out_dim=0 is invalid: empty output")
    if in_dim % 8 != 0:
        raise OpParamError(f"Fix: linear_4bit in_dim={in_dim} is not divisible by 8; pad weights to a multiple of 8.")
    i, k = Expr.var("i"), Expr.var("k")
    packed_idx = Expr.add(Expr.mul(Expr.div(k, Expr.u32(8)), Expr.u32(out_dim)), i)
    shift = Expr.mul(Expr.rem(k, Expr.u32(8)), Expr.u32(4))
    weight = Expr.cast(DataType.F32, Expr.bitand(Expr.shr(Expr.load(w_packed, packed_idx), shift), Expr.u32(0xF)))
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(out_dim)), [
            Node.let_bind("acc", Expr.load(b, i)),
            Node.loop_for("k", Expr.u32(0), Expr.u32(in_dim),
                          [Node.assign("acc", Expr.add(Expr.var("acc"), Expr.mul(Expr.load(x, k), weight)))]),
            Node.store(out, i, Expr.var("acc")),
        ]),
    ]
    return Program.wrapped(
        [ro_decl(x, 0, in_dim), ro_decl(w_packed, 1, in_dim // 8 * out_dim, DataType.U32), ro_decl(b, 2, out_dim),
         out_decl(out, 3, out_dim)],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(in_dim: int = 8, out_dim: int = 4) -> Program:
    return linear_4bit("x", "w", "b", "out", in_dim, out_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([float(i) for i in range(8)]),
                          pack_u32_slice([0x76543210, 0xFEDCBA98, 0x11111111, 0x00000000]),
                          pack_f32_slice([0.0] * 4)]],
    expected_output=lambda: [[pack_f32_slice([140.0, 364.0, 28.0, 0.0])]],
    category="nn", ulp=ULP,
    bench=dict(in_dim=4096, out_dim=4096),
)
