"""Oracle of vyre_vk/ops/security/path_reconstruct: follow parent pointers from the target in
Python, one node at a time, recording each node visited, until a node is its own parent (a root;
a node with no entry in ``parent`` counts as one) or ``max_depth`` nodes are recorded; the rest of
``path_out`` is zero. Exact."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .u32_edges import edgy_u32

NODES = 200


def random_forest(rng, n: int) -> np.ndarray:
    """Parent pointers over `n` nodes: long chains (each node's parent an earlier node in a
    random order), some roots, some pointers past the end, and a few back edges making cycles."""
    order = rng.permutation(n)
    parent = np.empty(n, np.uint64)
    for k, v in enumerate(order):
        r = rng.random()
        if k == 0 or r < 0.01:
            parent[v] = v                                    # root
        elif r < 0.02:
            parent[v] = rng.choice([n, n + 5, 0xFFFFFFFF])   # past the end: acts as a root next step
        elif r < 0.04:
            parent[v] = order[rng.integers(k, n)]            # forward edge: may close a cycle
        else:
            parent[v] = order[k - 1] if rng.random() < 0.9 else order[rng.integers(0, k)]
    return parent.astype(U32)


def walk(parent, target: int, max_depth: int) -> list:
    path, current = [], int(target)
    while len(path) < max_depth:
        path.append(current)
        nxt = int(parent[current]) if current < len(parent) else current
        if nxt == current:
            break
        current = nxt
    return path


@oracle("vyre-libs::security::path_reconstruct", {"max_depth": 64}, 0,
        "pointer chasing in Python: exact", repeats=6)
def _path_reconstruct():
    def inputs(rng, p):
        parent = random_forest(rng, NODES)
        target = rng.integers(0, NODES) if rng.random() < 0.9 else NODES + 3
        return {"parent": parent, "target": np.asarray([target], U32),
                "path_out": edgy_u32(rng, p["max_depth"]), "path_len": edgy_u32(rng, 1)}

    def numpy(ins, p):
        path = walk(ins["parent"], int(ins["target"][0]), p["max_depth"])
        out = np.zeros(p["max_depth"], U32)
        out[:len(path)] = path
        return {"path_out": out, "path_len": np.asarray([len(path)], U32)}
    return inputs, numpy
