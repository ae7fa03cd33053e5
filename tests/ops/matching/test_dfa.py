"""matching::aho_corasick and matching::cooperative_dfa on the reference and on Vulkan, and the host
``dfa_compile`` that builds their tables.

aho_corasick is checked against the definition of an Aho-Corasick match (the longest pattern that
is a suffix of the text so far, lowest id among equal patterns) on random pattern sets; the bounded
and the whole-prefix forms must agree. cooperative_dfa is checked against a lane model of vyre's
shuffle rounds, and against an exact scan where the op is exact (single-byte patterns); its
subgroup shuffles are emulated at vyre's width 32 on every device, so Vulkan (lavapipe's hardware
subgroups are 8 wide) must equal the reference bit for bit, also for widths above 32.
"""
import numpy as np
import pytest

from vyre_vk.lower import lower
from vyre_vk.ops.matching.aho_corasick import aho_corasick, aho_corasick_bounded
from vyre_vk.ops.matching.cooperative_dfa import cooperative_dfa_scan
from vyre_vk.ops.matching.dfa_compile import DfaCompileError, dfa_compile, dfa_compile_with_budget
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.matching_aho_corasick import ac_matches, mixed_bytes, padded_tables
from ..oracles.matching_cooperative_dfa import cooperative_model

U32 = np.uint32


def walk(dfa, text: bytes) -> int:
    s = 0
    for b in text:
        s = dfa.transitions[s * 256 + b]
    return s


# ------------------------------------------------------------------ dfa_compile (vyre's unit tests)
def test_single_pattern_accepts_only_after_its_last_byte():
    dfa = dfa_compile([b"abc"])
    s = walk(dfa, b"xxabc")
    assert dfa.accept[s] == 1 and dfa.accept[dfa.transitions[s * 256 + ord("x")]] == 0
    assert (dfa.state_count, dfa.max_pattern_len, len(dfa.transitions)) == (4, 3, 4 * 256)


def test_overlapping_patterns_and_first_duplicate_wins():
    dfa = dfa_compile([b"he", b"she", b"his", b"hers"])
    seen = [dfa.accept[walk(dfa, b"ushers"[:k])] for k in range(1, 7)]
    assert seen == [0, 0, 0, 2, 0, 4]  # "she" (id 1) ends at 3 (its own node beats "he"), "hers" at 5
    dup = dfa_compile([b"B", b"B"])
    assert dup.accept[walk(dup, b"B")] == 1  # pattern 0, not the last writer
    suffix = dfa_compile([b"B", b"B", b"AB"])
    assert suffix.accept[walk(suffix, b"AB")] == 3 and suffix.accept[walk(suffix, b"XB")] == 1


def test_empty_pattern_list_and_empty_pattern():
    empty = dfa_compile([])
    assert (empty.state_count, set(empty.transitions), empty.accept) == (1, {0}, (0,))
    root = dfa_compile([b""])
    assert root.accept == (1,) and root.max_pattern_len == 0


def test_budget_errors_are_structured():
    for budget in (0, 1024):
        with pytest.raises(DfaCompileError, match="Fix:"):
            dfa_compile_with_budget([b"ab", b"cd"], budget)
    assert dfa_compile_with_budget([b"abc"], 4 * 1024).state_count == 4
    with pytest.raises(DfaCompileError, match="not bytes.*Fix:"):
        dfa_compile([3])


# ------------------------------------------------------------------ aho_corasick
def random_patterns(rng, letters: bytes) -> list[bytes]:
    count = int(rng.integers(1, 7))
    return [bytes(int(c) for c in rng.choice(list(letters), int(rng.integers(1, 6)))) for _ in range(count)]


