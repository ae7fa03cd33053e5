"""The stdlib ``tokenize`` module's tokens of a Python source, mapped to what vyre's sparse Python
lexer writes at each byte (an independent model for the real-module tests).

``expected(src)`` returns ``{byte offset: (kind, len)}`` (kind 0: no token starts there) for every
offset it can predict from tokenize alone, plus vyre's two documented line rules: a byte after a
``#`` on its line emits nothing but ``\\n`` (vyre scans back for ``#`` without knowing strings), and
every ``\\n`` is a NEWLINE (vyre has no line joining, so a backslash-continued line's ``\\n`` too).
Mapped: NAME -> IDENTIFIER or one of vyre's 11 keywords (ASCII names), NUMBER -> NUMBER over its
leading ``[0-9_.]`` run (the rest of a hex/exponent/imaginary literal is left out), STRING -> its
prefix letters as an IDENTIFIER, then STRING at the quote: the literal's length for a one-quote
string, 2 for a triple-quoted one (vyre closes it at the second quote); the bytes inside a string
are left out (vyre classifies them like code). OP -> each byte of ( ) [ ] { } : , . = @ * as its
one-byte kind, any other operator byte nothing. COMMENT, NEWLINE, NL as they are; blanks nothing.

Example::

    >>> sorted(expected(b"def f(x): # c\\n")[0].items())[:4]
    [(0, (100, 3)), (1, (0, 0)), (2, (0, 0)), (3, (0, 0))]
"""
from __future__ import annotations

import io
import tokenize

from tests.ops.oracles.parsing_models import PY_KEYWORDS, PY_PUNCT

NONE, IDENT, NUMBER, STRING, NEWLINE, COMMENT = 0, 1, 2, 3, 4, 5


def expected(src: bytes) -> tuple[dict[int, tuple[int, int]], int]:
    """(the predicted rows, the number of bytes inside strings or non-ASCII names left out)."""
    line_starts = [0]
    for line in src.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    lines = src.decode("utf-8").splitlines(keepends=True)

    def offset(row: int, col: int) -> int:
        return line_starts[row - 1] + len(lines[row - 1][:col].encode("utf-8")) if row <= len(lines) else len(src)

    rows: dict[int, tuple[int, int]] = {p: (NONE, 0) for p in range(len(src))}
    skipped: set[int] = set()
    fstrings: list[int] = []          # Python >= 3.12 splits f-strings: their starts, innermost last
    for tok in tokenize.tokenize(io.BytesIO(src).readline):
        if tok.type in (tokenize.ENCODING, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
            continue
        s, e = offset(*tok.start), offset(*tok.end)
        text = src[s:e]
        name = tokenize.tok_name[tok.type]
        if name == "FSTRING_START":
            fstrings.append(s)
            continue
        if name == "FSTRING_END":     # the whole f-string as one STRING token, as 3.11 gives it
            start = fstrings.pop()
            if not fstrings:
                _string(rows, skipped, start, e, src[start:e])
            continue
        if fstrings:
            continue
        if tok.type == tokenize.NAME:
            if text.isascii():
                rows[s] = (PY_KEYWORDS.get(text, IDENT), len(text))
            else:
                skipped.update(range(s, e))
        elif tok.type == tokenize.NUMBER:
            if text[:1].isdigit():
                run = len(text) - len(text.lstrip(b"0123456789_."))
                rows[s] = (NUMBER, run)
                skipped.update(range(s + run, e))
            else:                        # ".5": a DOT, then a number
                rows[s] = (PY_PUNCT[ord(".")], 1)
                skipped.update(range(s + 1, e))
        elif tok.type == tokenize.STRING:
            _string(rows, skipped, s, e, text)
        elif tok.type == tokenize.COMMENT:
            rows[s] = (COMMENT, len(text))
        elif tok.type in (tokenize.NEWLINE, tokenize.NL):
            if text:
                rows[s] = (NEWLINE, 1)
        elif tok.type == tokenize.OP:
            for i, ch in enumerate(text):
                rows[s + i] = (PY_PUNCT[ch], 1) if ch in PY_PUNCT else (NONE, 0)
        else:
            raise AssertionError(f"unexpected token {tokenize.tok_name[tok.type]} {text!r} at byte {s}")
    hashed = False
    for p, ch in enumerate(src):      # vyre's line rules (see the module doc)
        if ch == ord("\n"):
            hashed = False
            if p not in skipped:
                rows[p] = (NEWLINE, 1)
        elif hashed and p not in skipped:
            rows[p] = (NONE, 0)      # comment text, a second '#' included
        if ch == ord("#"):
            hashed = True
    for p in skipped:
        rows.pop(p, None)
    return rows, len(skipped)


def _string(rows: dict, skipped: set, s: int, e: int, text: bytes) -> None:
    """Prefix letters an IDENTIFIER, the opening quote a STRING (see the module doc), the rest left out."""
    k = len(text) - len(text.lstrip(b"rRbBuUfF"))
    if k:
        rows[s] = (IDENT, k)
    triple = text[k:k + 3] in (b'"""', b"'''")
    rows[s + k] = (STRING, 2 if triple else len(text) - k)
    skipped.update(range(s + k + 1, e))
