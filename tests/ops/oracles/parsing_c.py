"""Oracles of vyre_vk/ops/parsing/c: the cursor-walk model of the C lexer (parsing_models.c_lex),
FNV-1a keyword lookup, and the digraph rewrite, over random C-like source.

``c_source`` writes random text from C's token classes (identifiers, some past the 257-byte cap,
keywords, decimal/hex/float literals with exponents, prefixed and plain string and char literals
with valid and invalid escapes, every operator, line and block comments, directives with line
splices, blanks, CR LF) and sometimes ends inside a literal or comment. The c_lexer oracle
runs with grid (1,1,1): only invocation 0 works, so the result is the same and the reference's
lock-step arrays stay 256 lanes wide (it is ~2 ms per lexed position at 13 workgroups).

LITERAL_BUDGET. The reference charges a loop's iterations times its body's static weight against a
20M-step budget: the lexer's walk costs 1430 per byte (4.7M at 3300 bytes) and a literal's scan
1382 per iteration, running to min(4096, bytes left) whatever the literal's length, so a literal
early in a 3300-byte haystack costs 4.5M. The c_lexer oracle therefore puts literals only in the
last 640 bytes; tests/ops/parsing/ lexes literal-dense text and real headers without a budget.
"""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS, c_keyword_map_words

from .core import U32, oracle, ru32
from .parsing_models import DIGRAPH_PAIRS, c_digraphs, c_keyword_types, c_lex

_KW = [k for k, _ in C_KEYWORDS]
_OPS = [s for _, s in T.THREE_BYTE_OPS + T.TWO_BYTE_OPS + T.ONE_BYTE_OPS] + ["..."]
_ESC = ["\\n", "\\t", "\\\\", "\\'", '\\"', "\\x4F", "\\u12aB", "\\U0001F600", "\\0", "\\q", "\\x", "\\u12"]
_DIGRAPHS = ["<:", ":>", "<%", "%>", "%:", "%:%:"]


def _ident(rng) -> str:
    first = "abcxyzABZ_"
    rest = "abcdefghijklmnopqrstuvwxyz_0123456789ABCZ"
    n = 300 if rng.random() < 0.01 else int(rng.integers(1, 12))
    return first[rng.integers(len(first))] + "".join(rest[i] for i in rng.integers(0, len(rest), n - 1))


def _number(rng) -> str:
    forms = ["{d}", "0x{h}", "{d}.{d}", ".{d}", "{d}e{s}{d}", "{d}.{d}E{d}", "0x{h}p{s}{d}", "{d}u", "{d}ULL",
             "{d}.{d}f", "1e", "0x1e+5"]
    f = forms[rng.integers(len(forms))]
    sign = ["", "+", "-"][rng.integers(3)]
    return f.format(d=str(rng.integers(0, 100000)), h="%X" % rng.integers(0, 1 << 30), s=sign)


def _literal(rng) -> str:
    quote = '"' if rng.random() < 0.7 else "'"
    body = "".join(_ESC[rng.integers(len(_ESC))] if rng.random() < 0.2 else "a b#/*%:"[rng.integers(8)]
                   for _ in range(int(rng.integers(0, 10))))
    prefix = ["", "", "", "L", "u", "U", "u8"][rng.integers(7)]
    return prefix + quote + body + (quote if rng.random() < 0.97 else "\n")


def _piece(rng, digraphs: bool, literals: bool) -> str:
    # Literals, comments and directives are rarer than in real code: each one's scan loop runs to
    # its cap (4096..16384 iterations, clipped at the haystack end) whatever its length, and the
    # reference charges every iteration against its step budget.
    r = rng.random()
    if r < 0.34:
        return _ident(rng)
    if r < 0.46:
        return _KW[rng.integers(len(_KW))]
    if r < 0.58:
        return _number(rng)
    if r < 0.61:
        return _literal(rng) if literals else _ident(rng)
    if r < 0.89:
        return _OPS[rng.integers(len(_OPS))]
    if r < 0.905:
        return "// line " + _ident(rng) + "\n"
    if r < 0.92:
        return "/* block\n " + _ident(rng) + " */"
    if r < 0.935:
        return "\n#define " + _ident(rng) + "(a) a ## b \\\n  + c" + ("\\\r\n x" if rng.random() < 0.3 else "") + "\n"
    if r < 0.97:
        return "\r\n" if rng.random() < 0.3 else "\n"
    # digraph spellings, fenced by identifiers so their rewrites cannot overlap
    return (" x1 x2 x3 " + _DIGRAPHS[rng.integers(len(_DIGRAPHS))] + " y1 y2 y3 ") if digraphs else " "


