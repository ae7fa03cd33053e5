"""Shared fused linear + activation skeleton (vyre-libs/src/nn/linear/inner/fused_activation.rs):
``i < out_dim: acc = b[i]; for k < in_dim: acc = acc + x[k]*w[k*out_dim + i]; out[i] = act(acc)``.
Buffers x (0, in_dim), w (1, in_dim*out_dim), b (2, out_dim) ro f32; out f32 output (3, out_dim).
Workgroup [64,1,1]."""
from __future__ import annotations

from typing import Callable

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...math.linalg.matmul import gemm_buffers
from ...registry import OpEntry, register_op
from ...wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError


def fused_vector_inputs() -> list:
    """vyre's 4x4 vector of the fused linear ops: x = 0..3, w = 0..15, b = 0 (pre-activation 56 + 6i)."""
    return [[pack_f32_slice([float(i) for i in range(4)]), pack_f32_slice([float(i) for i in range(16)]),
             pack_f32_slice([0.0] * 4)]]


def register_fused_linear(op_id: str, builder: Callable[..., Program], ulp: int) -> OpEntry:
    """Register a fused linear op on the shared 4x4 vector: every activation here (relu, silu) maps the
    pre-activations 56 + 6i to themselves (exp(-56) vanishes next to 1), so the ops share one table."""
    return register_op(op_id, builder, test_inputs=fused_vector_inputs,
                       expected_output=lambda: [[pack_f32_slice([56.0, 62.0, 68.0, 74.0])]],
                       category="nn", ulp=ulp, bench=dict(in_dim=4096, out_dim=4096))


def linear_fused_activation(op_name: str, op_id: str, x: str, w: str, b: str, out: str, in_dim: int,
                            out_dim: int, activation: Callable[[Expr], Expr]) -> Program:
    if in_dim == 0:
        raise OpParamError(f"Fix: {op_name} in_dim=0 is invalid: empty reduction")
    if out_dim == 0:
        raise OpParamError(f"Fix: {op_name} out_dim=0 is invalid: empty output")
    if in_dim * out_dim > 0xFFFFFFFF:
        raise OpParamError(f"Fix: {op_name} in_dim*out_dim overflows u32; reduce dimensions.")
    i, k = Expr.var("i"), Expr.var("k")
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(out_dim)), [
            Node.let_bind("acc", Expr.load(b, i)),
            Node.loop_for("k", Expr.u32(0), Expr.u32(in_dim), [
                Node.assign("acc", Expr.add(Expr.var("acc"), Expr.mul(
                    Expr.load(x, k), Expr.load(w, Expr.add(Expr.mul(k, Expr.u32(out_dim)), i))))),
            ]),
            Node.store(out, i, activation(Expr.var("acc"))),
        ]),
    ]
    return Program.wrapped(gemm_buffers(x, w, b, out, 1, in_dim, out_dim, DataType.F32), (64, 1, 1),
                           [wrap_anonymous(op_id, body)])
