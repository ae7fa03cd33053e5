"""`vyre-libs::nn::linear_tiled`: u32 (wrapping) affine layer ``out[j] = b[j] + sum_k x[k] * w[k*out_dim + j]``
on the cooperative tiled GEMM (port of vyre-libs/src/nn/linear/inner/tiled.rs).

``linear_tiled`` is ``math::matmul_bias_tiled`` with m = 1 (x as a 1 x in_dim matrix), default
[16,16,1] tile shape, tagged as nn::linear_tiled the way vyre's ``tag_program`` does:
``Region(nn::linear_tiled){ Region(math::matmul_bias_tiled, parent nn::linear_tiled){
Region(semiring_gemm, parent math::matmul_bias_tiled){ body } } }``. Buffers x (0, in_dim),
w (1, in_dim*out_dim), b (2, out_dim), matmul_a_tile / matmul_b_tile (workgroup, 16*tile and
tile*16), out (3, padded to ceil(out_dim/16)*256, read back as out_dim words); workgroup [256,1,1].
``nn::linear`` routes here (tile ``LINEAR_TILED_TILE`` = 32) once in_dim*out_dim >= 1024.

``linear_tiled_reference`` is vyre's hand-written non-cooperative oracle program (not
registered upstream either): one lane per output, k walked in `tile`-wide chunks.

Example::

    >>> p = linear_tiled("x", "w", "b", "out", 4, 4, 2)
    >>> p.entry[0].generator, p.entry[0].body[0].generator, p.entry[0].body[0].source_region
    ('vyre-libs::nn::linear_tiled', 'vyre-libs::math::matmul_bias_tiled', 'vyre-libs::nn::linear_tiled')
"""
from __future__ import annotations

from ....ir import Expr, Node, Program, Region, tag_program, wrap, wrap_anonymous
from ...math.linalg.matmul import gemm_buffers
from ...math.linalg.matmul_tiled import matmul_bias_tiled
from ...registry import register_op
from ...wire import pack_u32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::linear_tiled"
REFERENCE_OP_ID = "vyre-libs::nn::linear_tiled_reference"
LINEAR_TILED_TILE = 32
LINEAR_TILED_MIN_WORK = 1024
U32_MAX = 0xFFFFFFFF
# u32 results (wrapping multiply-add): byte-exact, no f32 window.
ULP = None


def _check(op_id: str, in_dim: int, out_dim: int, tile: int) -> None:
    if in_dim == 0:
        raise OpParamError(f"Fix: {op_id} in_dim=0 is invalid: empty reduction; pass in_dim >= 1.")
    if out_dim == 0:
        raise OpParamError(f"Fix: {op_id} out_dim=0 is invalid: empty output; pass out_dim >= 1.")
    if tile == 0:
        raise OpParamError(f"Fix: {op_id} tile=0 is invalid: tile width must be > 0.")
    if in_dim * out_dim > U32_MAX:
        raise OpParamError(f"Fix: {op_id} in_dim*out_dim overflows u32; reduce dimensions.")


def linear_tiled(x: str, w: str, b: str, out: str, in_dim: int, out_dim: int, tile: int) -> Program:
    """``out[j] = b[j] + sum_k x[k] * w[k*out_dim + j]`` (wrapping u32) as a 1-row tiled GEMM."""
    _check(OP_ID, in_dim, out_dim, tile)
    return tag_program(OP_ID, matmul_bias_tiled(x, w, b, out, 1, in_dim, out_dim, tile))


def linear_tiled_reference(x: str, w: str, b: str, out: str, in_dim: int, out_dim: int, tile: int) -> Program:
    """vyre's plain oracle for :func:`linear_tiled`: lane j < out_dim sums k in tile chunks."""
    _check(REFERENCE_OP_ID, in_dim, out_dim, tile)
    lane, kk = Expr.var("lane"), Expr.var("kk")
    term = Expr.mul(Expr.load(x, kk), Expr.load(w, Expr.add(Expr.mul(kk, Expr.u32(out_dim)), lane)))
    body = [
        Node.let_bind("lane", Expr.gid_x()),
        Node.if_then(Expr.lt(lane, Expr.u32(out_dim)), [
            Node.let_bind("acc", Expr.load(b, lane)),
            Node.loop_for("tile_idx", Expr.u32(0), Expr.u32(-(-in_dim // tile)), [
                Node.let_bind("tile_base", Expr.mul(Expr.var("tile_idx"), Expr.u32(tile))),
                Node.loop_for("tile_k", Expr.u32(0), Expr.u32(tile), [
                    Node.let_bind("kk", Expr.add(Expr.var("tile_base"), Expr.var("tile_k"))),
                    Node.if_then(Expr.lt(kk, Expr.u32(in_dim)), [Node.assign("acc", Expr.add(Expr.var("acc"), term))]),
                ]),
            ]),
            Node.store(out, lane, Expr.var("acc")),
        ]),
    ]
    return Program.wrapped(gemm_buffers(x, w, b, out, 1, in_dim, out_dim), (256, 1, 1),
                           [wrap(REFERENCE_OP_ID, body, None)])


def _build(in_dim: int = 4, out_dim: int = 4, tile: int = 2) -> Program:
    return linear_tiled("x", "w", "b", "out", in_dim, out_dim, tile)


def linear_vector_inputs() -> list:
    """vyre's 4x4 linear vector (nn::linear and nn::linear_tiled): x = 0..3, w = 0..15, b = 0."""
    return [[pack_u32_slice(list(range(4))), pack_u32_slice(list(range(16))), pack_u32_slice([0, 0, 0, 0])]]


def linear_vector_expected() -> list:
    return [[pack_u32_slice([56, 62, 68, 74])]]


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=linear_vector_inputs,
    expected_output=linear_vector_expected,
    category="nn", ulp=ULP,
    bench=dict(in_dim=4096, out_dim=4096, tile=16),
)
