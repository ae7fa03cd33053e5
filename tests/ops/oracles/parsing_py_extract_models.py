"""Plain-Python models of vyre's Python 3.12 structural extractors (python312_extract_*), written
from the rules in vyre_vk/ops/parsing/python/structure.py and calls.py (a walk over the sorted
token positions, not over the IR).

`types`, `starts`, `lens` are the sparse token rows (type 0: no token at that byte). Each model
returns its records in invocation order, the order the reference's atomics (and lavapipe's, in one
workgroup) hand out slots.

Example::

    >>> t = Tokens([100, 0, 0, 0, 1, 10, 11, 16, 0], list(range(9)), [3, 0, 0, 0, 1, 1, 1, 1, 0])
    >>> structure(t)
    [[1, 4, 1, 5, 6, 7]]
"""
from __future__ import annotations

import bisect

INV = 0xFFFFFFFF
MASK = 0xFFFFFFFF
IDENT, LP, RP, LB, RB, COLON, COMMA, DOT, EQ, AT = 1, 10, 11, 12, 13, 16, 17, 18, 19, 20
DEF, ASYNC, CLASS, IMPORT, FROM, WITH, AWAIT = 100, 101, 102, 103, 104, 106, 107


class Tokens:
    """Sparse token rows with vyre's load rule (0 out of bounds) and the token searches."""

    def __init__(self, types, starts, lens) -> None:
        self.types, self.starts, self.lens = [int(x) for x in types], [int(x) for x in starts], [int(x) for x in lens]
        self.n = len(self.types)
        self.pos = [i for i, x in enumerate(self.types) if x]

    def ty(self, p: int) -> int:
        return self.types[p] if p < self.n else 0

    def start(self, p: int) -> int:
        return self.starts[p] if p < self.n else 0

    def ln(self, p: int) -> int:
        return self.lens[p] if p < self.n else 0

    def next(self, p: int) -> int:
        """First token at or after p (p taken mod 2^32: INVALID + 1 searches from 0)."""
        i = bisect.bisect_left(self.pos, p & MASK)
        return self.pos[i] if i < len(self.pos) else INV

    def prev(self, p: int) -> int:
        """Last token strictly before p."""
        i = bisect.bisect_left(self.pos, p)
        return self.pos[i - 1] if i > 0 else INV

    def match(self, open_pos: int, o: int, c: int) -> int:
        """The `c` after open_pos at depth 0 of `o`s (open_pos's own token not looked at)."""
        depth = 0
        for p in self.pos[bisect.bisect_left(self.pos, (open_pos + 1) & MASK):]:
            if self.types[p] == o:
                depth += 1
            elif self.types[p] == c:
                if depth == 0:
                    return p
                depth -= 1
        return INV

    def dotted_end(self, first: int, guard: bool = True) -> int:
        """Last identifier of up to 8 '.identifier' steps from `first`; with guard False a dead
        cursor (INVALID) searches again from byte 0, as vyre's decorator loop does."""
        end = cursor = first
        for _ in range(8):
            dot = INV if guard and cursor == INV else self.next(cursor + 1)
            after = self.next(dot + 1) if self.ty(dot) == DOT else INV
            if self.ty(after) == IDENT:
                end = cursor = after
            else:
                cursor = INV
        return end

    def span(self, first: int, last: int) -> int:
        return (self.start(last) - self.start(first) + self.ln(last)) & MASK


def structure(tk: Tokens) -> list[list[int]]:
    out = []
    for t in range(tk.n):
        tok, kind, kw = tk.types[t], 0, INV
        if tok == DEF:
            kind, kw = 1, t
        elif tok == CLASS:
            kind, kw = 3, t
        nxt = tk.next(t + 1)
        if tok == ASYNC and tk.ty(nxt) == DEF:
            kind, kw = 2, nxt
        name = tk.next(kw + 1)
        if kind == 0 or tk.ty(name) != IDENT:
            continue
        post = tk.next(name + 1)
        after_tp = tk.next(tk.match(post, LB, RB) + 1) if tk.ty(post) == LB else post
        p_start = p_end = INV
        if tk.ty(after_tp) == LP:
            p_start, p_end = after_tp, tk.match(after_tp, LP, RP)
        after_p = tk.next(p_end + 1) if p_end != INV else after_tp
        colon = after_p if tk.ty(after_p) == COLON else INV
        out.append([kind, tk.start(name), tk.ln(name), p_start, p_end, colon])
    return out


