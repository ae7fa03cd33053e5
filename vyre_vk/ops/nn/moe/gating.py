"""`vyre-libs::nn::moe_gate` (+ its two stage programs `::softmax_stats` and `::weight_write`):
mixture-of-experts routing, the top-k experts of a score vector and their softmax weights
(port of vyre-libs/src/nn/moe/gating.rs).

Invocation 0 only (``if gid.x == 0``), three child Regions of nn::moe_gate:
1. ``moe_gate::softmax_stats``: copy scores to the workgroup scratch while ``max_score =
   max(max_score, s)`` from ``f32::MIN``; ``sum_exp = sum_i exp(s_i - max_score)`` (index order);
   ``stats = [max_score, sum_exp]``.
2. ``vyre-primitives::nn::quest_select_top_k`` (sentinel ``f32::MIN``): k times pick the first
   strict maximum of the scratch, write its index to ``indices[j]`` and overwrite it by the sentinel.
3. ``moe_gate::weight_write``: ``weights[j] = exp(scores[indices[j]] - max_score) / sum_exp``.

moe_gate buffers: input_scores ro f32 (0, E), output_indices plain ReadWrite u32 (1, k),
output_weights f32 output (2, k), workgroup ``__moe_gate_scores_scratch`` (f32, E) and
``__moe_gate_stats`` (f32, 2); workgroup [1,1,1].

Example::

    >>> [b.name for b in moe_gate("scores", "indices", "weights", 8, 2).buffers][3:]
    ['__moe_gate_scores_scratch', '__moe_gate_stats']
"""
from __future__ import annotations

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ...builder import out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from ..activation.unary import f32_bits

OP_ID = "vyre-libs::nn::moe_gate"
SOFTMAX_STATS_OP_ID = "vyre-libs::nn::moe_gate::softmax_stats"
WEIGHT_WRITE_OP_ID = "vyre-libs::nn::moe_gate::weight_write"
QUEST_SELECT_TOP_K_OP_ID = "vyre-primitives::nn::quest_select_top_k"
SCORES_SCRATCH = "__moe_gate_scores_scratch"
STATS_SCRATCH = "__moe_gate_stats"
F32_MIN = -3.4028234663852886e38  # f32::MIN (the most negative finite f32)
# 128 ULP: every program here uses Exp (vyre's transcendental budget; no explicit window).
ULP = 128


def quest_select_top_k_body(scores: str, io_queue: str, num_pages: int, k: int, sentinel: float) -> list:
    """vyre-primitives/src/nn/quest_paging_passes.rs: k selection passes over ``scores``."""
    return [Node.loop_for("j", Expr.u32(0), Expr.u32(k), [
        Node.let_bind("best_idx", Expr.u32(0)),
        Node.let_bind("best_score", Expr.f32(sentinel)),
        Node.loop_for("q", Expr.u32(0), Expr.u32(num_pages), [
            Node.let_bind("cand", Expr.load(scores, Expr.var("q"))),
            Node.if_then(Expr.gt(Expr.var("cand"), Expr.var("best_score")), [
                Node.assign("best_score", Expr.var("cand")),
                Node.assign("best_idx", Expr.var("q")),
            ]),
        ]),
        Node.store(io_queue, Expr.var("j"), Expr.var("best_idx")),
        Node.store(scores, Expr.var("best_idx"), Expr.f32(sentinel)),
    ])]


def softmax_stats_body(input_scores: str, num_experts: int) -> list:
    i = Expr.var("i")
    return [
        Node.let_bind("max_score", Expr.f32(F32_MIN)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(num_experts), [
            Node.let_bind("score", Expr.load(input_scores, i)),
            Node.store(SCORES_SCRATCH, i, Expr.var("score")),
            Node.assign("max_score", Expr.max(Expr.var("max_score"), Expr.var("score"))),
        ]),
        Node.let_bind("sum_exp", Expr.f32(0.0)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(num_experts), [
            Node.assign("sum_exp", Expr.add(Expr.var("sum_exp"),
                                            Expr.exp(Expr.sub(Expr.load(input_scores, i), Expr.var("max_score")))))]),
        Node.store(STATS_SCRATCH, Expr.u32(0), Expr.var("max_score")),
        Node.store(STATS_SCRATCH, Expr.u32(1), Expr.var("sum_exp")),
    ]