def c_source(rng, n: int, digraphs: bool = False, literals_from: int = 0) -> bytes:
    """`n` bytes of random C-like source (see the module doc), string and char literals only from
    byte `literals_from` on."""
    parts, size = [], 0
    while size < n:
        piece = _piece(rng, digraphs, size >= literals_from) + [" ", "", "\t", "  "][rng.integers(4)]
        parts.append(piece)
        size += len(piece)
    text = "".join(parts).encode()[:n]
    if rng.random() < 0.5:
        # end inside a block comment or literal half the time
        tail = [b"/* open", b'"open', b"'o"][rng.integers(3)]
        text = text[:n - len(tail)] + tail
    return text


def lexed(src: bytes, initial: dict, names: tuple[str, str, str, str], n: int) -> dict:
    """The lexer's result buffers: the model's rows over each buffer's initial contents."""
    rows = c_lex(src, n)
    out = {name: initial[name].copy() for name in names[:3]}
    for i, row in enumerate(rows):
        for name, value in zip(names[:3], row):
            out[name][i] = value
    out[names[3]] = np.asarray([len(rows)], U32)
    return out


def _lexer_inputs(names, n, rng, digraphs=False, literals_from=0):
    src = c_source(rng, n, digraphs, literals_from)
    return {"haystack": np.frombuffer(src, np.uint8).astype(U32), **{k: ru32(rng, n) for k in names[:3]},
            names[3]: ru32(rng, 1)}


_LEX = ("out_tok_types", "out_tok_starts", "out_tok_lens", "out_counts")


@oracle("vyre-libs::parsing::c_lexer", {"haystack_len": 3300}, 0, "cursor-walk model of the rules: exact",
        grid=(1, 1, 1))
def _():
    def numpy(ins, p):
        src = (ins["haystack"] & 0xFF).astype(np.uint8).tobytes()
        return lexed(src, ins, _LEX, p["haystack_len"])
    # literals only in the last 640 bytes, where their scans are clipped (see LITERAL_BUDGET)
    return lambda rng, p: _lexer_inputs(_LEX, p["haystack_len"], rng, literals_from=p["haystack_len"] - 640), numpy


_SP = ("tok_types", "tok_starts", "tok_lens", "tok_counts")


@oracle("vyre-libs::parsing::c11_lex_single_pass", {"haystack_len": 700, "digraph_capacity": 700}, 0,
        "lexer model then the digraph rewrite of its first digraph_capacity rows: exact")
def _():
    def numpy(ins, p):
        src = (ins["haystack"] & 0xFF).astype(np.uint8).tobytes()
        out = lexed(src, ins, _SP, p["haystack_len"])
        cap = p["digraph_capacity"]
        t = out["tok_types"][:cap].tolist()
        # defined only for digraph lanes of workgroup 0 (single_pass.py): later ones race the lexer
        assert not any((a, b) in DIGRAPH_PAIRS for a, b in zip(t[256:], t[257:])), "digraph pair past token 256"
        out["tok_types"][:cap] = np.asarray(c_digraphs(t, cap), U32)
        return out
    return lambda rng, p: _lexer_inputs(_SP, p["haystack_len"], rng, digraphs=True), numpy


def digraph_stream(rng, n: int) -> np.ndarray:
    """Random token kinds with digraph pairs (and ``%:%:``) fenced by >= 4 other kinds."""
    fill = np.asarray([k for k in range(0, 172) if k not in (T.TOK_LT, T.TOK_GT, T.TOK_COLON, T.TOK_PERCENT)]
                      + [T.TOK_COMMENT, 0xDEAD], U32)
    pairs = [[T.TOK_LT, T.TOK_COLON], [T.TOK_COLON, T.TOK_GT], [T.TOK_LT, T.TOK_PERCENT],
             [T.TOK_PERCENT, T.TOK_GT], [T.TOK_PERCENT, T.TOK_COLON], [T.TOK_PERCENT, T.TOK_COLON] * 2,
             [T.TOK_LT], [T.TOK_PERCENT]]
    out: list[int] = []
    while len(out) < n:
        out += fill[rng.integers(0, fill.size, int(rng.integers(4, 9)))].tolist()
        out += pairs[rng.integers(len(pairs))]
    return np.asarray(out[:n], U32)


