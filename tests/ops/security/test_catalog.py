"""The twelve bitset ops of vyre-libs' security catalog beyond the registered vectors: vyre's own
unit cases of each predicate (security/mod.rs, integer_overflow_arith.rs, sink_intersection.rs,
taint_kill.rs), multi-word sets and sizes around the 256-lane workgroup, on the reference and on
Vulkan against Python ints; the Region structure each op builds; builder errors; doctests."""
import doctest

import numpy as np
import pytest

from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.security import catalog, fusion, graph, region

from ..harness import run_equal
from ..oracles.u32_edges import edgy_u32

U32 = np.uint32
MASK = 0xFFFFFFFF
P = "vyre-libs::security::"
AND_OPS = ("auth_check_dominates", "buffer_size_check", "lock_dominates", "path_canonical", "sanitizer_dominates",
           "sql_param_bound", "xss_escape")
AND_NOT_OPS = ("format_string_check", "taint_kill", "unchecked_return")

# vyre's `tests { name: (lhs, rhs) => expected; }` rows of security/mod.rs and taint_kill.rs.
VYRE_CASES = {
    "auth_check_dominates": [([0b1100], [0b0100], [0b0100]), ([0b0001], [0b1110], [0]), ([0xFFFF], [0], [0]),
                             ([0], [0xFFFF], [0])],
    "buffer_size_check": [([0b1010], [0b1100], [0b1000]), ([0b0001], [0b1110], [0]), ([0xFFFF], [0], [0]),
                          ([0xDEAD], [0xDEAD], [0xDEAD])],
    "lock_dominates": [([0b1110], [0b0010], [0b0010]), ([0b0001], [0b0010], [0]), ([0xFFFF], [0], [0]),
                       ([0], [0xFFFF], [0])],
    "path_canonical": [([0b1110], [0b0010], [0b0010]), ([0b0001], [0b0010], [0]), ([0xFFFF], [0], [0]),
                       ([0xFF00, 0x00FF], [0xFFFF, 0xFFFF], [0xFF00, 0x00FF])],
    "sanitizer_dominates": [([0b1111], [0b0010], [0b0010]), ([0b0001], [0b0010], [0]), ([0xFFFF], [0], [0]),
                            ([0xFF00, 0x00FF], [0x0FF0, 0x0FF0], [0x0F00, 0x00F0])],
    "sql_param_bound": [([0b1100], [0b0100], [0b0100]), ([0b0001], [0b0010], [0]), ([0xFFFF], [0], [0]),
                        ([0xFF00, 0xF0F0], [0x0FF0, 0x0F0F], [0x0F00, 0])],
    "xss_escape": [([0b1100], [0b0100], [0b0100]), ([0b0001], [0b0010], [0]), ([0xFFFF], [0], [0]),
                   ([0], [0xFFFF], [0])],
    "format_string_check": [([0xFFFF], [0], [0xFFFF]), ([0xFFFF], [0xFF00], [0x00FF]), ([0xDEAD], [0xFFFF], [0]),
                            ([0xFFFF, 0x0F0F], [0xFF00, 0], [0x00FF, 0x0F0F])],
    "unchecked_return": [([0b1100], [0b0001], [0b1100]), ([0b0010], [0b0010], [0]), ([0], [0xFFFF], [0]),
                         ([0xFFFF, 0x0F0F], [0x00FF, 0xF000], [0xFF00, 0x0F0F])],
    "taint_kill": [([MASK], [0], [MASK]), ([MASK], [MASK], [0]), ([0x0000FFFF], [0x0000FF00], [0x000000FF]),
                   ([0xDEADBEEF], [0xF0F0F0F0], [0xDEADBEEF & ~0xF0F0F0F0 & MASK])],
}


def u32(words):
    return np.asarray(words, np.uint64).astype(U32)


@pytest.mark.parametrize("op", sorted(VYRE_CASES))
def test_vyres_unit_cases(op, vk_device):
    for lhs, rhs, want in VYRE_CASES[op]:
        garbage = u32([0xA5A5A5A5] * len(lhs))  # out's initial contents are overwritten
        _, ref = run_equal(P + op, vk_device, {"a": u32(lhs), "b": u32(rhs), "out": garbage},
                           node_count=32 * len(lhs))
        assert ref["out"].tolist() == want


def test_taint_kill_is_idempotent(vk_device):
    kill = u32([0xF0F0F0F0])
    _, once = run_equal(P + "taint_kill", vk_device, {"a": u32([0xDEADBEEF]), "b": kill, "out": u32([0])})
    _, twice = run_equal(P + "taint_kill", vk_device, {"a": once["out"], "b": kill, "out": u32([0])})
    assert twice["out"].tolist() == once["out"].tolist()


