"""`vyre-libs::nn::mlp_4x_leaky_sq`: ``out = W2 · leaky_relu_sq(W1 · x + b1) + b2`` on f32, plus its
two halves registered as `...::hidden_projection` and `...::output_projection`
(port of vyre-libs/src/nn/activation/mlp_4x_leaky_sq.rs).

Layouts: ``w1[k*hidden + j]`` (model x hidden), ``w2[j*model + i]`` (hidden x model).
Lanes ``j = chunk*256 + lane`` compute ``h = b1[j] + sum_k x[k]*w1[k*hidden+j]``,
``lk = max(0.5h, h)`` and store ``lk*lk`` in the workgroup buffer ``__mlp_4x_leaky_sq_hidden``;
barrier; lanes ``i`` compute ``out[i] = b2[i] + sum_j hid[j]*w2[j*model+i]``. Workgroup [256,1,1].
Like vyre, the fused op is correct only when workgroup 0 covers every output, i.e.
model_dim <= 256 (other workgroups' lanes start at 256 and see only their own shared memory).

Example::

    >>> p = mlp_4x_leaky_sq("x", "w1", "b1", "w2", "b2", "out", 2, 4)
    >>> [r.generator for r in p.entry[0].body[1::2]]
    ['vyre-libs::nn::mlp_4x_leaky_sq::hidden_projection', 'vyre-libs::nn::mlp_4x_leaky_sq::output_projection']
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from .unary import f32_bits
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::mlp_4x_leaky_sq"
MLP_WORKGROUP = 256
HIDDEN_SCRATCH = "__mlp_4x_leaky_sq_hidden"
HIDDEN_PROJECTION_OP_ID = "vyre-libs::nn::mlp_4x_leaky_sq::hidden_projection"
OUTPUT_PROJECTION_OP_ID = "vyre-libs::nn::mlp_4x_leaky_sq::output_projection"
# 4 ULP: elementary ops only (mul/add chains, max; vyre's program budget, no explicit entry).
ULP = 4


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def hidden_projection_body(x: str, w1: str, b1: str, model_dim: int, hidden_dim: int) -> list:
    j, h = Expr.var("j"), Expr.var("h")
    return [Node.loop_for("hidden_chunk", Expr.u32(0), Expr.u32(_ceil_div(hidden_dim, MLP_WORKGROUP)), [
        Node.let_bind("j", Expr.add(Expr.mul(Expr.var("hidden_chunk"), Expr.u32(MLP_WORKGROUP)), Expr.var("lane"))),
        Node.if_then(Expr.lt(j, Expr.u32(hidden_dim)), [
            Node.let_bind("h", Expr.load(b1, j)),
            Node.loop_for("k", Expr.u32(0), Expr.u32(model_dim), [
                Node.assign("h", Expr.add(h, Expr.mul(
                    Expr.load(x, Expr.var("k")),
                    Expr.load(w1, Expr.add(Expr.mul(Expr.var("k"), Expr.u32(hidden_dim)), j))))),
            ]),
            Node.let_bind("lk", Expr.max(Expr.mul(Expr.f32(0.5), h), h)),
            Node.store(HIDDEN_SCRATCH, j, Expr.mul(Expr.var("lk"), Expr.var("lk"))),
        ]),
    ])]


def output_projection_body(w2: str, b2: str, output: str, model_dim: int, hidden_dim: int) -> list:
    i = Expr.var("i")
    return [Node.loop_for("out_chunk", Expr.u32(0), Expr.u32(_ceil_div(model_dim, MLP_WORKGROUP)), [
        Node.let_bind("i", Expr.add(Expr.mul(Expr.var("out_chunk"), Expr.u32(MLP_WORKGROUP)), Expr.var("lane"))),
        Node.if_then(Expr.lt(i, Expr.u32(model_dim)), [
            Node.let_bind("out_acc", Expr.load(b2, i)),
            Node.loop_for("j", Expr.u32(0), Expr.u32(hidden_dim), [
                Node.assign("out_acc", Expr.add(Expr.var("out_acc"), Expr.mul(
                    Expr.load(HIDDEN_SCRATCH, Expr.var("j")),
                    Expr.load(w2, Expr.add(Expr.mul(Expr.var("j"), Expr.u32(model_dim)), i))))),
            ]),
            Node.store(output, i, Expr.var("out_acc")),
        ]),
    ])]


def mlp_4x_leaky_sq(x: str, w1: str, b1: str, w2: str, b2: str, output: str,
                    model_dim: int, hidden_dim: int) -> Program:
    if model_dim == 0 or hidden_dim == 0:
        raise OpParamError("Fix: mlp requires non-zero dimensions")
    body = [
        Node.let_bind("lane", Expr.gid_x()),
        wrap_child(HIDDEN_PROJECTION_OP_ID, OP_ID, hidden_projection_body(x, w1, b1, model_dim, hidden_dim)),
        Node.barrier(),
        wrap_child(OUTPUT_PROJECTION_OP_ID, OP_ID, output_projection_body(w2, b2, output, model_dim, hidden_dim)),
    ]
    return Program.wrapped(
        [ro_decl(x, 0, model_dim), ro_decl(w1, 1, model_dim * hidden_dim), ro_decl(b1, 2, hidden_dim),
         ro_decl(w2, 3, hidden_dim * model_dim), ro_decl(b2, 4, model_dim), out_decl(output, 5, model_dim),
         BufferDecl.workgroup(HIDDEN_SCRATCH, hidden_dim, DataType.F32)],
        (MLP_WORKGROUP, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def hidden_projection_program(model_dim: int = 2, hidden_dim: int = 4) -> Program:
    """vyre registers this fixed at (2, 4); the sizes are parameters here for the random tests."""
    return Program.wrapped(
        [ro_decl("x", 0, model_dim), ro_decl("w1", 1, model_dim * hidden_dim), ro_decl("b1", 2, hidden_dim),
         out_decl(HIDDEN_SCRATCH, 3, hidden_dim)],
        (MLP_WORKGROUP, 1, 1),
        [wrap_anonymous(HIDDEN_PROJECTION_OP_ID, [
            Node.let_bind("lane", Expr.gid_x()),
            Node.if_then(Expr.lt(Expr.var("lane"), Expr.u32(MLP_WORKGROUP)),
                         hidden_projection_body("x", "w1", "b1", model_dim, hidden_dim)),
        ])],
    )


def output_projection_program(model_dim: int = 2, hidden_dim: int = 4) -> Program:
    """vyre registers this fixed at (2, 4); the sizes are parameters here for the random tests."""
    return Program.wrapped(
        [ro_decl("w2", 0, hidden_dim * model_dim), ro_decl("b2", 1, model_dim),
         ro_decl(HIDDEN_SCRATCH, 2, hidden_dim), out_decl("out", 3, model_dim)],
        (MLP_WORKGROUP, 1, 1),
        [wrap_anonymous(OUTPUT_PROJECTION_OP_ID, [
            Node.let_bind("lane", Expr.gid_x()),
            Node.if_then(Expr.lt(Expr.var("lane"), Expr.u32(MLP_WORKGROUP)),
                         output_projection_body("w2", "b2", "out", model_dim, hidden_dim)),
        ])],
    )


_X = [1.0, 2.0]
_W1 = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
_W2 = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]
# Computed by vyre on the host in f32: [4.1000004, 5.96]
_OUT_BITS = [0x40833334, 0x40BEB852]


def _build(model_dim: int = 2, hidden_dim: int = 4) -> Program:
    return mlp_4x_leaky_sq("x", "w1", "b1", "w2", "b2", "out", model_dim, hidden_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice(_X), pack_f32_slice(_W1), pack_f32_slice([0.0] * 4),
                          pack_f32_slice(_W2), pack_f32_slice([0.0, 0.0])]],
    expected_output=lambda: [[f32_bits(_OUT_BITS)]],
    category="nn", ulp=ULP,
    bench=dict(model_dim=256, hidden_dim=1024),  # the fused program is right only for model_dim <= 256
)

HIDDEN_ENTRY = register_op(
    HIDDEN_PROJECTION_OP_ID, hidden_projection_program,
    test_inputs=lambda: [[pack_f32_slice(_X), pack_f32_slice(_W1), pack_f32_slice([0.0] * 4)]],
    # Computed by vyre on the host: [1.21, 1.9600003, 2.89, 4.0]
    expected_output=lambda: [[f32_bits([0x3F9AE148, 0x3FFAE14A, 0x4038F5C3, 0x40800000])]],
    category="nn", ulp=ULP,
    bench=dict(model_dim=2048, hidden_dim=8192),
)

OUTPUT_ENTRY = register_op(
    OUTPUT_PROJECTION_OP_ID, output_projection_program,
    test_inputs=lambda: [[pack_f32_slice(_W2), pack_f32_slice([0.0, 0.0]),
                          pack_f32_slice([1.21, 1.96, 2.89, 4.0])]],
    expected_output=lambda: [[f32_bits(_OUT_BITS)]],
    category="nn", ulp=ULP,
    bench=dict(model_dim=2048, hidden_dim=8192),
)