def weight_write_body(input_scores: str, output_indices: str, output_weights: str, k: int) -> list:
    j = Expr.var("j")
    return [
        Node.let_bind("max_score", Expr.load(STATS_SCRATCH, Expr.u32(0))),
        Node.let_bind("sum_exp", Expr.load(STATS_SCRATCH, Expr.u32(1))),
        Node.loop_for("j", Expr.u32(0), Expr.u32(k), [
            Node.let_bind("best_idx", Expr.load(output_indices, j)),
            Node.let_bind("best_score", Expr.load(input_scores, Expr.var("best_idx"))),
            Node.store(output_weights, j, Expr.div(Expr.exp(Expr.sub(Expr.var("best_score"), Expr.var("max_score"))),
                                                   Expr.var("sum_exp"))),
        ]),
    ]


def _first_invocation(body: list) -> Node:
    return Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), body)


def moe_gate(input_scores: str, output_indices: str, output_weights: str, num_experts: int, k: int) -> Program:
    body = [_first_invocation([
        wrap_child(SOFTMAX_STATS_OP_ID, OP_ID, softmax_stats_body(input_scores, num_experts)),
        wrap_child(QUEST_SELECT_TOP_K_OP_ID, OP_ID,
                   quest_select_top_k_body(SCORES_SCRATCH, output_indices, num_experts, k, F32_MIN)),
        wrap_child(WEIGHT_WRITE_OP_ID, OP_ID, weight_write_body(input_scores, output_indices, output_weights, k)),
    ])]
    return Program.wrapped(
        [ro_decl(input_scores, 0, num_experts), rw_decl(output_indices, 1, k, DataType.U32),
         out_decl(output_weights, 2, k), BufferDecl.workgroup(SCORES_SCRATCH, num_experts, DataType.F32),
         BufferDecl.workgroup(STATS_SCRATCH, 2, DataType.F32)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def softmax_stats_program(num_experts: int = 8) -> Program:
    """The first stage alone, the scratch buffers as plain ReadWrite storage (vyre's fixture program)."""
    return Program.wrapped(
        [ro_decl("scores", 0, num_experts), rw_decl(SCORES_SCRATCH, 1, num_experts), rw_decl(STATS_SCRATCH, 2, 2)],
        (1, 1, 1),
        [wrap_anonymous(SOFTMAX_STATS_OP_ID, [_first_invocation(softmax_stats_body("scores", num_experts))])],
    )


def weight_write_program(num_experts: int = 8, k: int = 2) -> Program:
    """The last stage alone (vyre's fixture program)."""
    return Program.wrapped(
        [ro_decl("scores", 0, num_experts), ro_decl("indices", 1, k, DataType.U32), ro_decl(STATS_SCRATCH, 2, 2),
         out_decl("weights", 3, k)],
        (1, 1, 1),
        [wrap_anonymous(WEIGHT_WRITE_OP_ID, [_first_invocation(
            weight_write_body("scores", "indices", "weights", k))])],
    )


def _build(num_experts: int = 8, k: int = 2) -> Program:
    return moe_gate("scores", "indices", "weights", num_experts, k)


SCORES = [0.5, 1.0, 0.1, 2.0, 0.3, 3.0, 0.2, 0.4]
# vyre computes these on the host in f32 with libm::expf: max = 3.0, sum_exp = sum of
# expf(s - 3) in index order = 1.842612 (0x3FEBDAB6); weights [e5/sum, e3/sum] = [0.54270786, 0.19965106]
SUM_EXP_BITS = 0x3FEBDAB6
WEIGHT_BITS = [0x3F0AEEE7, 0x3E4C7154]

ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice(SCORES), bytes(8), bytes(8)]],  # legacy form (weights placeholder)
    expected_output=lambda: [[pack_u32_slice([5, 3]), f32_bits(WEIGHT_BITS)]],
    category="nn", ulp=ULP,
    bench=dict(num_experts=256, k=8),
)

SOFTMAX_STATS_ENTRY = register_op(
    SOFTMAX_STATS_OP_ID, softmax_stats_program,
    test_inputs=lambda: [[pack_f32_slice(SCORES), pack_f32_slice([0.0] * 8), pack_f32_slice([0.0] * 2)]],
    expected_output=lambda: [[pack_f32_slice(SCORES), pack_f32_slice([3.0]) + f32_bits([SUM_EXP_BITS])]],
    category="nn", ulp=ULP,
    bench=dict(num_experts=256),
)

WEIGHT_WRITE_ENTRY = register_op(
    WEIGHT_WRITE_OP_ID, weight_write_program,
    test_inputs=lambda: [[pack_f32_slice(SCORES), pack_u32_slice([5, 3]),
                          pack_f32_slice([3.0]) + f32_bits([SUM_EXP_BITS]), pack_f32_slice([0.0] * 2)]],
    expected_output=lambda: [[f32_bits(WEIGHT_BITS)]],
    category="nn", ulp=ULP,
    bench=dict(num_experts=256, k=8),
)
