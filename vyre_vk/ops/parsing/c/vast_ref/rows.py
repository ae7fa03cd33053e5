"""VAST rows as the CPU oracles read them (vyre-libs/src/parsing/c/parse/vast/mod.rs constants,
ref_decode_err.rs checks), with the per-parent indices that make vyre's O(n) backward scans
O(log n) lookups.

A row is 10 u32 words ``[kind, parent, first_child, next_sibling, previous_sibling, start, len,
typedef_flags, typedef_scope, symbol_hash]``. vyre reads a word past the end as 0
(``c_vast_word_at``), so a SENTINEL node index reads kind 0 and first child 0; `word` keeps that.

vyre's oracles scan "every earlier node whose parent word equals P" in index order; `siblings`
lists those nodes per parent word once (sorted, since they are appended in index order), and
`before` finds how many of them precede an index by bisection.

Example::

    >>> rows = VastRows([12, SENTINEL, 1, SENTINEL, SENTINEL, 0, 1, 0, 0, 0,
    ...                  13, 0, SENTINEL, SENTINEL, SENTINEL, 1, 1, 0, 0, 0])
    >>> rows.n, rows.kind(1), rows.parent(1), rows.first_child(SENTINEL), rows.siblings[0]
    (2, 13, 0, 0, [1])
"""
from __future__ import annotations

from bisect import bisect_left

from .....errors import InputError

SENTINEL = 0xFFFFFFFF
VAST_NODE_STRIDE_U32 = 10
VAST_PREVIOUS_SIBLING_FIELD = 4
VAST_TYPEDEF_FLAGS_FIELD, VAST_TYPEDEF_SCOPE_FIELD, VAST_TYPEDEF_SYMBOL_FIELD = 7, 8, 9
C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME = 1
C_TYPEDEF_FLAG_TYPEDEF_DECLARATOR = 1 << 1
C_TYPEDEF_FLAG_ORDINARY_DECLARATOR = 1 << 2


def check_vast_words(words: list[int], name: str = "vast_nodes") -> list[int]:
    """`words` as u32s, or an InputError when they are not whole 10-word rows (vyre's
    CReferenceDecodeError::PartialVastRow) or a word is not a u32."""
    words = [int(w) for w in words]
    if len(words) % VAST_NODE_STRIDE_U32:
        raise InputError(name, f"{len(words)} words is not a multiple of the VAST row stride {VAST_NODE_STRIDE_U32}",
                         "pass complete C VAST rows (10 u32 words per node)")
    bad = next((w for w in words if not 0 <= w <= SENTINEL), None)
    if bad is not None:
        raise InputError(name, f"word {bad} is not a u32", "pass u32 words in [0, 2^32)")
    return words


class VastRows:
    """Column views of VAST rows plus the per-parent sibling lists the oracles scan."""

    def __init__(self, words: list[int]) -> None:
        self.words = words
        self.n = len(words) // VAST_NODE_STRIDE_U32
        cols = [words[f::VAST_NODE_STRIDE_U32][:self.n] for f in range(VAST_NODE_STRIDE_U32)]
        self.kinds, self.parents, self.first_children, self.next_siblings = cols[0], cols[1], cols[2], cols[3]
        self.prev_siblings, self.flags_col, self.symbols = cols[4], cols[7], cols[9]
        self.siblings: dict[int, list[int]] = {}
        for i, p in enumerate(self.parents):
            self.siblings.setdefault(p, []).append(i)

    def valid(self, idx: int) -> bool:
        return 0 <= idx < self.n

    def word(self, idx: int, field: int) -> int:
        return self.words[idx * VAST_NODE_STRIDE_U32 + field] if self.valid(idx) else 0

    def kind(self, idx: int) -> int:
        return self.kinds[idx] if self.valid(idx) else 0

    def parent(self, idx: int) -> int:
        return self.parents[idx] if self.valid(idx) else 0

    def first_child(self, idx: int) -> int:
        return self.first_children[idx] if self.valid(idx) else 0

    def next_sibling(self, idx: int) -> int:
        return self.next_siblings[idx] if self.valid(idx) else 0

    def flags(self, idx: int) -> int:
        return self.flags_col[idx] if self.valid(idx) else 0

    def symbol(self, idx: int) -> int:
        return self.symbols[idx] if self.valid(idx) else 0

    def group(self, parent: int) -> list[int]:
        return self.siblings.get(parent, [])

    def before(self, parent: int, idx: int) -> int:
        """How many nodes with parent word `parent` have an index below `idx`."""
        return bisect_left(self.group(parent), idx)

    def child_kind(self, idx: int) -> int:
        """Kind of `idx`'s first child, 0 when it has none (vyre's ``child_kind``)."""
        child = self.first_child(idx)
        return self.kinds[child] if child < self.n else 0

    def child_flags(self, idx: int) -> int:
        child = self.first_child(idx)
        return self.flags_col[child] if child < self.n else 0

    def child_symbol(self, idx: int) -> int:
        child = self.first_child(idx)
        return self.symbols[child] if child < self.n else 0