@pytest.mark.parametrize("seed", range(4))
def test_aho_corasick_matches_the_definition_on_random_pattern_sets(seed, vk_device):
    rng = np.random.default_rng(seed)
    pats = random_patterns(rng, b"abc")
    dfa = dfa_compile(pats)
    states = 32  # padded: one compiled program serves every seed
    trans, accept = padded_tables(pats, states)
    hay = mixed_bytes(rng, 300, np.frombuffer(b"abc", np.uint8))
    ins = {"haystack": np.frombuffer(hay, np.uint8).astype(U32), "transitions": trans, "accept": accept}
    want = ac_matches(hay, pats)
    _, out = run_equal(aho_corasick_bounded("haystack", "transitions", "accept", "matches", 300, states, 5),
                       vk_device, ins)
    np.testing.assert_array_equal(out["matches"], want, err_msg=f"patterns {pats}")
    assert dfa.max_pattern_len <= 5
    if seed == 0:  # the whole-prefix form gives the same matches (and the window is what saves work)
        _, full = run_equal(aho_corasick("haystack", "transitions", "accept", "matches", 300, states), vk_device, ins)
        np.testing.assert_array_equal(full["matches"], want)


def test_aho_corasick_window_shorter_than_a_pattern_misses_it():
    """The bound is a promise by the caller: a window of 2 cannot see "abra" (vyre's semantics)."""
    from vyre_vk import reference
    dfa = dfa_compile([b"abra"])
    ins = [np.frombuffer(b"abracadabra", np.uint8).astype(U32), np.asarray(dfa.transitions, U32),
           np.asarray(dfa.accept, U32)]
    out = reference.run(aho_corasick_bounded("h", "t", "a", "m", 11, dfa.state_count, 2), ins)["m"]
    assert out.sum() == 0


# ------------------------------------------------------------------ cooperative_dfa
def coop(width: int, n: int, states: int):
    return cooperative_dfa_scan("input", "transitions", "accept_mask", "matches", n, states, width)


@pytest.mark.parametrize("width", [1, 6, 32, 64])
def test_cooperative_dfa_is_exact_for_single_byte_patterns(width, vk_device):
    rng = np.random.default_rng(width)
    trans, accept = padded_tables([b"a", b"e", b"\x00"], 8)
    data = np.frombuffer(mixed_bytes(rng, 200, np.frombuffer(b"aexyz", np.uint8)), np.uint8)
    ins = {"input": data.astype(U32), "transitions": trans, "accept_mask": accept}
    _, out = run_equal(coop(width, 200, 8), vk_device, ins)
    np.testing.assert_array_equal(out["matches"], np.isin(data, list(b"ae\x00")).astype(U32))


@pytest.mark.parametrize("width", [4, 32, 48, 64])
def test_cooperative_dfa_matches_the_lane_model(width, vk_device):
    rng = np.random.default_rng(100 + width)
    trans, accept = padded_tables([b"he", b"she", b"his", b"aa"], 16)
    data = np.frombuffer(mixed_bytes(rng, 250, np.frombuffer(b"aehis", np.uint8)), np.uint8).astype(U32)
    ins = {"input": data, "transitions": trans, "accept_mask": accept}
    _, out = run_equal(coop(width, 250, 16), vk_device, ins)
    np.testing.assert_array_equal(out["matches"], cooperative_model(data, trans, accept, width))


def test_cooperative_dfa_lane_zero_reapplies_its_byte():
    """vyre's quirk, kept: lane 0 shuffles from itself, so "aa" is reported on the text "a"."""
    from vyre_vk import reference
    dfa = dfa_compile([b"aa"])
    ins = [np.asarray([ord("a")], U32), np.asarray(dfa.transitions, U32), np.asarray(dfa.accept, U32)]
    assert reference.run(coop(4, 1, dfa.state_count), ins)["matches"].tolist() == [1]


def test_cooperative_dfa_subgroups_are_emulated_at_width_32_on_every_device():
    assert "subgroup_emulation" in lower(coop(32, 64, 2)).features
    with pytest.raises(OpParamError, match="Fix:"):
        coop(2048, 64, 2)
