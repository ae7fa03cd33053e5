"""Fixpoint oracles written from the definitions, independent of the IR and of the drivers:
reachability by breadth-first search, dominators twice (the iterative dataflow equations
Dom(entry) = {entry}, Dom(v) = {v} | intersection of Dom(p) over predecessors p, and
Cooper-Harvey-Kennedy's "A Simple, Fast Dominance Algorithm" on reverse postorder), and random
CFGs / CSR graphs to run them on."""
from __future__ import annotations

from collections import deque

import numpy as np

from ..oracles.security_fixpoint_reach import DOMINANCE, to_bits

U32 = np.uint32


def csr(n: int, edge_list, extra_nodes_tags=None) -> dict:
    """CSR ProgramGraph tables of `edge_list` [(src, dst, kind)], edges grouped by source (stable)."""
    ordered = sorted(edge_list, key=lambda t: t[0])
    counts = np.bincount([s for s, _, _ in ordered], minlength=n)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(U32)
    e = max(len(ordered), 1)
    targets = np.zeros(e, U32)
    kinds = np.zeros(e, U32)
    for k, (_, d, kind) in enumerate(ordered):
        targets[k], kinds[k] = d, kind
    return {"pg_nodes": np.zeros(n, U32), "pg_edge_offsets": offsets, "pg_edge_targets": targets,
            "pg_edge_kind_mask": kinds, "pg_node_tags": np.zeros(n, U32)}


def bfs(n: int, edge_list, mask: int, start, expand=lambda v: True, backward: bool = False) -> set:
    """Every node reachable from `start` (included) along edges whose kind has a bit of `mask`,
    leaving only nodes for which `expand` holds; `backward` walks edges against their direction."""
    adj: dict[int, list[int]] = {}
    for s, d, kind in edge_list:
        if kind & mask and s < n and d < n:
            a, b = (d, s) if backward else (s, d)
            adj.setdefault(a, []).append(b)
    seen = set(start)
    todo = deque(seen)
    while todo:
        v = todo.popleft()
        if not expand(v):
            continue
        for w in adj.get(v, ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def random_cfg(rng, n: int, extra: int) -> list[tuple[int, int]]:
    """A CFG on n nodes, every node reachable from 0 (a random spanning tree), plus `extra` random
    edges (back edges and joins included)."""
    edges = {(int(rng.integers(0, v)), v) for v in range(1, n)}
    edges |= {(int(rng.integers(0, n)), int(rng.integers(1, n))) for _ in range(extra)}
    return sorted(edges)


def dominators_dataflow(n: int, cfg) -> list[set]:
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, d in cfg:
        preds[d].append(s)
    dom = [set(range(n)) for _ in range(n)]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for v in range(1, n):
            new = {v} | set.intersection(*(dom[p] for p in preds[v])) if preds[v] else {v}
            if new != dom[v]:
                dom[v], changed = new, True
    return dom


def idoms_chk(n: int, cfg) -> list[int]:
    """Cooper-Harvey-Kennedy: idom per node (entry's is itself)."""
    succ: list[list[int]] = [[] for _ in range(n)]
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, d in cfg:
        succ[s].append(d)
        preds[d].append(s)
    order, seen, stack = [], {0}, [(0, iter(succ[0]))]
    while stack:  # iterative DFS postorder
        v, it = stack[-1]
        w = next((w for w in it if w not in seen), None)
        if w is None:
            order.append(v)
            stack.pop()
        else:
            seen.add(w)
            stack.append((w, iter(succ[w])))
    rpo = order[::-1]
    num = {v: k for k, v in enumerate(rpo)}
    idom = [-1] * n
    idom[0] = 0

    def intersect(a: int, b: int) -> int:
        while a != b:
            while num[a] > num[b]:
                a = idom[a]
            while num[b] > num[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for v in rpo[1:]:
            done = [p for p in preds[v] if idom[p] != -1]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom[v] != new:
                idom[v], changed = new, True
    return idom


def dom_tree_edges(idom: list[int]) -> list[tuple[int, int, int]]:
    return [(idom[v], v, DOMINANCE) for v in range(1, len(idom))]


def seeded(n: int, nodes) -> dict:
    bits = to_bits(nodes, n)
    return {"fin": bits.copy(), "fout": bits.copy()}
