"""Plain-Python models of vyre's lexers, written from the rules the op modules document (a cursor
walk over bytes, not a walk of the IR): the oracles in parsing_c.py and parsing_python.py and the
real-file tests in tests/ops/parsing/ compare the ops with them.

Example::

    >>> [(t, s, n) for t, s, n in c_lex(b"int x = 0x1F;")]
    [(1, 0, 3), (1, 4, 1), (30, 6, 1), (2, 8, 4), (16, 12, 1)]
"""
from __future__ import annotations

from vyre_vk.ops.parsing.c import tokens as T

IDENT_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
IDENT_CONT = IDENT_START | frozenset(b"0123456789")
DIGITS = frozenset(b"0123456789")
HEX = DIGITS | frozenset(b"abcdefABCDEF")
SIMPLE_ESCAPES = frozenset(b"'\"?\\abefnrtv\n\r")
_OPS3 = [(tok, s.encode()) for tok, s in T.THREE_BYTE_OPS]
_OPS2 = [(tok, s.encode()) for tok, s in T.TWO_BYTE_OPS]
_OPS1 = {ord(s): tok for tok, s in reversed(T.ONE_BYTE_OPS)}


def c_lex(src: bytes, haystack_len: int | None = None) -> list[tuple[int, int, int]]:
    """(type, start, len) of every stored token of vyre's serial C lexer over `src` (one byte per
    position; `haystack_len`, the op's static length, bounds escape and last-byte lookahead)."""
    n = len(src)
    hl = n if haystack_len is None else haystack_len

    def b(i: int) -> int:            # a load: 0 past the bound length
        return src[i] if 0 <= i < n else 0

    def bz(i: int) -> int:           # byte_at_or_zero: 0 past the static length
        return b(i) if i < hl else 0

    def valid_escape(at: int, e: int) -> bool:
        def hexes(k: int) -> bool:
            return all(bz(at + j) in HEX for j in range(1, k + 1))
        return (e in SIMPLE_ESCAPES or 48 <= e <= 55 or (e in b"xX" and hexes(1))
                or (e == ord("u") and hexes(4)) or (e == ord("U") and hexes(8)))

    rows, cursor, line_ok = [], 0, True
    while cursor < n:
        pos = cursor
        c, prev, nx, nx2 = b(pos), b(pos - 1) if pos else 0, b(pos + 1), b(pos + 2)
        tok, ln = None, 1
        if c == ord("#") and line_ok:
            tok, spliced_cr = T.TOK_PREPROC, False
            for s in range(pos + 1, min(pos + 1 + T.MAX_PREPROC_SCAN, n)):
                sb = b(s)
                if sb in b"\n\r":
                    if b(s - 1) == ord("\\") or (sb == ord("\n") and spliced_cr):
                        ln, spliced_cr = ln + 1, sb == ord("\r")
                    else:
                        break
                else:
                    ln += 1
        elif c == ord("/") and nx == ord("/"):
            tok, ln = T.TOK_COMMENT, 2
            for s in range(pos + 2, min(pos + 2 + T.MAX_COMMENT_SCAN, n)):
                if b(s) == ord("\n"):
                    break
                ln += 1
        elif c == ord("/") and nx == ord("*"):
            tok, ln, closed = T.TOK_COMMENT, 2, False
            for s in range(pos + 2, min(pos + 2 + T.MAX_BLOCK_COMMENT_SCAN, n)):
                ln += 1
                if b(s) == ord("*") and b(s + 1) == ord("/"):
                    ln, closed = ln + 1, True
                    break
            if not closed:
                tok = T.TOK_ERR_UNTERMINATED_COMMENT
        else:
            u8 = c == ord("u") and nx == ord("8")
            for kind, q in ((T.TOK_STRING, ord('"')), (T.TOK_CHAR, ord("'"))):
                if tok is None and ((c in b"LuU" and nx == q) or (u8 and nx2 == q)):
                    tok, ln = kind, 3 if u8 else 2
            if tok is None and c in IDENT_START and prev not in IDENT_CONT:
                tok = T.TOK_IDENTIFIER
                for s in range(pos + 1, min(pos + 1 + T.MAX_IDENT_SCAN, n)):
                    if b(s) not in IDENT_CONT:
                        break
                    ln += 1
            if tok is None and ((c in DIGITS and prev not in IDENT_CONT) or (c == ord(".") and nx in DIGITS)):
                is_float = c == ord(".")
                tok = T.TOK_INTEGER
                for s in range(pos + 1, min(pos + 1 + T.MAX_NUMBER_SCAN, n)):
                    sb, sp, sn = b(s), b(s - 1), b(s + 1)
                    exp_start = sb in b"eEpP" and (sn in DIGITS or sn in b"+-")
                    sign = sb in b"+-" and sp in b"eEpP"
                    if not (sb in IDENT_CONT or sb == ord(".") or sign):
                        break
                    ln += 1
                    is_float = is_float or sb == ord(".") or exp_start
                tok = T.TOK_FLOAT if is_float else T.TOK_INTEGER
            if tok is None and c in b"\"'":
                tok = T.TOK_STRING if c == ord('"') else T.TOK_CHAR
            if tok in (T.TOK_STRING, T.TOK_CHAR):
                tok, ln = _c_literal(b, valid_escape, tok, pos, c, nx, ln, n)
            if tok is None:
                tok, ln = _c_operator(c, nx, nx2)
        if tok is not None and tok != T.TOK_COMMENT:
            rows.append((tok, pos, ln))
        last = bz(pos + max(ln - 1, 0)) if tok is not None else bz(pos)
        if tok == T.TOK_PREPROC or c in b"\n\r" or last in b"\n\r":
            line_ok = True
        elif not (line_ok and c in b" \t"):
            line_ok = False
        cursor += ln if tok is not None else 1
    return rows


