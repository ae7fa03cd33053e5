"""Sequential top-k slot helpers shared by `nn::top_k` and `nn::softmax_top_k`
(vyre-libs/src/nn/moe/topk_selection.rs). Slots ``best_vals`` (f32) / ``best_idxs`` (u32) hold the
k best (value, index) pairs in descending order; a candidate is inserted at the first slot it
beats strictly (``>``), so ties keep the earlier index, and the tail shifts down by one.

Example::

    >>> len(init_top_k_slots(3)), len(insert_top_k_candidate(3, Expr.var("v"), Expr.var("i")))
    (6, 3)
"""
from __future__ import annotations

from ....ir import Expr, Node

BEST_VALS = "best_vals"
BEST_IDXS = "best_idxs"
NEG_INF = float("-inf")


def init_top_k_slots(k: int) -> list:
    body = []
    for slot in range(k):
        body.append(Node.store(BEST_VALS, Expr.u32(slot), Expr.f32(NEG_INF)))
        body.append(Node.store(BEST_IDXS, Expr.u32(slot), Expr.u32(0)))
    return body


def insert_top_k_candidate(k: int, value: Expr, index: Expr) -> list:
    if k == 0:
        return []
    pos, rev = Expr.var("insert_pos"), Expr.var("rev")
    return [
        Node.let_bind("insert_pos", Expr.u32(k)),
        Node.loop_for("j", Expr.u32(0), Expr.u32(k), [
            Node.if_then(Expr.and_(Expr.eq(pos, Expr.u32(k)), Expr.gt(value, Expr.load(BEST_VALS, Expr.var("j")))),
                         [Node.assign("insert_pos", Expr.var("j"))])]),
        Node.if_then(Expr.lt(pos, Expr.u32(k)), [
            Node.loop_for("shift_j", Expr.u32(0), Expr.u32(k), [
                Node.let_bind("rev", Expr.sub(Expr.u32(k - 1), Expr.var("shift_j"))),
                Node.if_then(Expr.and_(Expr.ge(rev, pos), Expr.lt(rev, Expr.u32(k - 1))), [
                    Node.store(BEST_VALS, Expr.add(rev, Expr.u32(1)), Expr.load(BEST_VALS, rev)),
                    Node.store(BEST_IDXS, Expr.add(rev, Expr.u32(1)), Expr.load(BEST_IDXS, rev)),
                ]),
            ]),
            Node.store(BEST_VALS, pos, value),
            Node.store(BEST_IDXS, pos, index),
        ]),
    ]


def copy_top_k_indices(output_indices: str, k: int) -> list:
    return [Node.store(output_indices, Expr.u32(s), Expr.load(BEST_IDXS, Expr.u32(s))) for s in range(k)]


def copy_top_k_indices_and_normalized_weights(out_indices: str, out_weights: str, k: int,
                                               denominator: Expr) -> list:
    body = []
    for s in range(k):
        body.append(Node.store(out_weights, Expr.u32(s), Expr.div(Expr.load(BEST_VALS, Expr.u32(s)), denominator)))
        body.append(Node.store(out_indices, Expr.u32(s), Expr.load(BEST_IDXS, Expr.u32(s))))
    return body
