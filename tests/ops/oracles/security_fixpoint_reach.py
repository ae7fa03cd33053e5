"""Oracles of vyre_vk/ops/security/fixpoint_reach (flows_to, taint_flow, dominator_tree,
bounded_by_comparison, sanitized_by): ONE frontier step over a random CSR graph, written from the
definition with Python sets (not from the IR). Graph generators and the step functions are shared
with tests/ops/convergence, which checks the converged fixpoints."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle

P = "vyre-libs::security::"
ASSIGNMENT, CALL_ARG, RETURN, PHI, DOMINANCE = 1, 2, 4, 8, 16
ALIAS, MEM_STORE, MEM_LOAD, MUT_REF, CONTROL = 32, 64, 128, 256, 512
BLOCK_MEMBER = 1 << 25
# vyre-libs security/flows_to.rs: the dataflow kinds.
DATAFLOW = ASSIGNMENT | CALL_ARG | RETURN | PHI | ALIAS | MEM_STORE | MEM_LOAD | MUT_REF
KIND_CHOICES = np.array([ASSIGNMENT, CALL_ARG, PHI, DOMINANCE, CONTROL, BLOCK_MEMBER, MUT_REF | CONTROL,
                         DOMINANCE | ASSIGNMENT, 1 << 30, 0], dtype=U32)


def words(n: int) -> int:
    return -(-n // 32)


def random_graph(rng, n: int, e: int, kinds=KIND_CHOICES, spill: int = 3) -> dict:
    """A CSR graph: sorted offsets (n + 1, the last = e), targets in [0, n + spill) (some past the
    last node, which every step skips), kinds drawn from `kinds`."""
    cuts = np.sort(rng.integers(0, e + 1, n - 1))
    offsets = np.concatenate([[0], cuts, [e]]).astype(U32)
    return {"pg_nodes": rng.integers(0, 9, n).astype(U32), "pg_edge_offsets": offsets,
            "pg_edge_targets": rng.integers(0, n + spill, max(e, 1)).astype(U32),
            "pg_edge_kind_mask": rng.choice(kinds, max(e, 1)).astype(U32),
            "pg_node_tags": rng.integers(0, 4, n).astype(U32)}


def to_set(bits: np.ndarray, n: int) -> set:
    return {v for v in range(n) if (int(bits[v >> 5]) >> (v & 31)) & 1}


def to_bits(nodes, n: int, base=None) -> np.ndarray:
    out = np.zeros(words(n), U32) if base is None else np.array(base, dtype=U32)
    for v in nodes:
        out[v >> 5] |= U32(1 << (v & 31))
    return out


def edges(g: dict, n: int, mask: int):
    """(src, dst) of every edge whose kind has a bit of `mask`, dst a node (< n)."""
    off, tgt, kind = g["pg_edge_offsets"], g["pg_edge_targets"], g["pg_edge_kind_mask"]
    for src in range(n):
        for e in range(int(off[src]), int(off[src + 1])):
            if int(kind[e]) & mask and int(tgt[e]) < n:
                yield src, int(tgt[e])


def forward(g: dict, n: int, frontier: set, mask: int) -> set:
    return {d for s, d in edges(g, n, mask) if s in frontier}


def backward(g: dict, n: int, frontier: set, mask: int) -> set:
    return {s for s, d in edges(g, n, mask) if d in frontier}


def _inputs(rng, p, extra=()):
    n = p["node_count"]
    ins = random_graph(rng, n, p["edge_count"])
    for name in ("fin", *extra, "fout"):
        ins[name] = rng.integers(0, 2**32, words(n), dtype=np.uint64).astype(U32)
    return ins


def _step(forward_step: bool, mask: int):
    def numpy(ins, p):
        n = p["node_count"]
        step = (forward if forward_step else backward)(ins, n, to_set(ins["fin"], n), mask)
        return {"fout": to_bits(step, n, ins["fout"])}
    return numpy


_PARAMS = {"node_count": 70, "edge_count": 300}

for _op, _fwd, _mask in (("flows_to", True, DATAFLOW), ("taint_flow", True, DATAFLOW),
                         ("dominator_tree", False, DOMINANCE | BLOCK_MEMBER),
                         ("bounded_by_comparison", False, DOMINANCE)):
    def _register(op=_op, fwd=_fwd, mask=_mask):
        @oracle(P + op, _PARAMS, 0, "set-based CSR step: exact")
        def _():
            return _inputs, _step(fwd, mask)
    _register()


@oracle(P + "sanitized_by", _PARAMS, 0, "set-based CSR step from fin minus sanitizers: exact")
def _():
    def numpy(ins, p):
        n = p["node_count"]
        clean = (ins["fin"] & ~ins["san"]).astype(U32)
        return {"__sanitized_by_clean__fin": clean,
                "fout": to_bits(forward(ins, n, to_set(clean, n), DATAFLOW), n, ins["fout"])}
    def inputs(rng, p):
        return {**_inputs(rng, p, ("san",)), "__sanitized_by_clean__fin": np.zeros(words(p["node_count"]), U32)}
    return inputs, numpy