def _c_literal(b, valid_escape, kind: int, pos: int, c: int, nx: int, ln: int, n: int) -> tuple[int, int]:
    offset = 0 if c in b"\"'" else (2 if c == ord("u") and nx == ord("8") else 1)
    quote = b(pos + offset)
    escaped = unterminated = invalid = done = False
    start = pos + offset + 1
    for s in range(start, min(start + T.MAX_LITERAL_SCAN, n)):
        ln += 1
        sb = b(s)
        if escaped:
            invalid = invalid or not valid_escape(s, sb)
            escaped = False
        elif sb == ord("\\"):
            escaped = True
        elif sb == quote:
            done = True
            break
        elif sb in b"\n\r":
            unterminated = done = True
            break
    unterminated = unterminated or not done
    if unterminated:
        return (T.TOK_ERR_UNTERMINATED_STRING if quote == ord('"') else T.TOK_ERR_UNTERMINATED_CHAR), ln
    return (T.TOK_ERR_INVALID_ESCAPE if invalid else kind), ln


def _c_operator(c: int, nx: int, nx2: int):
    for tok, s in _OPS3:
        if (c, nx, nx2) == tuple(s):
            return tok, 3
    for tok, s in _OPS2:
        if (c, nx) == tuple(s):
            return tok, 2
    if (c, nx, nx2) == tuple(b"..."):
        return T.TOK_ELLIPSIS, 3
    return (_OPS1[c], 1) if c in _OPS1 else (None, 1)


DIGRAPH_PAIRS = {(T.TOK_LT, T.TOK_COLON): T.TOK_LBRACKET, (T.TOK_COLON, T.TOK_GT): T.TOK_RBRACKET,
                 (T.TOK_LT, T.TOK_PERCENT): T.TOK_LBRACE, (T.TOK_PERCENT, T.TOK_GT): T.TOK_RBRACE,
                 (T.TOK_PERCENT, T.TOK_COLON): T.TOK_HASH}


