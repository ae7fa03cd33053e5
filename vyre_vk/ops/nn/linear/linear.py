"""`vyre-libs::nn::linear`: u32 (wrapping) affine layer ``out[i] = b[i] + sum_k x[k] * w[k*out_dim + i]``
(port of vyre-libs/src/nn/linear/inner/builder.rs ``linear``: vyre-libs' ``math::matmul_bias``
with m = 1, tagged as nn::linear).

Program: ``Region(nn::linear){ Region(math::matmul_bias, parent nn::linear){ body } }``; body:
``idx = gid.x; row = idx / n; col = idx % n; if idx < buf_len(out) { acc = 0u;
for kk < k: acc += x[row*k + kk] * w[kk*n + col]; out[idx] = acc + b[col] }``. Buffers x ro u32
(0, in_dim), w ro u32 (1, in_dim*out_dim), b ro u32 (2, out_dim), out u32 output (3, out_dim);
workgroup [256,1,1]. Like vyre, ``in_dim*out_dim >= LINEAR_TILED_MIN_WORK`` (1024, while the
product fits in u32) returns ``linear_tiled(..., LINEAR_TILED_TILE = 32)`` instead (tiled.py).

Example::

    >>> p = linear("x", "w", "b", "out", 4, 4)
    >>> p.entry[0].generator, p.entry[0].body[0].generator, p.workgroup_size
    ('vyre-libs::nn::linear', 'vyre-libs::math::matmul_bias', (256, 1, 1))
"""
from __future__ import annotations

from ....ir import Program, wrap_anonymous, wrap_child
from ...math.linalg.matmul import OP_ID_BIAS as MATMUL_BIAS_OP_ID, gemm_buffers, matmul_body
from ...registry import register_op
from .tiled import (LINEAR_TILED_MIN_WORK, LINEAR_TILED_TILE, U32_MAX, linear_tiled, linear_vector_expected,
                    linear_vector_inputs)
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::linear"
# No f32 result (u32 wrapping arithmetic): byte-exact, no ULP window.
ULP = None


def linear(x: str, w: str, b: str, out: str, in_dim: int, out_dim: int) -> Program:
    # vyre: `in_dim.checked_mul(out_dim).is_some_and(|work| work >= LINEAR_TILED_MIN_WORK)`
    if LINEAR_TILED_MIN_WORK <= in_dim * out_dim <= U32_MAX:
        return linear_tiled(x, w, b, out, in_dim, out_dim, LINEAR_TILED_TILE)
    if in_dim == 0 or out_dim == 0:
        raise OpParamError(f"Fix: {OP_ID} needs positive in_dim and out_dim; got {in_dim}, {out_dim}.")
    if in_dim * out_dim > U32_MAX:
        raise OpParamError(f"Fix: {OP_ID} in_dim*out_dim overflows u32 ({in_dim}x{out_dim}); reduce dimensions.")
    # vyre-libs' math::matmul_bias with m = 1, tagged as nn::linear.
    body = matmul_body(x, w, out, in_dim, out_dim, b)
    return Program.wrapped(gemm_buffers(x, w, b, out, 1, in_dim, out_dim), (256, 1, 1),
                           [wrap_anonymous(OP_ID, [wrap_child(MATMUL_BIAS_OP_ID, OP_ID, body)])])


def _build(in_dim: int = 4, out_dim: int = 4) -> Program:
    return linear("x", "w", "b", "out", in_dim, out_dim)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=linear_vector_inputs,
    expected_output=linear_vector_expected,
    category="nn", ulp=ULP,
    bench=dict(in_dim=4096, out_dim=4096),
)
