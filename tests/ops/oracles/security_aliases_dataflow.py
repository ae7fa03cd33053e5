"""Oracle of vyre_vk/ops/security/aliases_dataflow: one aliasing step written as set algebra on
node membership and an adjacency walk in Python:

    reach_x' = reach_x ∪ x ∪ succ(reach_x ∪ x),   hop_x = succ(reach_x ∪ x)   (same for y)
    x_in_y = reach_y' ∩ x,  y_in_x = reach_x' ∩ y,  out' = out ∪ x_in_y ∪ y_in_x

where succ(S) = {t < node_count : some edge s -> t with s ∈ S, s < node_count, whose kind mask
meets ASSIGNMENT | PHI | ALIAS | MUT_REF}. Nodes past node_count in the last word follow the set
rules of the word-wise arms (they have no edges). Exact."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .security_catalog import members, nodeset, words_of
from .u32_edges import edgy_u32

ALIAS_KINDS = (1 << 0) | (1 << 3) | (1 << 5) | (1 << 8)
EDGE_KINDS = 10  # ASSIGNMENT .. CONTROL


def random_graph(rng, n: int, m: int) -> dict:
    """A CSR graph of `n` nodes and `m` edges: random out-degrees, targets mostly in range (a few
    past the end, which the kernel drops), each edge carrying 1..3 random kind bits."""
    owners = np.sort(rng.integers(0, n, m))
    offsets = np.searchsorted(owners, np.arange(n + 1)).astype(U32)
    targets = rng.integers(0, n, m).astype(U32)
    far = rng.random(m) < 0.03
    targets[far] = rng.choice(np.asarray([n, n + 31, 0xFFFFFFFF], U32), int(far.sum()))
    kinds = np.zeros(m, U32)
    for _ in range(3):
        kinds |= np.where(rng.random(m) < 0.45, U32(1) << rng.integers(0, EDGE_KINDS, m).astype(U32), U32(0))
    return {"pg_nodes": edgy_u32(rng, n), "pg_edge_offsets": offsets, "pg_edge_targets": targets,
            "pg_edge_kind_mask": kinds, "pg_node_tags": edgy_u32(rng, n)}


def sparse_set(rng, words: int, density: float) -> np.ndarray:
    return nodeset(rng.random(words * 32) < density)


def successors(ins: dict, n: int, frontier: np.ndarray) -> np.ndarray:
    out = np.zeros_like(frontier)
    off, tgt, kind = ins["pg_edge_offsets"], ins["pg_edge_targets"], ins["pg_edge_kind_mask"]
    for s in np.flatnonzero(frontier[:n]):
        for e in range(int(off[s]), int(off[s + 1])):
            if int(kind[e]) & ALIAS_KINDS and int(tgt[e]) < n:
                out[int(tgt[e])] = True
    return out


@oracle("vyre-libs::security::aliases_dataflow", {"node_count": 200, "edge_count": 600}, 0,
        "set algebra and a Python adjacency walk: exact", repeats=2)
def _aliases_dataflow():
    def inputs(rng, p):
        n, w = p["node_count"], words_of(p["node_count"])
        ins = random_graph(rng, n, p["edge_count"])
        ins.update(x=sparse_set(rng, w, 0.03), y=sparse_set(rng, w, 0.03), reach_x=sparse_set(rng, w, 0.05),
                   reach_y=sparse_set(rng, w, 0.05), out=sparse_set(rng, w, 0.02))
        # Scratch the op overwrites: random garbage must not leak into the results.
        ins.update({k: edgy_u32(rng, w) for k in ("hop_x", "hop_y", "x_in_y", "y_in_x")})
        return ins

    def numpy(ins, p):
        n = p["node_count"]
        x, y = members(ins["x"]), members(ins["y"])
        seed_x, seed_y = members(ins["reach_x"]) | x, members(ins["reach_y"]) | y
        hop_x, hop_y = successors(ins, n, seed_x), successors(ins, n, seed_y)
        reach_x, reach_y = seed_x | hop_x, seed_y | hop_y
        x_in_y, y_in_x = reach_y & x, reach_x & y
        return {"reach_x": nodeset(reach_x), "reach_y": nodeset(reach_y), "hop_x": nodeset(hop_x),
                "hop_y": nodeset(hop_y), "x_in_y": nodeset(x_in_y), "y_in_x": nodeset(y_in_x),
                "out": nodeset(members(ins["out"]) | x_in_y | y_in_x)}
    return inputs, numpy
