"""`vyre-libs::nn::attention::quest_paging`: Quest KV-cache page selection, score every page by
``query . page_metadata[page]`` and queue the k best pages (port of
vyre-libs/src/nn/attention/quest.rs and vyre-primitives/src/nn/quest_paging_passes.rs).

Buffers: query ro f32 (0, d_head), page_metadata ro f32 (1, num_pages*d_head), scores plain
ReadWrite f32 (2, num_pages), io_queue plain ReadWrite u32 (3, num_pages).

- **direct** (``num_pages <= 8``, ``k <= 4``, ``d_head <= 16``; the registered shape): invocation 0,
  straight-line (each intermediate Let-bound here, where vyre nests the expressions): ``score_p = (((0 + q0 m_p0) + q1 m_p1) + ...)``; k ranks each pick the first
  page not yet picked with a strictly larger score than ``f32::MIN``-started best (index 0 if
  none); ``scores[p] = picked ? f32::MIN : score_p``, ``io_queue[slot] = pick_slot`` (0 past k);
  workgroup [1,1,1].
- **passes** (otherwise): workgroup [256,1,1]; every invocation t zero-fills ``io_queue[l*256+t]``
  and scores pages ``l*256+t`` (straight-line dot when d_head <= 8, else a loop), barrier, then
  invocation 0 runs ``quest_select_top_k`` (k passes: first strict max, queue it, overwrite its
  score by ``f32::MIN``). As in vyre the barrier only orders workgroup 0, so num_pages > 256 (more
  than one workgroup) races the other workgroups' score writes against the selection.

Example::

    >>> quest_paging("q", "meta", "scores", "io", 4, 2, 2).workgroup_size, quest_paging("q", "m", "s", "io", 9, 2, 2).workgroup_size
    ((1, 1, 1), (256, 1, 1))
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import ro_decl, rw_decl
from ...primitives import F32_MIN
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from ..moe.gating import quest_select_top_k_body

OP_ID = "vyre-libs::nn::attention::quest_paging"
SCORE_SENTINEL = F32_MIN
# 4 ULP: elementary ops only (dot products; vyre's program budget).
ULP = 4


def quest_zero_fill_body(io_queue: str, num_pages: int) -> list:
    z = Expr.var("z")
    return [Node.loop_for("loop_idx", Expr.u32(0), Expr.div(Expr.add(Expr.u32(num_pages), Expr.u32(255)), Expr.u32(256)), [
        Node.let_bind("z", Expr.add(Expr.mul(Expr.var("loop_idx"), Expr.u32(256)), Expr.gid_x())),
        Node.if_then(Expr.lt(z, Expr.u32(num_pages)), [Node.store(io_queue, z, Expr.u32(0))]),
    ])]


def quest_score_pages_body(query: str, page_metadata: str, scores: str, num_pages: int, d_head: int) -> list:
    p = Expr.var("p")

    def step(dim: Expr) -> Node:
        return Node.assign("score", Expr.add(Expr.var("score"), Expr.mul(
            Expr.load(query, dim), Expr.load(page_metadata, Expr.add(Expr.mul(p, Expr.u32(d_head)), dim)))))
    if d_head <= 8:
        score_body = [step(Expr.u32(lane)) for lane in range(d_head)]
    else:
        score_body = [Node.loop_for("d", Expr.u32(0), Expr.u32(d_head), [step(Expr.var("d"))])]
    return [Node.loop_for("loop_idx", Expr.u32(0), Expr.div(Expr.add(Expr.u32(num_pages), Expr.u32(255)), Expr.u32(256)), [
        Node.let_bind("p", Expr.add(Expr.mul(Expr.var("loop_idx"), Expr.u32(256)), Expr.gid_x())),
        Node.if_then(Expr.lt(p, Expr.u32(num_pages)),
                     [Node.let_bind("score", Expr.f32(0.0))] + score_body + [Node.store(scores, p, Expr.var("score"))]),
    ])]


def _buffers(query, page_metadata, scores, io_queue, num_pages, d_head):
    return [ro_decl(query, 0, d_head), ro_decl(page_metadata, 1, num_pages * d_head), rw_decl(scores, 2, num_pages),
            rw_decl(io_queue, 3, num_pages, DataType.U32)]


def quest_paging(query: str, page_metadata: str, scores: str, io_queue: str, num_pages: int, k: int,
                 d_head: int) -> Program:
    buffers = _buffers(query, page_metadata, scores, io_queue, num_pages, d_head)
    if num_pages <= 8 and k <= 4 and d_head <= 16:
        # vyre builds these as nested inline expressions (a tree that grows exponentially with
        # num_pages * k); they are pure (read-only loads), so binding each step with a Let
        # computes the same values with a linear-size program.
        nodes, score_exprs = [], []
        for page in range(num_pages):
            score = Expr.f32(0.0)
            for dim in range(d_head):
                score = Expr.add(score, Expr.mul(Expr.load(query, Expr.u32(dim)),
                                                 Expr.load(page_metadata, Expr.u32(page * d_head + dim))))
            nodes.append(Node.let_bind(f"quest_score_{page}", score))
            score_exprs.append(Expr.var(f"quest_score_{page}"))
        selected = []
        for rank in range(k):
            best_score, best_idx = Expr.f32(SCORE_SENTINEL), Expr.u32(0)
            for page in range(num_pages):
                eligible = Expr.bool(True)
                for prior in selected:
                    eligible = Expr.select(eligible, Expr.ne(Expr.u32(page), prior), Expr.bool(False))
                better = f"quest_better_{rank}_{page}"
                nodes.append(Node.let_bind(better, Expr.select(eligible, Expr.gt(score_exprs[page], best_score),
                                                               Expr.bool(False))))
                nodes.append(Node.let_bind(f"quest_best_score_{rank}_{page}",
                                           Expr.select(Expr.var(better), score_exprs[page], best_score)))
                nodes.append(Node.let_bind(f"quest_best_idx_{rank}_{page}",
                                           Expr.select(Expr.var(better), Expr.u32(page), best_idx)))
                best_score = Expr.var(f"quest_best_score_{rank}_{page}")
                best_idx = Expr.var(f"quest_best_idx_{rank}_{page}")
            selected.append(best_idx)
        stores = nodes
        for page in range(num_pages):
            picked = Expr.bool(False)
            for prior in selected:
                picked = Expr.select(picked, Expr.bool(True), Expr.eq(Expr.u32(page), prior))
            stores.append(Node.store(scores, Expr.u32(page),
                                     Expr.select(picked, Expr.f32(SCORE_SENTINEL), score_exprs[page])))
        for slot in range(num_pages):
            stores.append(Node.store(io_queue, Expr.u32(slot), selected[slot] if slot < k else Expr.u32(0)))
        return Program.wrapped(buffers, (1, 1, 1),
                               [wrap_anonymous(OP_ID, [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), stores)])])
    body = [
        Node.block(quest_zero_fill_body(io_queue, num_pages)),
        Node.block(quest_score_pages_body(query, page_metadata, scores, num_pages, d_head)),
        Node.barrier(),
        Node.block([Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)),
                                 quest_select_top_k_body(scores, io_queue, num_pages, k, SCORE_SENTINEL))]),
    ]
    return Program.wrapped(buffers, (256, 1, 1), [wrap_anonymous(OP_ID, body)])


def _build(num_pages: int = 4, k: int = 2, d_head: int = 2) -> Program:
    return quest_paging("q", "meta", "scores", "io", num_pages, k, d_head)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_f32_slice([1.0, 0.0]),                                   # query
                          pack_f32_slice([0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.5, 0.0]),      # page metadata
                          bytes(16), bytes(16)]],                                        # scores, io_queue
    expected_output=lambda: [[pack_f32_slice([0.0, SCORE_SENTINEL, SCORE_SENTINEL, 0.5]),
                              pack_u32_slice([2, 1, 0, 0])]],
    category="nn", ulp=ULP,
    bench=dict(num_pages=4096, k=16, d_head=128),
)
