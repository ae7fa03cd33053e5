"""`vyre-libs::nn::layerwise_ln_scale`: ``output[i] = input[i] * scale[i]`` on f32 (no layer
norm inside, despite the name) (port of vyre-libs/src/nn/norm/layerwise_ln_scale.rs, built on
vyre-libs' ``f32_elementwise_mul``). Buffers input ro (0, n), scale ro (1, n), output (2, n);
guard ``i < n``; workgroup [64,1,1].

Example::

    >>> [b.name for b in layerwise_ln_scale("input", "scale", "output", 4).buffers]
    ['input', 'scale', 'output']
"""
from __future__ import annotations

from ....ir import Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice

OP_ID = "vyre-libs::nn::layerwise_ln_scale"
# 4 ULP: elementary ops only (one multiply; vyre's program budget).
ULP = 4


def layerwise_ln_scale(input: str, scale: str, output: str, n: int) -> Program:
    i = Expr.var("i")
    return elementwise_program(OP_ID, [ro_decl(input, 0, n), ro_decl(scale, 1, n), out_decl(output, 2, n)], n,
                               [Node.store(output, i, Expr.mul(Expr.load(input, i), Expr.load(scale, i)))])


def _build(n: int = 4) -> Program:
    return layerwise_ln_scale("input", "scale", "output", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0]),   # input (post-LN)
                          pack_f32_slice([0.5, 2.0, 1.0, 0.1])]],  # scale
    expected_output=lambda: [[pack_f32_slice([0.5, 4.0, 3.0, 0.4])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24),
)
