"""`vyre-libs::nn::softmax_top_k`: the k largest softmax probabilities of ``scores`` and their
indices (port of vyre-libs/src/nn/moe/softmax_top_k.rs).

One sequential pass: ``max_val`` (strict ``>`` scan from -inf), then for each i
``e = exp(scores[i] - max_val)``, ``sum += e`` (in index order) and ``e`` is inserted into the k
descending slots (``best_vals``/``best_idxs``, ties keep the earlier index); finally
``weights[s] = best_vals[s] / sum`` and ``indices[s] = best_idxs[s]``. Buffers: scores ro f32
(0, n), indices u32 output (1, k), weights, best_vals (plain ReadWrite f32, 2-3, k),
best_idxs (plain ReadWrite u32, 4, k); workgroup [1,1,1]; no invocation guard (as in vyre:
each of the k dispatched invocations repeats the selection on the shared slots).

Example::

    >>> [b.name for b in softmax_top_k("scores", "indices", "weights", 8, 2).buffers]
    ['scores', 'indices', 'weights', 'best_vals', 'best_idxs']
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from ..activation.unary import f32_bits
from .topk_selection import (BEST_IDXS, BEST_VALS, NEG_INF, copy_top_k_indices_and_normalized_weights,
                             init_top_k_slots, insert_top_k_candidate)
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::softmax_top_k"
# 128 ULP: the program uses Exp (vyre's transcendental budget; no explicit window).
ULP = 128


def softmax_top_k(scores: str, out_indices: str, out_weights: str, n: int, k: int) -> Program:
    if k == 0:
        raise OpParamError("Fix: softmax_top_k requires k > 0 so the selection scratch has at least one slot.")
    i = Expr.var("i")
    body = init_top_k_slots(k)
    body += [
        Node.let_bind("max_val", Expr.f32(NEG_INF)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(n), [
            Node.if_then(Expr.gt(Expr.load(scores, i), Expr.var("max_val")),
                         [Node.assign("max_val", Expr.load(scores, i))])]),
        Node.let_bind("sum", Expr.f32(0.0)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(n), [
            Node.let_bind("exp_val", Expr.exp(Expr.sub(Expr.load(scores, i), Expr.var("max_val")))),
            Node.assign("sum", Expr.add(Expr.var("sum"), Expr.var("exp_val"))),
            Node.block(insert_top_k_candidate(k, Expr.var("exp_val"), i)),
        ]),
    ]
    body += copy_top_k_indices_and_normalized_weights(out_indices, out_weights, k, Expr.var("sum"))
    return Program.wrapped(
        [ro_decl(scores, 0, n), out_decl(out_indices, 1, k, DataType.U32), rw_decl(out_weights, 2, k),
         rw_decl(BEST_VALS, 3, k), rw_decl(BEST_IDXS, 4, k, DataType.U32)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 8, k: int = 2) -> Program:
    return softmax_top_k("scores", "indices", "weights", n, k)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
                          bytes(8), bytes(8), bytes(8)]],  # weights, best_vals, best_idxs (initial contents)
    # vyre computes these on the host in f32: e_i = (s_i - 8).exp(), sum = e.iter().sum() (in order);
    # indices [7, 6]; weights [e7/sum, e6/sum] = [0.6323327, 0.23262219]; best_vals [1.0, 0.36787945]
    expected_output=lambda: [[pack_u32_slice([7, 6]), f32_bits([0x3F21E08E, 0x3E6E3483]),
                              f32_bits([0x3F800000, 0x3EBC5AB2]), pack_u32_slice([7, 6])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 15, k=8),
)
