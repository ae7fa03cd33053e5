"""aliases_dataflow beyond its vector: the edge kinds it follows, dispatches repeated to the
closure (as vyre's callers drive it) against a Python BFS, the 256-node limit at both sides, the
fused structure (twelve arms, eleven workgroup barriers, arm-local names renamed); the fusion
rules on small programs (RAW, WAR, independent arms, buffer merging); errors; doctests."""
import doctest

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferAccess, MemoryOrdering
from vyre_vk.ir import node as N
from vyre_vk.ir.walk import walk_nodes
from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.security import aliases_dataflow as ad
from vyre_vk.ops.security import fusion
from vyre_vk.ops.security.graph import EDGE_KIND, bitset_or_into, bitset_zero_inplace

from ..harness import run_equal
from ..oracles.security_aliases_dataflow import ALIAS_KINDS, random_graph
from ..oracles.security_catalog import members, nodeset

OP = ad.OP_ID
U32 = np.uint32
SCRATCH = ("hop_x", "hop_y", "x_in_y", "y_in_x", "out")


def graph_inputs(n, edges, x, y):
    """A CSR ProgramGraph of (src, dst, kind) edges, x/y/reach seeded with the node lists."""
    edges = sorted(edges)
    offsets = np.searchsorted(np.asarray([e[0] for e in edges], np.int64), np.arange(n + 1)).astype(U32)
    w = -(-n // 32)
    sx, sy = np.zeros(w * 32, bool), np.zeros(w * 32, bool)
    sx[x], sy[y] = True, True
    ins = {"pg_nodes": np.zeros(n, U32), "pg_edge_offsets": offsets,
           "pg_edge_targets": np.asarray([e[1] for e in edges] or [0], U32),
           "pg_edge_kind_mask": np.asarray([e[2] for e in edges] or [0], U32), "pg_node_tags": np.zeros(n, U32),
           "x": nodeset(sx), "y": nodeset(sy), "reach_x": nodeset(sx), "reach_y": nodeset(sy)}
    ins.update({k: np.zeros(w, U32) for k in SCRATCH})
    return ins


@pytest.mark.parametrize("kind,aliased", [(k, bool(v & ALIAS_KINDS)) for k, v in EDGE_KIND.items()])
def test_only_aliasing_edges_propagate(kind, aliased, vk_device):
    # x = {0} -> y = {1} by one edge of `kind`: out = {1} only for ASSIGNMENT, PHI, ALIAS, MUT_REF.
    ins = graph_inputs(4, [(0, 1, EDGE_KIND[kind])], [0], [1])
    _, ref = run_equal(OP, vk_device, ins, node_count=4, edge_count=1)
    assert ref["out"].tolist() == [0b0010 if aliased else 0]


def bfs(ins, n, seed):
    seen = set(np.flatnonzero(members(seed)[:n]).tolist())
    todo = list(seen)
    off, tgt, kind = ins["pg_edge_offsets"], ins["pg_edge_targets"], ins["pg_edge_kind_mask"]
    while todo:
        s = todo.pop()
        for e in range(int(off[s]), int(off[s + 1])):
            t = int(tgt[e])
            if int(kind[e]) & ALIAS_KINDS and t < n and t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


@pytest.mark.parametrize("seed", [2, 3])   # seeds whose x and y alias (out is not empty)
def test_repeated_dispatches_reach_the_closure(seed, vk_device):
    n, m = 256, 320
    rng = np.random.default_rng(seed)
    ins = random_graph(rng, n, m)
    ins["pg_edge_kind_mask"][rng.random(m) < 0.7] |= EDGE_KIND["ASSIGNMENT"]   # long alias chains
    w = n // 32
    x, y = np.zeros(n, bool), np.zeros(n, bool)
    x[rng.integers(0, n, 3)], y[rng.integers(0, n, 3)] = True, True
    ins.update(x=nodeset(x), y=nodeset(y), reach_x=nodeset(x), reach_y=nodeset(y))
    ins.update({k: np.zeros(w, U32) for k in SCRATCH})
    for dispatches in range(1, n + 1):
        _, ref = run_equal(OP, vk_device, ins, node_count=n, edge_count=m)
        done = all(np.array_equal(ref[k], ins[k]) for k in ("reach_x", "reach_y"))
        ins.update(ref)
        if done:
            break
    assert dispatches > 5 and members(ins["out"]).any()
    reach_x, reach_y = bfs(ins, n, nodeset(x)), bfs(ins, n, nodeset(y))
    assert set(np.flatnonzero(members(ins["reach_x"])).tolist()) == reach_x
    assert set(np.flatnonzero(members(ins["reach_y"])).tolist()) == reach_y
    want = (reach_y & set(np.flatnonzero(x).tolist())) | (reach_x & set(np.flatnonzero(y).tolist()))
    assert set(np.flatnonzero(members(ins["out"])).tolist()) == want


def test_node_count_limit_is_one_workgroup():
    ad.aliases_dataflow(256, 10, "x", "y", "rx", "ry", "hx", "hy", "xy", "yx", "out")
    with pytest.raises(OpParamError, match="GridSync.*Fix: pass node_count <= 256"):
        ad.aliases_dataflow(257, 10, "x", "y", "rx", "ry", "hx", "hy", "xy", "yx", "out")
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        ad.aliases_dataflow(4, 3, "x", "x", "rx", "ry", "hx", "hy", "xy", "yx", "out")
    with pytest.raises(OpParamError, match="edge_count must be a u32.*Fix: "):
        ad.aliases_dataflow(4, -1, "x", "y", "rx", "ry", "hx", "hy", "xy", "yx", "out")


def test_fused_structure():
    p = ad.aliases_dataflow(4, 3, "x", "y", "rx", "ry", "hx", "hy", "xy", "yx", "out")
    body = p.entry[0].body
    assert [type(n).__name__ for n in body] == ["Block", "Barrier"] * 11 + ["Block"]
    assert all(n.ordering is MemoryOrdering.SeqCst for n in body if isinstance(n, N.Barrier))
    lets = [n.name for n in walk_nodes(body) if isinstance(n, N.Let)]
    assert lets and all(name.startswith("__vyre_fuse_a") for name in lets)
    assert "__vyre_fuse_a4_src" in lets and "__vyre_fuse_a5_src" in lets   # the two hop arms
    hop = body[8].body[0]
    assert (hop.generator, hop.body[0].generator) == ("vyre-libs::security::flows_to",
                                                       "vyre-primitives::graph::csr_forward_traverse")


def test_fusion_barriers_only_where_arms_depend():
    raw = fusion.fuse_programs([bitset_or_into("a", "x", 1), bitset_or_into("b", "a", 1)])    # b reads a
    war = fusion.fuse_programs([bitset_or_into("a", "x", 1), bitset_zero_inplace("z", "x", 1)])  # x read, then written
    free = fusion.fuse_programs([bitset_or_into("a", "x", 1), bitset_or_into("b", "y", 1)])
    kinds = lambda p: [type(n).__name__ for n in p.entry[0].body]   # noqa: E731
    assert kinds(raw) == kinds(war) == ["Block", "Barrier", "Block"]
    assert kinds(free) == ["Block", "Block"]
    x = war.buffer("x")
    assert (x.access, x.binding) == (BufferAccess.ReadWrite, 1)   # ReadOnly upgraded by the later writer
    assert fusion.fuse_programs([raw]) is raw


def test_fused_arms_run_in_order(vk_device):
    # a |= x; b |= a: b must see the updated a (the barrier orders the arms).
    p = fusion.fuse_programs([bitset_or_into("a", "x", 1), bitset_or_into("b", "a", 1)])
    ins = {"a": np.asarray([1], U32), "x": np.asarray([6], U32), "b": np.asarray([8], U32)}
    _, ref = run_equal(p, vk_device, ins)
    assert (ref["a"].tolist(), ref["b"].tolist()) == ([7], [15])
    assert reference.run(p, ins)["b"].tolist() == [15]


@pytest.mark.parametrize("module", [ad, fusion])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0
