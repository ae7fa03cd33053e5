"""The contracted security ops run to their fixpoint on random graphs: the reference driver and
the Vulkan driver agree exactly (outputs and round count), and both equal fixpoints computed from
the definitions in graph_oracles (BFS reachability; dominator sets by iterative dataflow and by
Cooper-Harvey-Kennedy, which must agree with each other first)."""
import numpy as np
import pytest

from vyre_vk import ops
from vyre_vk.reference.convergence import converge as ref_converge
from vyre_vk.runtime.convergence import converge as vk_converge

from ..oracles.security_fixpoint_reach import (BLOCK_MEMBER, CONTROL, DATAFLOW, DOMINANCE, KIND_CHOICES, edges,
                                               random_graph, to_bits, to_set, words)
from .graph_oracles import bfs, csr, dom_tree_edges, dominators_dataflow, idoms_chk, random_cfg, seeded

P = "vyre-libs::security::"
#: (op, forward?, edge mask) of the four plain frontier steps.
STEPS = [("flows_to", True, DATAFLOW), ("taint_flow", True, DATAFLOW),
         ("dominator_tree", False, DOMINANCE | BLOCK_MEMBER), ("bounded_by_comparison", False, DOMINANCE)]


def both(device, op, ins, n, e, per_submit=8):
    program = ops.get(P + op).build_with(node_count=n, edge_count=e)
    ref = ref_converge(program, ins, P + op)
    got = vk_converge(device, program, ins, P + op, rounds_per_submit=per_submit)
    assert ref.rounds == got.rounds, op
    for name in ref.outputs:
        np.testing.assert_array_equal(got.outputs[name], ref.outputs[name],
                                      err_msg=f"{op} `{name}`: Vulkan vs reference")
    assert got.readbacks == -(-got.rounds // per_submit)  # one flag word read per submission
    return ref


def edge_list(g, n):
    off, tgt, kind = g["pg_edge_offsets"], g["pg_edge_targets"], g["pg_edge_kind_mask"]
    return [(s, int(tgt[k]), int(kind[k])) for s in range(n) for k in range(int(off[s]), int(off[s + 1]))]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("op,forward,mask", STEPS, ids=[s[0] for s in STEPS])
def test_step_fixpoint_is_reachability(op, forward, mask, seed, vk_device):
    rng = np.random.default_rng(seed)
    n, e = (300, 700) if seed else (45, 60)  # 300 nodes: 10 words, several workgroups
    g = random_graph(rng, n, e, kinds=KIND_CHOICES)
    fin = to_bits(rng.choice(n, 3, replace=False), n)
    fout = fin.copy() if seed != 2 else to_bits(rng.choice(n, 2, replace=False), n)  # an unrelated seed too
    res = both(vk_device, op, {**g, "fin": fin, "fout": fout}, n, e)
    el = edge_list(g, n)
    # Round one gives fout | step(fin); every later round closes it under the step.
    first = to_set(fout, n) | {(d if forward else s) for s, d in edges(g, n, mask)
                               if (s if forward else d) in to_set(fin, n)}
    want = bfs(n, el, mask, first, backward=not forward)
    assert to_set(res.outputs["fout"], n) == want


@pytest.mark.parametrize("seed", [0, 1])
def test_sanitized_by_fixpoint_is_reachability_through_unsanitized_nodes(seed, vk_device):
    rng = np.random.default_rng(10 + seed)
    n, e = (300, 800) if seed else (40, 70)
    g = random_graph(rng, n, e, kinds=KIND_CHOICES)
    start = set(int(v) for v in rng.choice(n, 4, replace=False))
    san = set(int(v) for v in rng.choice(n, n // 6, replace=False))
    ins = {**g, **seeded(n, start), "san": to_bits(san, n), "__sanitized_by_clean__fin": np.zeros(words(n), np.uint32)}
    res = both(vk_device, "sanitized_by", ins, n, e)
    # The least R containing fin with succ(v) in R for every v of R that is not a sanitizer.
    want = bfs(n, edge_list(g, n), DATAFLOW, start, expand=lambda v: v not in san)
    assert to_set(res.outputs["fout"], n) == want
    assert to_set(res.outputs["__sanitized_by_clean__fin"], n) == want - san  # the last round's clean set


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dominator_tree_fixpoint_is_each_nodes_dominator_set(seed, vk_device):
    rng = np.random.default_rng(20 + seed)
    n = (12, 40, 70)[seed]
    cfg = random_cfg(rng, n, extra=n)
    dom = dominators_dataflow(n, cfg)
    idom = idoms_chk(n, cfg)
    for v in range(n):  # the two dominator algorithms agree: Dom(v) = v and its idom chain
        chain, u = {v}, v
        while u != 0:
            u = idom[u]
            chain.add(u)
        assert dom[v] == chain, (v, dom[v], chain)
    # DOMINANCE edges idom(v) -> v, plus the CFG's own edges as CONTROL (which the step ignores).
    el = dom_tree_edges(idom) + [(s, d, CONTROL) for s, d in cfg]
    g = csr(n, el)
    for v in rng.choice(n, 3, replace=False):
        for op in ("dominator_tree", "bounded_by_comparison"):
            res = both(vk_device, op, {**g, **seeded(n, [int(v)])}, n, len(el), per_submit=4)
            assert to_set(res.outputs["fout"], n) == dom[int(v)], (op, int(v))


def test_block_member_edges_feed_dominator_tree_only(vk_device):
    # 0 -DOM-> 1 -BLOCK_MEMBER-> 2 -DOM-> 3: from {3}, bounded_by_comparison stops at 2.
    el = [(0, 1, DOMINANCE), (1, 2, BLOCK_MEMBER), (2, 3, DOMINANCE)]
    g = {**csr(4, el), **seeded(4, [3])}
    assert to_set(both(vk_device, "dominator_tree", g, 4, 3).outputs["fout"], 4) == {0, 1, 2, 3}
    assert to_set(both(vk_device, "bounded_by_comparison", g, 4, 3).outputs["fout"], 4) == {2, 3}
