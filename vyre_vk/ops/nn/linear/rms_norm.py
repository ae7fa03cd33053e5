"""`vyre-libs::nn::rms_norm_linear`: ``out = (input * inv_rms) @ W + b`` on f32
(port of vyre-libs/src/nn/linear/inner/rms_norm.rs).

Lane 0 sums ``input[k]^2`` for ``k < n`` serially and stores
``inverseSqrt(sum/n + eps)`` in the workgroup scalar ``inv_rms``; barrier; lanes
``j < out_dim`` compute ``acc = b[j] + sum_{k<in_dim} (input[k]*scale) * w[k*out_dim + j]``.
Buffers: input (0, in_dim), w (1, in_dim*out_dim), b (2, out_dim) ro f32, inv_rms workgroup,
out output **binding 4**; workgroup [64,1,1]; entry_op_id set. Like vyre, only workgroup 0
computes ``inv_rms``: correct for out_dim <= 64 (lanes of other workgroups would read 0).

Example::

    >>> p = rms_norm_linear("input", "w", "b", "out", 4, 4, 4, 1e-5)
    >>> [(b.name, b.binding) for b in p.buffers if not b.is_workgroup]
    [('input', 0), ('w', 1), ('b', 2), ('out', 4)]
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from ..activation.unary import f32_bits
from ..rms import inverse_rms_expr, square_expr
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::rms_norm_linear"
# 128 ULP: the program uses InverseSqrt (vyre: max(explicit 2, transcendental budget 128)).
ULP = 128


def rms_norm_linear(input: str, w: str, b: str, out: str, n: int, in_dim: int, out_dim: int,
                    eps: float) -> Program:
    if n == 0 or in_dim == 0 or out_dim == 0 or n > in_dim:
        raise OpParamError(f"{OP_ID}: shape (n={n}, in_dim={in_dim}, out_dim={out_dim}). "
                         "Fix: all >= 1 and n <= in_dim.")
    if in_dim * out_dim > 0xFFFFFFFF:
        raise OpParamError(f"{OP_ID}: in_dim*out_dim overflows u32. Fix: reduce dimensions.")
    lane, k = Expr.var("lane"), Expr.var("k")
    mean_sq = [
        Node.let_bind("sum_sq", Expr.f32(0.0)),
        Node.loop_for("k", Expr.u32(0), Expr.u32(n), [
            Node.assign("sum_sq", Expr.add(Expr.var("sum_sq"), square_expr(Expr.load(input, k))))]),
        Node.store("inv_rms", Expr.u32(0), inverse_rms_expr(Expr.var("sum_sq"), n, eps)),
    ]
    output_lane = [
        Node.let_bind("acc", Expr.load(b, lane)),
        Node.let_bind("scale", Expr.load("inv_rms", Expr.u32(0))),
        Node.loop_for("k", Expr.u32(0), Expr.u32(in_dim), [
            Node.assign("acc", Expr.add(Expr.var("acc"), Expr.mul(
                Expr.mul(Expr.load(input, k), Expr.var("scale")),
                Expr.load(w, Expr.add(Expr.mul(k, Expr.u32(out_dim)), lane)))))]),
        Node.store(out, lane, Expr.var("acc")),
    ]
    return Program.wrapped(
        [ro_decl(input, 0, in_dim), ro_decl(w, 1, in_dim * out_dim), ro_decl(b, 2, out_dim),
         BufferDecl.workgroup("inv_rms", 1, DataType.F32), out_decl(out, 4, out_dim)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, [
            Node.let_bind("lane", Expr.gid_x()),
            Node.if_then(Expr.eq(lane, Expr.u32(0)), mean_sq),
            Node.barrier(),
            Node.if_then(Expr.lt(lane, Expr.u32(out_dim)), output_lane),
        ])],
    ).with_entry_op_id(OP_ID)


def _build(n: int = 4, in_dim: int = 4, out_dim: int = 4, eps: float = 1e-5) -> Program:
    return rms_norm_linear("input", "w", "b", "out", n, in_dim, out_dim, eps)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]),
                          pack_f32_slice([float(v) for v in range(16)]),
                          bytes(16)]],
    # vyre computes this on the host in f32: [29.211851, 32.863335, 36.514816, 40.166298]
    expected_output=lambda: [[f32_bits([0x41E9B1DF, 0x4203740E, 0x42120F2C, 0x4220AA4A])]],
    category="nn", ulp=ULP,
    bench=dict(n=4096, in_dim=4096, out_dim=64),
)