def imports(tk: Tokens) -> list[list[int]]:
    out = []
    for t in range(tk.n):
        prev, kind = tk.prev(t), 0
        if tk.types[t] == IDENT:
            kind = {IMPORT: 1, FROM: 2, COMMA: 1}.get(tk.ty(prev), 0)
        if kind:
            end = tk.dotted_end(t)
            out.append([kind, tk.start(t), tk.span(t, end), prev, end, tk.next(t + 1)])
    return out


def with_blocks(tk: Tokens) -> list[list[int]]:
    out = []
    for t in range(tk.n):
        tok, with_pos, flags = tk.types[t], INV, 0
        if tok == WITH and tk.ty(tk.prev(t)) != ASYNC:
            with_pos = t
        nxt = tk.next(t + 1)
        if tok == ASYNC and tk.ty(nxt) == WITH:
            with_pos, flags = nxt, 1
        mgr = tk.next(with_pos + 1)
        if with_pos == INV or tk.ty(mgr) != IDENT:
            continue
        end = tk.dotted_end(mgr)
        colon = next((p for p in tk.pos if p > end and tk.types[p] == COLON), INV)
        out.append([tk.start(mgr), tk.span(mgr, end), with_pos, colon, flags, 0])
    return out


def calls(tk: Tokens, kw_initial: int) -> tuple[list[list[int]], list[list[int]]]:
    """(call records, keyword-argument records). kw_base is `kw_initial` for every call: valid
    when only the last call head adds keyword arguments (vyre's race, see calls.py)."""
    out, kws = [], []
    for t in range(tk.n):
        prev = tk.prev(t)
        head = tk.types[t] == IDENT and tk.ty(prev) != DOT
        end = tk.dotted_end(t) if head else t
        after = tk.next(end + 1)
        rparen = tk.match(after, LP, RP)
        if not (head and tk.ty(after) == LP and rparen != INV):
            continue
        count = paren = bracket = 0
        for p in range(after + 1, rparen):
            k = tk.types[p]
            paren += (k == LP) - (k == RP and paren > 0)
            bracket += (k == LB) - (k == RB and bracket > 0)
            if k == IDENT and paren == 0 and bracket == 0 and tk.ty(tk.next(p + 1)) == EQ \
                    and tk.ty(tk.prev(p)) != DOT:
                kws.append([tk.start(p), tk.ln(p)])
                count += 1
        out.append([tk.start(t), tk.span(t, end), after, rparen, kw_initial, count, int(tk.ty(prev) == AWAIT)])
    return out, kws


def decorators(tk: Tokens) -> list[list[int]]:
    out = []
    for t in range(tk.n):
        name = tk.next(t + 1)
        if tk.types[t] != AT or tk.ty(name) != IDENT:
            continue
        end = tk.dotted_end(name, guard=False)
        after = tk.next(end + 1)
        target = tk.next(tk.match(name, LP, RP) + 1) if tk.ty(after) == LP else tk.next(end + 1)
        kind, tname = {DEF: 1, CLASS: 3, ASYNC: 2}.get(tk.ty(target), 0), INV
        if kind in (1, 3):
            tname = tk.next(target + 1)
        elif kind == 2:
            tname = tk.next(tk.next(target + 1) + 1)
        out.append([tk.start(name), tk.span(name, end), kind, tk.start(tname), tk.ln(tname), target])
    return out


def place(initial, count0: int, recs: list[list[int]]) -> tuple[list[int], int]:
    """Records written at count0, count0 + w, .. into a copy of `initial` (out-of-bounds words
    dropped), and the final counter."""
    buf, slot = [int(x) for x in initial], count0
    for rec in recs:
        for i, w in enumerate(rec):
            if (slot + i) & MASK < len(buf):
                buf[(slot + i) & MASK] = w
        slot = (slot + len(rec)) & MASK
    return buf, slot
