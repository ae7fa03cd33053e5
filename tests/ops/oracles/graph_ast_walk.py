"""Oracles of vyre_vk/ops/graph/ast_walk (ast_walk_preorder, ast_walk_postorder), exact: a
recursive Python walk over the children lists read from the node table (first_child, then the
next_sibling chain), on random trees with shuffled node numbering (root 0); the walk's indices fill
``out`` from slot 0 and the remaining slots keep their random input words.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::graph::ast_walk_preorder"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> int(spec.numpy(ins, spec.params)["out"][0])
    0
"""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.graph.ast_walk import NODE_STRIDE_U32, SENTINEL, pack_nodes

from .core import U32, oracle, ru32


def random_tree(rng: np.random.Generator, node_count: int) -> list[tuple[int, int, int]]:
    """(parent, first_child, next_sibling) rows of a random tree rooted at node 0."""
    label = np.concatenate([[0], 1 + rng.permutation(node_count - 1)]) if node_count else np.zeros(0, int)
    parent_of = [None] + [int(rng.integers(0, k)) for k in range(1, node_count)]  # in creation order
    children: list[list[int]] = [[] for _ in range(node_count)]
    for k in range(1, node_count):
        children[int(label[parent_of[k]])].append(int(label[k]))
    rows = [[SENTINEL, SENTINEL, SENTINEL] for _ in range(node_count)]
    for p, kids in enumerate(children):
        rng.shuffle(kids)
        if kids:
            rows[p][1] = kids[0]
        for a, b in zip(kids, kids[1:] + [SENTINEL]):
            rows[a][0], rows[a][2] = p, b
    return [tuple(r) for r in rows]


def children_of(nodes: np.ndarray, n: int) -> list[int]:
    kids, c = [], int(nodes[n * NODE_STRIDE_U32 + 2])
    while c != SENTINEL:
        kids.append(c)
        c = int(nodes[c * NODE_STRIDE_U32 + 3])
    return kids


def walk(nodes: np.ndarray, n: int, post: bool) -> list[int]:
    inner = [x for c in children_of(nodes, n) for x in walk(nodes, c, post)]
    return inner + [n] if post else [n] + inner


def walk_out(ins: dict, node_count: int, post: bool) -> np.ndarray:
    order = walk(ins["nodes"], 0, post) if node_count else []
    out = np.asarray(ins["out"], U32).copy()
    k = min(len(order), len(out))
    out[:k] = order[:k]
    return out


def _inputs(rng, p):
    return {"nodes": np.asarray(pack_nodes(random_tree(rng, p["node_count"])), U32), "out": ru32(rng, p["out_cap"])}


@oracle("vyre-libs::graph::ast_walk_preorder", {"node_count": 64, "out_cap": 72}, 0, "recursive preorder walk: exact")
def _():
    return _inputs, lambda ins, p: {"out": walk_out(ins, p["node_count"], post=False)}


@oracle("vyre-libs::graph::ast_walk_postorder", {"node_count": 64, "out_cap": 72}, 0, "recursive postorder walk: exact")
def _():
    return _inputs, lambda ins, p: {"out": walk_out(ins, p["node_count"], post=True)}
