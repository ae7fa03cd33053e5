"""Structured bench inputs of the fixpoint security ops (vyre_vk/ops/security/fixpoint_*.py).

Their CSR offsets are loop bounds: the generic uniform-u32 inputs would make every invocation loop
up to 2^32 times. Importing this module from op_inputs.py (after ``override`` is defined) registers
a real graph for each: sorted offsets ending at edge_count, targets below node_count, edge kinds
from the dataflow/dominance bits, frontiers of a few nodes.

    >>> import numpy as np
    >>> ins = _graph(np.random.default_rng(0), {"node_count": 8, "edge_count": 20}, {})
    >>> int(ins["pg_edge_offsets"][-1]), bool(ins["pg_edge_targets"].max() < 8)
    (20, True)
"""
from __future__ import annotations

import numpy as np

from op_inputs import override

P = "vyre-libs::security::"
# ASSIGNMENT, CALL_ARG, PHI, DOMINANCE, CONTROL, BLOCK_MEMBER (vyre-primitives predicate::edge_kind)
_KINDS = np.array([1, 2, 8, 16, 512, 1 << 25], dtype=np.uint32)


def _bits(rng, n: int, k: int) -> np.ndarray:
    out = np.zeros(-(-n // 32), np.uint32)
    for v in rng.choice(n, min(k, n), replace=False):
        out[v >> 5] |= np.uint32(1 << (int(v) & 31))
    return out


def _graph(rng, p, ins):
    n, e = p["node_count"], p["edge_count"]
    cuts = np.sort(rng.integers(0, e + 1, n - 1))
    return {"pg_nodes": np.zeros(n, np.uint32), "pg_node_tags": np.zeros(n, np.uint32),
            "pg_edge_offsets": np.concatenate([[0], cuts, [e]]).astype(np.uint32),
            "pg_edge_targets": rng.integers(0, n, max(e, 1), dtype=np.uint32),
            "pg_edge_kind_mask": rng.choice(_KINDS, max(e, 1)).astype(np.uint32)}


def _frontiers(rng, p, ins):
    n = p["node_count"]
    out = _graph(rng, p, ins)
    for name in ("fin", "source", "sink", "label_set", "sanitizer", "san"):
        if name in ins:
            out[name] = _bits(rng, n, 8)
    for name in ("fout", "reach"):
        if name in ins:
            out[name] = out.get("fin", out.get("source")).copy()
    return out


for _op in ("flows_to", "taint_flow", "dominator_tree", "bounded_by_comparison", "sanitized_by",
            "flows_to_to_sink", "taint_pollution", "flows_to_with_sanitizer"):
    override(P + _op)(_frontiers)
