"""bracket_match (both of vyre's paths) and core_delimiter_match on the reference and on Vulkan:
vyre's unit cases, random brace streams against a stack walk (the bounded path with a cap that
binds), the tag_program shapes, and the builders' parameter checks."""
import numpy as np
import pytest

from vyre_vk.ops import get
from vyre_vk.ops.parsing.delimiter import (CLOSE_BRACE as C, CORE_DELIMITER_OP_ID, MATCH_NONE as N, OPEN_BRACE as O,
                                          OP_ID, OTHER, PRIMITIVE_OP_ID, bracket_match, core_delimiter_match)
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.parsing_delimiter import bracket_pairs, brace_kinds, prefix_depths

U32 = np.uint32


def pairs(kinds, max_depth, device, stack=None):
    n = len(kinds)
    stack = np.zeros(max_depth, U32) if stack is None else stack
    _, out = run_equal(bracket_match("kinds", "stack", "match_pairs", n, max_depth), device,
                       {"kinds": np.asarray(kinds, U32), "stack": stack})
    return out


@pytest.mark.parametrize("kinds, max_depth, want", [
    ([O, OTHER, C], 3, [2, N, 0]),                      # vyre's unit tests (delimiter.rs)
    ([O, O, C, C], 4, [3, 2, 1, 0]),
    ([O, O, C], 3, [N, 2, 1]),
    ([C, O, C], 3, [N, 2, 1]),
    ([O, O, O, C, C, C], 2, [4, 3, N, 1, 0, N]),        # the cap drops the third open
    ([C, C, O, O], 1, [N, N, N, N]),
])
def test_vyres_bracket_cases(kinds, max_depth, want, vk_device):
    assert pairs(kinds, max_depth, vk_device)["match_pairs"].tolist() == want


def test_paths_and_the_stack_buffer(vk_device):
    """max_depth >= n: the parallel path, [256,1,1], stack untouched; below n: one lane, [1,1,1],
    the stack holds the opens it pushed."""
    assert bracket_match("k", "s", "m", 4, 4).workgroup_size == (256, 1, 1)
    assert bracket_match("k", "s", "m", 4, 3).workgroup_size == (1, 1, 1)
    garbage = np.asarray([7, 8, 9, 10], U32)
    assert pairs([O, O, C, C], 4, vk_device, garbage.copy())["stack"].tolist() == [7, 8, 9, 10]
    assert pairs([O, O, C, O], 3, vk_device)["stack"].tolist() == [0, 3, 0]


@pytest.mark.parametrize("max_depth", [3, 8, 40])
def test_bounded_path_random_against_a_stack_walk(max_depth, vk_device):
    rng = np.random.default_rng(max_depth)
    kinds = brace_kinds(rng, 200)
    assert pairs(kinds, max_depth, vk_device)["match_pairs"].tolist() == bracket_pairs(kinds, max_depth).tolist()


def test_parallel_path_deep_nesting_against_a_stack_walk(vk_device):
    kinds = np.asarray([O] * 150 + [C] * 140 + [O, C] * 5, U32)
    assert pairs(kinds, len(kinds), vk_device)["match_pairs"].tolist() == bracket_pairs(kinds, len(kinds)).tolist()


def test_core_delimiter_depths_wrap_below_zero(vk_device):
    types = np.asarray([13, 12, 12, 5, 13, 13, 13, 12], U32)
    _, out = run_equal(core_delimiter_match("t", "d", 8, 12, 13), vk_device, {"t": types, "d": np.zeros(8, U32)})
    assert out["d"].tolist() == [0xFFFFFFFF, 0, 1, 1, 0, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFF]
    assert out["d"].tolist() == prefix_depths(types, 12, 13).tolist()


def test_tag_program_shapes():
    outer = get(OP_ID).build().entry[0]
    assert (outer.generator, outer.body[0].generator, outer.body[0].source_region) == (OP_ID, PRIMITIVE_OP_ID, OP_ID)
    p = get(CORE_DELIMITER_OP_ID).build()
    outer = p.entry[0]
    assert outer.generator == CORE_DELIMITER_OP_ID + "#self-exclusive" and outer.source_region is None
    assert (outer.body[0].generator, outer.body[0].source_region) == (
        "vyre-primitives::parsing::core_delimiter_match", CORE_DELIMITER_OP_ID)
    assert p.non_composable_with_self and not get(OP_ID).build().non_composable_with_self


@pytest.mark.parametrize("call", [lambda: bracket_match("k", "s", "m", 0, 4),
                                  lambda: bracket_match("k", "s", "m", 4, -1),
                                  lambda: core_delimiter_match("t", "d", 0, 1, 2),
                                  lambda: core_delimiter_match("t", "d", 4, 1.5, 2)])
def test_builders_reject_bad_sizes(call):
    with pytest.raises(OpParamError, match="Fix:"):
        call()
