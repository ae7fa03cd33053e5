"""`vyre-libs::nn::mlp_backward`: gradient of an MLP with the leaky_relu_sq activation
w.r.t. its input (port of vyre-libs/src/nn/backward/mlp_backward.rs).

Per lane i < model_dim: for each hidden unit j, recompute
``h_j = b1[j] + sum_m x[m] * W1[m*h + j]``, take ``d = max(0.5*h_j, 2*h_j)``, form
``g = sum_k dy[k] * W2[j*d + k]`` and accumulate ``gx += (g*d) * W1[i*h + j]``. Nested
loops, no shared memory, workgroup [64, 1, 1].

Example::

    >>> p = mlp_backward("x", "w1", "b1", "w2", "grad_out", "grad_x", 2, 2)
    >>> p.entry[0].generator
    'vyre-libs::nn::mlp_backward'
"""
from __future__ import annotations

from ....ir import Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::mlp_backward"
# 4 ULP: elementary ops only (nested mul/add loops, contractible to fma; vyre's program budget).
ULP = 4


def mlp_backward(x: str, w1: str, b1: str, w2: str, grad_out: str, grad_x: str,
                 model_dim: int, hidden_dim: int) -> Program:
    """Build the program; buffer names are parameters, as in vyre."""
    i = Expr.var("i")
    j, m, k = Expr.var("j"), Expr.var("m"), Expr.var("k")
    body = [
        Node.let_bind("i", Expr.InvocationId(axis=0)),
        Node.if_then(Expr.lt(i, Expr.u32(model_dim)), [
            Node.let_bind("gx", Expr.f32(0.0)),
            Node.loop_for("j", Expr.u32(0), Expr.u32(hidden_dim), [
                # h_j = b1[j] + sum_m x[m] * W1[m*hidden + j]
                Node.let_bind("h_acc", Expr.load(b1, j)),
                Node.loop_for("m", Expr.u32(0), Expr.u32(model_dim), [
                    Node.assign("h_acc", Expr.add(
                        Expr.var("h_acc"),
                        Expr.mul(Expr.load(x, m),
                                 Expr.load(w1, Expr.add(Expr.mul(m, Expr.u32(hidden_dim)), j))))),
                ]),
                # derivative of leaky_relu_sq, branch-free
                Node.let_bind("d_act", Expr.max(Expr.mul(Expr.f32(0.5), Expr.var("h_acc")),
                                                Expr.mul(Expr.f32(2.0), Expr.var("h_acc")))),
                # grad through the down projection: sum_k dy[k] * W2[j*model + k]
                Node.let_bind("gh_act", Expr.f32(0.0)),
                Node.loop_for("k", Expr.u32(0), Expr.u32(model_dim), [
                    Node.assign("gh_act", Expr.add(
                        Expr.var("gh_act"),
                        Expr.mul(Expr.load(grad_out, k),
                                 Expr.load(w2, Expr.add(Expr.mul(j, Expr.u32(model_dim)), k))))),
                ]),
                Node.let_bind("gh", Expr.mul(Expr.var("gh_act"), Expr.var("d_act"))),
                # back through the up projection
                Node.assign("gx", Expr.add(
                    Expr.var("gx"),
                    Expr.mul(Expr.var("gh"), Expr.load(w1, Expr.add(Expr.mul(i, Expr.u32(hidden_dim)), j))))),
            ]),
            Node.Store(buffer=grad_x, index=i, value=Expr.var("gx")),
        ]),
    ]
    return Program.wrapped(
        [ro_decl(x, 0, model_dim), ro_decl(w1, 1, model_dim * hidden_dim), ro_decl(b1, 2, hidden_dim),
         ro_decl(w2, 3, hidden_dim * model_dim), ro_decl(grad_out, 4, model_dim), out_decl(grad_x, 5, model_dim)],
        (64, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _inputs() -> list[list[bytes]]:
    # Legacy form: one slot per buffer, the output placeholder is ignored (zeros).
    return [[
        pack_f32_slice([1.0, 2.0]),            # x
        pack_f32_slice([1.0, 0.0, 0.0, 1.0]),  # w1 = identity (2x2)
        pack_f32_slice([0.0, 0.0]),            # b1
        pack_f32_slice([1.0, 0.0, 0.0, 1.0]),  # w2 = identity (2x2)
        pack_f32_slice([1.0, 1.0]),            # grad_out
        bytes(4 * 2),                          # grad_x placeholder
    ]]


def _expected() -> list[list[bytes]]:
    return [[bytes([0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x80, 0x40])]]  # [2.0, 4.0]


def _build(model_dim: int = 2, hidden_dim: int = 2) -> Program:
    return mlp_backward("x", "w1", "b1", "w2", "grad_out", "grad_x", model_dim, hidden_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=_inputs,
    expected_output=_expected,
    category="nn",
    ulp=ULP,
    bench=dict(model_dim=2048, hidden_dim=8192),
)
