"""matching::emit_hit / compact_hits, scan::substring_search and graph::ast_walk_{pre,post}order on
the reference and on Vulkan (equal word for word) against Python models: the hit-buffer contract
(below, at and over capacity), ``bytes.find`` for every needle length (0, longer than the
haystack), and a recursive walk of random trees (one node, a deep spine, a star, truncated
output); a cyclic node table must terminate with the same words on both backends."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops.graph.ast_walk import SENTINEL, ast_walk_postorder_nodes, ast_walk_preorder, pack_nodes
from vyre_vk.ops.matching.hit_buffer import (HIT_BUFFER_LIVE_LENGTH as LIVE, HIT_BUFFER_OVERFLOW_COUNT as OVER,
                                             compact_hits_with_layout, emit_hit_with_layout)
from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.scan.substring import LEGACY_MATCHING_SUBSTRING_OP_ID, substring_search, \
    substring_search_with_op_id

from ..harness import run_equal
from ..oracles.graph_ast_walk import random_tree, walk_out
from ..oracles.matching_hit_buffer import FIELDS, emit_model
from ..oracles.scan_substring import find_all

U32 = np.uint32
S = SENTINEL


# ------------------------------------------------------------------ hit buffer
@pytest.mark.parametrize("lanes, max_hits", [(5, 9), (9, 9), (70, 3)])
def test_emit_hit_appends_lanes_and_counts_overflow(lanes, max_hits, vk_device):
    rng = np.random.default_rng(lanes)
    ins = {name: rng.integers(0, 2**32, lanes, dtype=np.uint64).astype(U32) for name in FIELDS}
    ins.update({"out_cursor": np.asarray([12345], U32), OVER: np.asarray([777], U32)})
    program = emit_hit_with_layout(*FIELDS, "out_hits", "out_cursor", lanes, max_hits)
    _, out = run_equal(program, vk_device, ins)
    want = emit_model(ins, max_hits)
    for name, w in want.items():
        np.testing.assert_array_equal(out[name], w, err_msg=name)
    assert out[OVER][0] == (lanes - max_hits if lanes > max_hits else 777)


@pytest.mark.parametrize("cursor", [0, 3, 6, 100, 0xFFFFFFFF])
def test_compact_hits_clamps_to_cursor_capacity_and_buffer(cursor, vk_device):
    program = compact_hits_with_layout("out_hits", "out_cursor", 5, 8)  # 5 hit slots, max_capacity 8
    ins = {"out_hits": np.arange(20, dtype=U32), "out_cursor": np.asarray([cursor], U32)}
    _, out = run_equal(program, vk_device, ins)
    assert out[LIVE].tolist() == [min(cursor, 8, 5)]


def test_hit_builders_refuse_bad_counts():
    with pytest.raises(OpParamError, match="Fix:"):
        emit_hit_with_layout(*FIELDS, "h", "c", -1, 4)
    with pytest.raises(OpParamError, match="Fix:"):
        compact_hits_with_layout("h", "c", 4, 2**32)


# ------------------------------------------------------------------ substring_search
@pytest.mark.parametrize("needle_len", [1, 2, 5, 20])
def test_substring_search_finds_every_occurrence(needle_len, vk_device):
    rng = np.random.default_rng(needle_len)
    hay = rng.choice(np.asarray([120, 121], U32), 150)
    needle = hay[40:40 + needle_len].copy()  # at least one occurrence
    _, out = run_equal(substring_search("haystack", "needle", "matches", 150, needle_len), vk_device,
                       {"haystack": hay, "needle": needle})
    want = find_all(hay.astype(np.uint8).tobytes(), needle.astype(np.uint8).tobytes())
    np.testing.assert_array_equal(out["matches"], want)
    assert want[40] == 1


def test_substring_search_needle_longer_than_haystack_and_whole_words(vk_device):
    _, out = run_equal(substring_search("haystack", "needle", "matches", 3, 5), vk_device,
                       {"haystack": np.asarray([1, 2, 3], U32), "needle": np.asarray([1, 2, 3, 4, 5], U32)})
    assert out["matches"].tolist() == [0, 0, 0]
    # whole u32 words are compared: 0x161 is not 0x61
    _, out = run_equal(substring_search("haystack", "needle", "matches", 4, 1), vk_device,
                       {"haystack": np.asarray([0x61, 0x161, 0x61, 7], U32), "needle": np.asarray([0x61], U32)})
    assert out["matches"].tolist() == [1, 0, 1, 0]


def test_substring_search_empty_needle_matches_everywhere_on_the_reference():
    out = reference.run(substring_search("haystack", "needle", "matches", 4, 0),
                        {"haystack": np.asarray([1, 2, 3, 4], U32), "needle": np.asarray([9], U32)})
    assert out["matches"].tolist() == [1, 1, 1, 1]


def test_legacy_matching_id_builds_the_same_program_under_its_own_region():
    legacy = substring_search_with_op_id(LEGACY_MATCHING_SUBSTRING_OP_ID, "h", "n", "m", 8, 3)
    assert legacy.entry[0].generator == LEGACY_MATCHING_SUBSTRING_OP_ID
    assert legacy.buffers == substring_search("h", "n", "m", 8, 3).buffers


# ------------------------------------------------------------------ AST walks
def spine(n):
    return [(k - 1 if k else S, k + 1 if k + 1 < n else S, S) for k in range(n)]


def star(n):
    return [(S, 1 if n > 1 else S, S)] + [(0, S, k + 1 if k + 1 < n else S) for k in range(1, n)]


TREES = {"one": [(S, S, S)], "spine": spine(30), "star": star(30),
         "random": random_tree(np.random.default_rng(7), 30)}


@pytest.mark.parametrize("post", [False, True], ids=["pre", "post"])
@pytest.mark.parametrize("shape", sorted(TREES))
def test_ast_walks_match_a_recursive_walk(shape, post, vk_device):
    rows = TREES[shape]
    n = len(rows)
    build = ast_walk_postorder_nodes if post else ast_walk_preorder
    for out_cap in (n + 2, max(n // 3, 1)):  # room to spare (tail keeps its input), truncated
        ins = {"nodes": np.asarray(pack_nodes(rows), U32), "out": np.full(out_cap, 0xABCD, U32)}
        _, out = run_equal(build("nodes", "out", n, out_cap), vk_device, ins)
        np.testing.assert_array_equal(out["out"], walk_out(ins, n, post), err_msg=f"{shape} cap {out_cap}")


@pytest.mark.parametrize("build, want", [(ast_walk_preorder, [0, 1, 2, 0]), (ast_walk_postorder_nodes, [1, 0, 0, 0])])
def test_ast_walks_terminate_on_a_cyclic_table(build, want, vk_device):
    """Node 2's first child is node 1 (a cycle): every loop is bounded by node_count. Preorder
    emits 0 1 2 and runs out of steps; postorder's descent stops at node 1 after 3 steps, emits it,
    climbs to 0 and stops there."""
    rows = [(S, 1, S), (0, 2, S), (1, 1, 0)]
    ins = {"nodes": np.asarray(pack_nodes(rows), U32), "out": np.zeros(4, U32)}
    _, out = run_equal(build("nodes", "out", 3, 4), vk_device, ins)
    assert out["out"].tolist() == want


def test_ast_walk_builders_refuse_bad_shapes():
    with pytest.raises(OpParamError, match="out_cap > 0.*Fix:"):
        ast_walk_preorder("nodes", "out", 3, 0)
    with pytest.raises(OpParamError, match="overflows.*Fix:"):
        ast_walk_postorder_nodes("nodes", "out", 2**31, 4)
