"""Oracles of vyre_vk/ops/matching/hit_buffer (emit_hit, compact_hits), exact, from the hit-buffer
contract: the first ``min(lanes, capacity)`` hits as 4-word tuples (the rest of ``out_hits`` zero),
the cursor, the dropped count (written only on overflow, else the input word stays), and the
clamped live length.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::matching::compact_hits"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> spec.numpy(ins, spec.params)["hit_buffer_live_length"].shape
    (1,)
"""
from __future__ import annotations

import numpy as np

from .core import U32, oracle, ru32

FIELDS = ("rule_id", "file_id", "span_start", "span_len")


def emit_model(ins: dict, max_hits: int) -> dict:
    lanes = len(ins["rule_id"])
    live = min(lanes, max_hits)
    hits = np.zeros((max_hits, 4), U32)
    for k, name in enumerate(FIELDS):
        hits[:live, k] = ins[name][:live]
    # the dropped count is written only on overflow; otherwise the ReadWrite word keeps its input
    overflow = ins["hit_buffer_overflow_count"] if lanes <= max_hits else [lanes - max_hits]
    return {"out_hits": hits.reshape(-1), "out_cursor": np.asarray([live], U32),
            "hit_buffer_overflow_count": np.asarray(overflow, U32)}


@oracle("vyre-libs::matching::emit_hit", {"lane_count": 100, "max_hits": 80}, 0,
        "hit tuples in lane order, cursor and overflow count: exact")
def _():
    def inputs(rng, p):
        ins = {name: ru32(rng, p["lane_count"]) for name in FIELDS}
        ins["out_cursor"] = ru32(rng, 1)
        ins["hit_buffer_overflow_count"] = ru32(rng, 1)
        return ins
    return inputs, lambda ins, p: emit_model(ins, p["max_hits"])


@oracle("vyre-libs::matching::compact_hits", {"max_capacity": 50}, 0,
        "min(cursor, max_capacity, hit slots): exact", repeats=4)
def _():
    def inputs(rng, p):
        cursor = rng.integers(0, 2 * p["max_capacity"] + 1) if rng.random() < 0.9 else 0xFFFFFFFF
        return {"out_hits": ru32(rng, 4 * p["max_capacity"]), "out_cursor": np.asarray([cursor], U32)}
    return inputs, lambda ins, p: {"hit_buffer_live_length": np.asarray(
        [min(int(ins["out_cursor"][0]), p["max_capacity"], len(ins["out_hits"]) // 4)], U32)}
