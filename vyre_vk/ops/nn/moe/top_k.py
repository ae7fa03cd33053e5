"""`vyre-libs::nn::top_k`: indices of the k largest of ``input`` (f32, n), by sequential
insertion into k descending slots (port of vyre-libs/src/nn/moe/top_k.rs).

Buffers: input ro f32 (0, n), output_indices u32 output (1, k), ``best_vals`` plain ReadWrite f32
(2, k) and ``best_idxs`` plain ReadWrite u32 (3, k) (scratch that is also a result); workgroup
[1,1,1]. There is no invocation guard: as in vyre, each of the k dispatched invocations runs the
whole selection on the shared slots (the reference runs them one after another; on a GPU they
write the same values, but concurrently; see the report/tests).

Example::

    >>> [b.name for b in top_k("input", "output", 8, 2).buffers]
    ['input', 'output', 'best_vals', 'best_idxs']
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from .topk_selection import BEST_IDXS, BEST_VALS, copy_top_k_indices, init_top_k_slots, insert_top_k_candidate
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::nn::top_k"
# 4 ULP: no arithmetic at all (values are copied; best_vals is f32, so vyre's elementary budget).
ULP = 4


def top_k(input: str, output_indices: str, n: int, k: int) -> Program:
    if k == 0:
        raise OpParamError("Fix: top_k requires k > 0 so the selection scratch has at least one slot.")
    body = init_top_k_slots(k)
    body.append(Node.loop_for("i", Expr.u32(0), Expr.u32(n), [
        Node.let_bind("val", Expr.load(input, Expr.var("i"))),
        Node.let_bind("idx", Expr.var("i")),
        Node.block(insert_top_k_candidate(k, Expr.var("val"), Expr.var("idx"))),
    ]))
    body.extend(copy_top_k_indices(output_indices, k))
    return Program.wrapped(
        [ro_decl(input, 0, n), out_decl(output_indices, 1, k, DataType.U32), rw_decl(BEST_VALS, 2, k),
         rw_decl(BEST_IDXS, 3, k, DataType.U32)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 8, k: int = 2) -> Program:
    return top_k("input", "output", n, k)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
                          bytes(8),    # best_vals (initial contents)
                          bytes(8)]],  # best_idxs (initial contents)
    # output_indices, best_vals, best_idxs
    expected_output=lambda: [[pack_u32_slice([7, 6]), pack_f32_slice([8.0, 7.0]), pack_u32_slice([7, 6])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 15, k=8),
)
