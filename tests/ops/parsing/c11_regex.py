"""An independent C11 tokenizer written from the lexical grammar of ISO C11 6.4 (preprocessing
tokens) with regular expressions, for checking vyre's C lexer on real headers.

Comments are dropped (6.4.9), a ``#`` first on a line (after blanks) makes the line up to its
unspliced newline one directive token (vyre keeps directives whole), and the rest are
preprocessing tokens by longest match: identifiers (6.4.2), pp-numbers (6.4.8; classified float
when decimal with ``.``/``e`` or hex with ``p``), character constants and string literals with
their encoding prefixes (6.4.4.4, 6.4.5), and the punctuators of 6.4.6 other than the digraphs
(vyre lexes those as two tokens and rewrites them in a later pass).

Example::

    >>> [(k, s) for k, s, _ in tokenize(b"#include <x.h>\\nint a = 0x1F; /* c */ s = u8\\"x\\";")]
    [('directive', 0), ('identifier', 15), ('identifier', 19), ('punct', 21), ('integer', 23), ('punct', 27), \
('identifier', 37), ('punct', 39), ('string', 41), ('punct', 46)]
"""
from __future__ import annotations

import re

PUNCTUATORS = sorted("""[ ] ( ) { } . -> ++ -- & * + - ~ ! / % << >> < > <= >= == != ^ | && || ? : ; ...
= *= /= %= += -= <<= >>= &= ^= |= , # ##""".split(), key=len, reverse=True)
_TOKEN = re.compile(rb"""
  (?P<comment>//[^\n]*|/\*.*?\*/)
 |(?P<string>(?:u8|[uUL])?"(?:\\.|[^\\"\n])*")
 |(?P<char>[uUL]?'(?:\\.|[^\\'\n])*')
 |(?P<number>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*)
 |(?P<identifier>[A-Za-z_][A-Za-z0-9_]*)
 |(?P<punct>""" + b"|".join(re.escape(p.encode()) for p in PUNCTUATORS) + rb""")
 |(?P<space>[ \t\r\n\f\v]+|\\\r?\n)
 |(?P<other>.)
""", re.X | re.S)
_DIRECTIVE = re.compile(rb"[ \t]*#(?:[^\n\\]|\\.|\\\n)*", re.S)
_FLOAT_DEC = re.compile(rb"\.|[eE]")
_FLOAT_HEX = re.compile(rb"[pP]")


def tokenize(src: bytes) -> list[tuple[str, int, int]]:
    """(kind, start, length) of each token: directive, identifier, integer, float, string, char,
    punct (comments and blanks dropped; a stray byte is 'other')."""
    out, pos, line_start = [], 0, True
    while pos < len(src):
        if line_start:
            d = _DIRECTIVE.match(src, pos)
            if d:
                hash_at = src.index(b"#", pos)
                out.append(("directive", hash_at, d.end() - hash_at))
                pos = d.end()
                continue
        m = _TOKEN.match(src, pos)
        kind, text = m.lastgroup, m.group()
        if kind == "number":
            hexa = text[:2] in (b"0x", b"0X")
            kind = "float" if (_FLOAT_HEX.search(text) if hexa else _FLOAT_DEC.search(text)) else "integer"
        if kind not in ("comment", "space"):
            out.append((kind, pos, len(text)))
        # a comment is one space (translation phase 3), so it keeps a line's start
        line_start = (kind == "space" and b"\n" in text) or (line_start and kind in ("space", "comment"))
        pos = m.end()
    return out