@oracle("vyre-libs::parsing::c11_lex_digraphs", {"tok_count": 41000}, 0, "pairwise rewrite model: exact")
def _():
    def inputs(rng, p):
        n = p["tok_count"]
        return {"tok_types": digraph_stream(rng, n), "tok_starts": ru32(rng, n), "tok_lens": ru32(rng, n)}

    def numpy(ins, p):
        return {"tok_types": np.asarray(c_digraphs(ins["tok_types"], p["tok_count"]), U32),
                "tok_starts": ins["tok_starts"].copy(), "tok_lens": ins["tok_lens"].copy()}
    return inputs, numpy


def keyword_inputs(rng, p: dict, packed: bool) -> dict:
    """Words (keywords, identifiers, near misses) at their offsets in the haystack; token rows of
    them as identifiers or other kinds (left alone), garbage past counts[0]."""
    words, pos, starts = [], 0, []
    count = p["max_tokens"] - 7
    for _ in range(count):
        r = rng.random()
        w = (_KW[rng.integers(len(_KW))] if r < 0.5 else _ident(rng)[:20] if r < 0.8 else
             _KW[rng.integers(len(_KW))][:-1] + "x")
        starts.append(pos)
        words.append(w)
        pos += len(w) + 1
    text = " ".join(words).encode()
    assert len(text) <= p["haystack_len"], "keyword oracle: raise haystack_len"
    text += b" " * (p["haystack_len"] - len(text))
    m = p["max_tokens"]
    types = ru32(rng, m)
    types[:count] = np.where(rng.random(count) < 0.9, T.TOK_IDENTIFIER, rng.integers(0, 60, count)).astype(U32)
    lens = ru32(rng, m)
    lens[:count] = [len(w) for w in words]
    st = ru32(rng, m)
    st[:count] = starts
    hay = (np.frombuffer(text + bytes(-len(text) % 4), "<u4").astype(U32) if packed
           else np.frombuffer(text, np.uint8).astype(U32))
    return {"tok_types": types, "tok_starts": st, "tok_lens": lens, "counts": np.asarray([count], U32),
            "haystack": hay, "keyword_map": np.asarray(c_keyword_map_words(), U32)}


def _keyword_numpy(packed: bool):
    def numpy(ins, p):
        hay = ins["haystack"]
        if packed:
            data = hay.astype("<u4").tobytes()

            def byte_at(i):
                return data[i] if i < len(data) else 0
        else:
            def byte_at(i):
                return int(hay[i]) if i < hay.size else 0
        return {"tok_types": np.asarray(c_keyword_types(ins["tok_types"], ins["tok_starts"], ins["tok_lens"],
                                                        int(ins["counts"][0]), byte_at, ins["keyword_map"]), U32)}
    return numpy


for _op, _packed in (("c_keyword", False), ("c_keyword_packed_haystack", True)):
    @oracle("vyre-libs::parsing::" + _op, {"max_tokens": 10000, "haystack_len": 120000}, 0,
            "FNV-1a of each identifier's bytes looked up in the keyword rows: exact")
    def _(packed=_packed):
        return (lambda rng, p: keyword_inputs(rng, p, packed)), _keyword_numpy(packed)


# [parsing-c11] oracles of vyre_vk/ops/parsing/c/ extract.py, call_graph.py, gnu_passes.py,
# layout.py and vast.py (test_registry looks for them here): models and inputs in parsing_c11_models.py.
from .parsing_c11_models import C11_ORACLES  # noqa: E402
from . import parsing_c11_classify  # noqa: E402,F401  (classify/: adds its oracle to C11_ORACLES)
from . import parsing_c11_expr_models  # noqa: E402,F401  (adds the expression-shape oracle)

for _op, (_params, _why, _make, _repeats) in C11_ORACLES.items():
    oracle(_op, _params, 0, _why, repeats=_repeats)(lambda make=_make: make())
