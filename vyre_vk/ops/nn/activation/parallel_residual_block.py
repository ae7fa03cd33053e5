"""`vyre-libs::nn::parallel_residual_block`: ``out = (x + attn) + mlp`` on f32
(port of vyre-libs/src/nn/activation/parallel_residual_block.rs). Guard ``i < n``,
workgroup [64,1,1]; n == 0 is an error (vyre returns Err).

Example::

    >>> parallel_residual_block("x", "attn", "mlp", "out", 4).buffers[3].binding
    3
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_case
from ...wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::parallel_residual_block"
# 4 ULP: elementary ops only (two f32 adds; vyre's program budget).
ULP = 4


def parallel_residual_block(x: str, attn_out: str, mlp_out: str, output: str, n: int) -> Program:
    if n == 0:
        raise OpParamError("Fix: n=0")
    i = Expr.var("i")
    result = Expr.add(Expr.add(Expr.load(x, i), Expr.load(attn_out, i)), Expr.load(mlp_out, i))
    buffers = [ro_decl(x, 0, n), ro_decl(attn_out, 1, n), ro_decl(mlp_out, 2, n), out_decl(output, 3, n)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(output, i, result)])


def _build(n: int = 4) -> Program:
    return parallel_residual_block("x", "attn", "mlp", "out", n)


ENTRY = register_case(OP_ID, _build, [pack_f32_slice([1.0, 2.0, 3.0, 4.0]), pack_f32_slice([0.1, 0.2, 0.3, 0.4]),
                                      pack_f32_slice([0.01, 0.02, 0.03, 0.04])],
                      # vyre lists the f32 literals 1.11, 2.22, 3.33, 4.44 (not the computed sums; see tests/ops).
                      [pack_f32_slice([1.11, 2.22, 3.33, 4.44])], category="nn", ulp=ULP, bench=dict(n=1 << 24))