def c_digraphs(types, count: int) -> list[int]:
    """vyre's digraph rewrite of ``types[0..count]`` (the rest kept), every lane reading the input
    as it was. Asserts that the result does not depend on the order lanes run in: no lane writes
    what another digraph lane's decision reads (its pair, and a ``%:%:`` or tail it sees),
    the tail of a ``%:%:`` excepted (its own pair is erased by the head, so it never rewrites)."""
    src = [int(x) for x in types]
    out = list(src)

    def at(i: int) -> int:
        return src[i] if 0 <= i < count else T.TOK_EOF
    pc = (T.TOK_PERCENT, T.TOK_COLON)
    writes, deps = {}, {}
    for t in range(count - 1):
        pair = (at(t), at(t + 1))
        if pair not in DIGRAPH_PAIRS:
            continue
        quad = pair == pc and (at(t + 2), at(t + 3)) == pc
        tail = t > 1 and (at(t - 2), at(t - 1)) == pc
        if quad:
            out[t:t + 4] = [T.TOK_HASHHASH] + [T.TOK_COMMENT] * 3
            writes[t] = {t, t + 1, t + 2, t + 3}
        elif not (pair == pc and tail):
            out[t:t + 2] = [DIGRAPH_PAIRS[pair], T.TOK_COMMENT]
            writes[t] = {t, t + 1}
        if not (pair == pc and tail and t - 2 in writes and len(writes[t - 2]) == 4):
            # writes only ever produce kinds outside the digraph alphabet, so they can break a
            # pair, a `%:%:` or a tail that is there, never make one
            deps[t] = {t, t + 1} | ({t + 2, t + 3} if quad else set()) | ({t - 2, t - 1} if tail else set())
    for t, need in deps.items():
        for other, w in writes.items():
            assert other == t or not (need & w or writes.get(t, set()) & w), (
                f"digraph lanes {t} and {other} overlap: the result would depend on lane order")
    return out


def fnv1a32_words(words) -> int:
    """FNV-1a 32 over whole u32 words (vyre xors each loaded word into the hash)."""
    h = 0x811C9DC5
    for w in words:
        h = ((h ^ int(w)) * 0x01000193) & 0xFFFFFFFF
    return h


def c_keyword_types(types, starts, lens, count: int, byte_at, keyword_map) -> list[int]:
    """Identifier tokens whose FNV-1a hash equals a keyword row's take the first such row's token."""
    table = {}
    for k in range(len(keyword_map) // 2):
        table.setdefault(int(keyword_map[2 * k]), int(keyword_map[2 * k + 1]))
    out = [int(x) for x in types]
    for t in range(min(count, len(out))):
        if out[t] == T.TOK_IDENTIFIER:
            h = fnv1a32_words(byte_at(int(starts[t]) + i) for i in range(int(lens[t])))
            out[t] = table.get(h, out[t])
    return out


PY_KEYWORDS = {b"def": 100, b"async": 101, b"class": 102, b"import": 103, b"from": 104, b"as": 105, b"with": 106,
               b"await": 107, b"match": 108, b"case": 109, b"except": 110}
PY_PUNCT = {ord(c): 10 + k for k, c in enumerate("()[]{}:,.=@*")}
PY_NEWLINE, PY_COMMENT, PY_STRING, PY_IDENT, PY_NUMBER = 4, 5, 3, 1, 2


def py_lex(src: bytes) -> dict[int, tuple[int, int]]:
    """{position: (type, len)} of vyre's sparse Python lexer: each byte decides on its own."""
    n = len(src)
    rows = {}
    hash_seen = False              # a '#' earlier on this line: this byte is comment text
    for t in range(n):
        ch = src[t]
        prev = src[t - 1] if t else 0
        tail = hash_seen
        tok = None
        if ch == ord("\n"):
            tok = (PY_NEWLINE, 1)
        elif ch == ord("#"):
            end = src.find(b"\n", t + 1)
            tok = (PY_COMMENT, (n if end < 0 else end) - t)
        elif ch in b"'\"":
            j, escaped = t + 1, False
            while j < n:
                if escaped:
                    escaped = False
                elif src[j] == ord("\\"):
                    escaped = True
                elif src[j] == ch:
                    break
                j += 1
            tok = (PY_STRING, min(j, n - 1) - t + 1)
        elif ch in IDENT_START and prev not in IDENT_CONT:
            j = t
            while j < n and src[j] in IDENT_CONT:
                j += 1
            tok = (PY_KEYWORDS.get(src[t:j], PY_IDENT), j - t)
        elif ch in DIGITS and prev not in IDENT_CONT:
            j = t
            while j < n and (src[j] in DIGITS or src[j] in b"_."):
                j += 1
            tok = (PY_NUMBER, j - t)
        elif ch in PY_PUNCT:
            tok = (PY_PUNCT[ch], 1)
        if tok is not None and not (tail and ch != ord("\n")):
            rows[t] = tok
        if ch == ord("\n"):
            hash_seen = False
        elif ch == ord("#"):
            hash_seen = True
    return rows
