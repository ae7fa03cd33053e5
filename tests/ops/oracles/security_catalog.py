"""Oracles of vyre_vk/ops/security/catalog (the twelve NodeSet ops of vyre-libs' security catalog).

Written as set algebra over node membership, not as word arithmetic: each bitset is unpacked
into one bool per node (node v = bit v % 32 of word v / 32, NumPy's little bit order), the
predicate is evaluated on the nodes, and the result packed back. The kernels compute whole words,
so the nodes past node_count in the last word follow the same set rule (they are part of the word).
sink_intersection's count is |query ∩ sink| over all those nodes. Results are exact.
"""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32

P = "vyre-libs::security::"
INTERSECTIONS = ("auth_check_dominates", "buffer_size_check", "lock_dominates", "path_canonical",
                 "sanitizer_dominates", "sql_param_bound", "xss_escape")
SUBTRACTIONS = ("format_string_check", "taint_kill", "unchecked_return")
# 10000 nodes = 313 words: two workgroups of 256 lanes, a partial last word.
NODES = 10000


def words_of(node_count: int) -> int:
    return -(-node_count // 32)


def members(words: np.ndarray) -> np.ndarray:
    """One bool per node of a packed NodeSet."""
    return np.unpackbits(np.asarray(words, U32).view(np.uint8), bitorder="little").astype(bool)


def nodeset(member: np.ndarray) -> np.ndarray:
    """The packed NodeSet of a per-node bool array (length a multiple of 32)."""
    return np.packbits(np.asarray(member, bool), bitorder="little").view(U32).copy()


def _register_pair(op: str, subtract: bool) -> None:
    @oracle(P + op, {"node_count": NODES}, 0, "set algebra on unpacked node membership: exact")
    def _():
        def inputs(rng, p):
            w = words_of(p["node_count"])
            return {"a": edgy_u32(rng, w), "b": edgy_u32(rng, w), "out": edgy_u32(rng, w)}

        def numpy(ins, p):
            a, b = members(ins["a"]), members(ins["b"])
            return {"out": nodeset(a & ~b if subtract else a & b)}
        return inputs, numpy


for _op in INTERSECTIONS:
    _register_pair(_op, False)
for _op in SUBTRACTIONS:
    _register_pair(_op, True)


@oracle(P + "integer_overflow_arith", {"node_count": NODES}, 0,
        "set algebra on node membership (arith ∩ reach, minus guarded): exact")
def _integer_overflow_arith():
    def inputs(rng, p):
        w = words_of(p["node_count"])
        return {k: edgy_u32(rng, w) for k in ("arith", "reach", "guards", "scratch")}

    def numpy(ins, p):
        attacker_arith = members(ins["arith"]) & members(ins["reach"])
        return {"scratch": nodeset(attacker_arith), "out": nodeset(attacker_arith & ~members(ins["guards"]))}
    return inputs, numpy


@oracle(P + "sink_intersection", {"node_count": NODES}, 0,
        "set intersection and its cardinality (count of member nodes): exact")
def _sink_intersection():
    def inputs(rng, p):
        w = words_of(p["node_count"])
        return {k: edgy_u32(rng, w) for k in ("a", "b", "scratch")}

    def numpy(ins, p):
        both = members(ins["a"]) & members(ins["b"])
        return {"scratch": nodeset(both), "out": np.asarray([np.count_nonzero(both)], U32)}
    return inputs, numpy