@pytest.mark.parametrize("op", AND_OPS + AND_NOT_OPS)
@pytest.mark.parametrize("node_count", [1, 31, 33, 8192, 8193])   # 1 word .. 257 words (two workgroups)
def test_sizes_around_the_workgroup(op, node_count, vk_device):
    rng = np.random.default_rng(node_count)
    w = -(-node_count // 32)
    a, b = edgy_u32(rng, w), edgy_u32(rng, w)
    _, ref = run_equal(P + op, vk_device, {"a": a, "b": b, "out": edgy_u32(rng, w)}, node_count=node_count)
    f = (lambda x, y: x & ~y & MASK) if op in AND_NOT_OPS else (lambda x, y: x & y)
    assert ref["out"].tolist() == [f(x, y) for x, y in zip(a.tolist(), b.tolist())]


def test_integer_overflow_arith_unit_cases(vk_device):
    # integer_overflow_arith.rs: (arith, attacker, guards) -> findings.
    for arith, reach, guards, want in [(0b1111, 0b0110, 0, 0b0110), (0b1111, 0b0110, 0b0010, 0b0100),
                                       (0b1111, 0, 0, 0), (0, 0xFFFF, 0, 0)]:
        ins = {"arith": u32([arith]), "reach": u32([reach]), "guards": u32([guards]), "scratch": u32([MASK])}
        _, ref = run_equal(P + "integer_overflow_arith", vk_device, ins)
        assert (ref["scratch"].tolist(), ref["out"].tolist()) == ([arith & reach], [want])


def test_sink_intersection_counts_every_word(vk_device):
    # sink_intersection.rs cases, then 300 words spread over two workgroups: one atomic sum.
    for q, s, want in [([0b1111], [0b1111], 4), ([0b1010], [0b0101], 0), ([0b1110], [0b0111], 2),
                       ([0xFF00, 0x00FF], [0xFFFF, 0xFFFF], 16)]:
        _, ref = run_equal(P + "sink_intersection", vk_device, {"a": u32(q), "b": u32(s), "scratch": u32([0] * len(q))},
                           node_count=32 * len(q))
        assert ref["out"].tolist() == [want]
    full = u32([MASK] * 300)
    _, ref = run_equal(P + "sink_intersection", vk_device, {"a": full, "b": full, "scratch": u32([0] * 300)},
                       node_count=9600)
    assert ref["out"].tolist() == [9600] and ref["scratch"].tolist() == [MASK] * 300


@pytest.mark.parametrize("op", AND_OPS + ("format_string_check", "unchecked_return"))
def test_tag_program_structure(op):
    p = getattr(catalog, op)(4, "l", "r", "o")
    (outer,) = p.entry
    (child,) = outer.body
    primitive = "vyre-primitives::bitset::" + ("and" if op in AND_OPS else "and_not")
    assert (outer.generator, outer.source_region) == (P + op, None)
    assert (child.generator, child.source_region) == (primitive, P + op)
    assert [(b.name, b.binding, b.access.name) for b in p.buffers] == [
        ("l", 0, "ReadOnly"), ("r", 1, "ReadOnly"), ("o", 2, "ReadWrite")]
    assert not any(b.is_output for b in p.buffers)


def test_taint_kill_has_no_region_of_its_own():
    (top,) = catalog.taint_kill(64, "fin", "kill", "fout").entry
    assert (top.generator, top.source_region) == ("vyre-primitives::bitset::and_not", P + "taint_kill")


@pytest.mark.parametrize("build", [catalog.xss_escape, catalog.taint_kill, catalog.format_string_check])
def test_builder_errors_say_how_to_fix(build):
    with pytest.raises(OpParamError, match="node_count must be a positive u32.*Fix: "):
        build(0, "a", "b", "out")
    with pytest.raises(OpParamError, match="used twice.*Fix: "):
        build(4, "a", "b", "a")
    with pytest.raises(OpParamError, match="non-empty buffer name.*Fix: "):
        build(4, "", "b", "out")
    with pytest.raises(OpParamError, match="Fix: "):
        catalog.sink_intersection(4, "a", "b", "a", "out")
    with pytest.raises(OpParamError, match="Fix: "):
        catalog.integer_overflow_arith(2**32, "a", "b", "c", "d", "e")


@pytest.mark.parametrize("module", [catalog, region, graph, fusion])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0
