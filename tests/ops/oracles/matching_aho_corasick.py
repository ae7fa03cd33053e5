"""Oracle of vyre_vk/ops/matching/aho_corasick, exact, written from the definition of an
Aho-Corasick match rather than from a DFA: ``matches[i]`` = 1 + the lowest id of the longest pattern
that is a suffix of ``haystack[:i+1]`` (``bytes.endswith``), 0 if none is. The tables come from
vyre_vk's ``dfa_compile`` of a fixed pattern set (overlapping, nested and shared-prefix patterns),
padded with unreachable states to the oracle's state_count; haystacks mix the patterns' letters
with random bytes so matches are dense.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::matching::aho_corasick"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> int(spec.numpy(ins, spec.params)["matches"].max()) > 0
    True
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from vyre_vk.ops.matching.dfa_compile import ALPHABET_SIZE, dfa_compile

from .core import U32, oracle

PATTERNS = (b"he", b"she", b"his", b"hers", b"abra", b"a", b"cad", b"ss", b"bra", b"he")
LETTERS = np.frombuffer(b"abcdehirs", np.uint8)


def ac_matches(haystack: bytes, patterns: Sequence[bytes]) -> np.ndarray:
    """1 + lowest id of the longest pattern ending at each byte (0: none), from the definition."""
    out = np.zeros(len(haystack), U32)
    for i in range(len(haystack)):
        prefix = haystack[:i + 1]
        best = None
        for pid, p in enumerate(patterns):
            if prefix.endswith(p) and (best is None or len(p) > len(patterns[best])):
                best = pid  # strictly longer only: among equal patterns the lowest id stays
        out[i] = 0 if best is None else best + 1
    return out


def padded_tables(patterns: Sequence[bytes], state_count: int) -> tuple[np.ndarray, np.ndarray]:
    """The DFA of `patterns` with unreachable all-zero states appended up to `state_count`."""
    dfa = dfa_compile(patterns)
    assert dfa.state_count <= state_count, (dfa.state_count, state_count)
    trans = np.zeros(state_count * ALPHABET_SIZE, U32)
    trans[:len(dfa.transitions)] = dfa.transitions
    accept = np.zeros(state_count, U32)
    accept[:dfa.state_count] = dfa.accept
    return trans, accept


def mixed_bytes(rng: np.random.Generator, n: int, letters: np.ndarray = LETTERS) -> bytes:
    """Mostly the patterns' letters, 1 in 8 a uniform random byte."""
    data = letters[rng.integers(0, len(letters), n)]
    wild = rng.random(n) < 0.125
    data[wild] = rng.integers(0, 256, int(wild.sum()))
    return data.astype(np.uint8).tobytes()


@oracle("vyre-libs::matching::aho_corasick", {"haystack_len": 600, "state_count": 48, "max_pattern_len": 4}, 0,
        "definition of an Aho-Corasick match (longest pattern suffix per byte): exact")
def _():
    def inputs(rng, p):
        trans, accept = padded_tables(PATTERNS, p["state_count"])
        hay = np.frombuffer(mixed_bytes(rng, p["haystack_len"]), np.uint8).astype(U32)
        return {"haystack": hay, "transitions": trans, "accept": accept}
    return inputs, lambda ins, p: {"matches": ac_matches(ins["haystack"].astype(np.uint8).tobytes(), PATTERNS)}
