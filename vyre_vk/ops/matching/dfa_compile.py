"""Host-side Aho-Corasick DFA compiler (port of vyre-primitives/src/matching/dfa_compile.rs),
the table builder that ``aho_corasick`` and ``cooperative_dfa`` consume.

The automaton is a trie over the pattern bytes with failure links collapsed into a dense table,
so a scanner steps it with one load per byte::

    transitions[state * 256 + byte] = next_state     (state 0 is the root)
    accept[state] = pattern_id + 1 of the first pattern spelled by `state`, else the accept
                    of its failure state (the longest proper suffix that is a trie node), else 0

``max_pattern_len`` bounds the suffix window a match ending at a byte can depend on. vyre's
``output_offsets`` / ``output_records`` (every pattern id per state) are not ported: no op here
reads them.

Example::

    >>> dfa = dfa_compile([b"he", b"she"])
    >>> s = 0
    >>> for byte in b"she":
    ...     s = dfa.transitions[s * 256 + byte]
    >>> dfa.accept[s], dfa.state_count, dfa.max_pattern_len
    (2, 6, 3)
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

from ...errors import VyreError

ALPHABET_SIZE = 256
#: vyre's DEFAULT_DFA_BUDGET_BYTES: a 16 MiB transition table (about 16k states).
DEFAULT_DFA_BUDGET_BYTES = 16 * 1024 * 1024
_NONE = -1  # no trie edge


class DfaCompileError(VyreError, ValueError):
    """The transition table would exceed the byte budget (vyre's DfaCompileError::TooLarge /
    TrieStateCapExceeded)."""


@dataclass(frozen=True)
class CompiledDfa:
    transitions: tuple[int, ...]   # state_count * 256 words
    accept: tuple[int, ...]        # state_count words
    state_count: int
    max_pattern_len: int


def _as_bytes(pattern: object, index: int) -> bytes:
    if isinstance(pattern, str):
        return pattern.encode("latin-1")
    if isinstance(pattern, (bytes, bytearray)):
        return bytes(pattern)
    raise DfaCompileError(f"pattern {index} is a {type(pattern).__name__}, not bytes. "
                          "Fix: pass byte strings (or latin-1 str) as patterns.")


def dfa_compile_with_budget(patterns: Sequence[bytes], budget_bytes: int) -> CompiledDfa:
    """Compile `patterns` into a dense DFA whose table fits in `budget_bytes` (DfaCompileError if not)."""
    pats = [_as_bytes(p, i) for i, p in enumerate(patterns)]
    state_cap = budget_bytes // (ALPHABET_SIZE * 4)
    trie: list[list[int]] = [[_NONE] * ALPHABET_SIZE]
    accept = [0]
    for pid, pat in enumerate(pats):
        cur = 0
        for b in pat:
            nxt = trie[cur][b]
            if nxt == _NONE:
                if len(trie) >= state_cap:
                    raise DfaCompileError(
                        f"the DFA trie needs more than {state_cap} states (budget {budget_bytes} bytes). "
                        "Fix: reduce the pattern set, raise the budget, or shard the patterns into several DFAs.")
                nxt = len(trie)
                trie.append([_NONE] * ALPHABET_SIZE)
                accept.append(0)
                trie[cur][b] = nxt
            cur = nxt
        if accept[cur] == 0:  # the first (lowest) pattern id spelled by a node wins
            accept[cur] = pid + 1
    n = len(trie)
    if n * ALPHABET_SIZE * 4 > budget_bytes:
        raise DfaCompileError(f"the DFA transition table needs {n * ALPHABET_SIZE * 4} bytes, over the budget of "
                              f"{budget_bytes}. Fix: reduce the pattern set, raise the budget, or shard the patterns.")
    # Breadth-first failure links: a node's failure state is shallower, so it is final when read.
    fail = [0] * n
    queue = deque(c for c in trie[0] if c != _NONE)
    while queue:
        s = queue.popleft()
        for b, child in enumerate(trie[s]):
            if child == _NONE:
                continue
            f = fail[s]
            while f != 0 and trie[f][b] == _NONE:
                f = fail[f]
            target = trie[f][b]
            if target != _NONE and target != child:
                fail[child] = target
            if accept[child] == 0:
                accept[child] = accept[fail[child]]
            queue.append(child)
    # Collapse failure links into the dense table: follow them until an edge exists (or the root).
    transitions = [0] * (n * ALPHABET_SIZE)
    for s in range(n):
        row = s * ALPHABET_SIZE
        for b in range(ALPHABET_SIZE):
            t = s
            while trie[t][b] == _NONE and t != 0:
                t = fail[t]
            transitions[row + b] = max(trie[t][b], 0)
    return CompiledDfa(tuple(transitions), tuple(accept), n, max((len(p) for p in pats), default=0))


def dfa_compile(patterns: Sequence[bytes]) -> CompiledDfa:
    """`dfa_compile_with_budget` at vyre's default 16 MiB budget."""
    return dfa_compile_with_budget(patterns, DEFAULT_DFA_BUDGET_BYTES)


__all__ = ["ALPHABET_SIZE", "CompiledDfa", "DEFAULT_DFA_BUDGET_BYTES", "DfaCompileError", "dfa_compile",
           "dfa_compile_with_budget"]
