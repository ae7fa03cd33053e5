"""The Python 3.12 extractors over standard-library modules nobody here wrote (json/decoder.py,
contextlib.py, abc.py of /usr/lib/python3.11, else this interpreter's), against the token-walk
models (tests/ops/oracles/parsing_py_extract_models.py), the reference, and the stdlib ``ast``
module's view.

The extractors scan the token stream once or more per byte (O(n^2)), so each module is cut into
windows of at most WINDOW bytes at statement starts (ast's, a decorated definition from its first
decorator): no definition header, import, call or with-header spans a cut. Vulkan runs every
window and must equal the model (records compared as multisets: with several workgroups the
atomic slot order is the GPU's; kw_base, vyre's racy read, is left out); the reference runs one
window per module, tokens from the lexer op, and must equal Vulkan and the model exactly.

The ast view: every definition, import, with header, decorator, dotted call and keyword argument
ast sees is among the records at its byte offset; records ast does not see must be ones vyre's
rules explain: inside a string literal (the lexer tokenizes string contents), a keyword vyre's
lexer does not know (``if (x)``, ``return (y)`` read as calls), a def/class name before '(', or
an import record for an identifier after any ','.
"""
from __future__ import annotations

import ast
import io
import keyword
import sysconfig
import tokenize
from pathlib import Path

import numpy as np
import pytest

from vyre_vk.ops.parsing.python.calls import python312_extract_calls, python312_extract_decorators
from vyre_vk.ops.parsing.python.lex import python312_lexer
from vyre_vk.ops.parsing.python.structure import (python312_extract_imports, python312_extract_structure,
                                                  python312_extract_with_blocks)

from ..harness import run_both
from ..oracles import parsing_py_extract_models as M
from ..oracles.parsing_models import py_lex

U32 = np.uint32
WINDOW = 2048      # json/decoder.py has a 1722-byte statement (JSONDecoder's docstring)
REF_WINDOW = 1024  # the reference's window (its cost grows as the square)
_STDLIB = next(d for d in (Path("/usr/lib/python3.11"), Path(sysconfig.get_paths()["stdlib"])) if d.is_dir())
_TOK = ("tok_types", "tok_starts", "tok_lens")
_REC = {"structure": (python312_extract_structure, M.structure), "imports": (python312_extract_imports, M.imports),
        "with": (python312_extract_with_blocks, M.with_blocks), "decorators": (python312_extract_decorators,
                                                                                M.decorators)}


def source(name: str) -> bytes:
    path = _STDLIB / name
    if not path.exists():
        pytest.skip(f"{path} is not on this system")
    return path.read_bytes()


def line_starts(src: bytes) -> list[int]:
    return [0] + [i + 1 for i, b in enumerate(src) if b == 10]


def windows(src: bytes, size: int = WINDOW) -> list[tuple[int, bytes]]:
    """(offset, bytes) pieces of at most `size` bytes, cut at statement starts."""
    lines = line_starts(src)
    cuts = {len(src)}
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.stmt):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            cuts.add(lines[first - 1])
    cuts, out, at = sorted(cuts), [], 0
    while at < len(src):
        end = max(c for c in cuts if at < c <= at + size)
        out.append((at, src[at:end]))
        at = end
    return out


def tokens(piece: bytes, size: int = WINDOW) -> dict:
    """The lexer model's sparse rows of `piece` padded with spaces to `size` bytes."""
    rows = py_lex(piece.ljust(size, b" "))
    types, starts, lens = (np.zeros(size, U32) for _ in range(3))
    for t, (tok, length) in rows.items():
        types[t], starts[t], lens[t] = tok, t, length
    return dict(zip(_TOK, (types, starts, lens)))


def run_records(kernel, ins: dict, words: int, name="out_records", count="out_counts") -> list[tuple]:
    out = kernel.run(ins)
    return rows(out[name], int(out[count][0]), words)


def rows(buf, count_words: int, words: int) -> list[tuple]:
    return [tuple(int(x) for x in buf[i:i + words]) for i in range(0, count_words, words)]


def record_ins(ins: dict, words: int) -> dict:
    n = len(ins["tok_types"])
    return {**ins, "out_records": np.zeros(n * words, U32), "out_counts": np.zeros(1, U32)}


def calls_ins(ins: dict) -> dict:
    n = len(ins["tok_types"])
    return {**ins, "out_calls": np.zeros(n * 7, U32), "out_call_counts": np.zeros(1, U32),
            "out_kwargs": np.zeros(n * 2, U32), "out_kw_counts": np.zeros(1, U32)}


def _shift(rec: tuple, base: int, fields: tuple) -> tuple:
    """Window-relative positions (INVALID_POS kept) to file offsets."""
    return tuple(w + base if i in fields and w != M.INV else w for i, w in enumerate(rec))


# positions inside each record kind: byte offsets (starts) and token positions
_POS_FIELDS = {"structure": (1, 3, 4, 5), "imports": (1, 3, 4, 5), "with": (0, 2, 3), "decorators": (0, 3, 5)}


def extract(kind: str, src: bytes, device) -> list[tuple]:
    """Every window of `src` through one extractor on Vulkan, checked against the model; the
    records in file offsets."""
    builder, model = _REC[kind]
    kernel, out = device.compile(builder(*_TOK, "out_records", "out_counts", WINDOW)), []
    for base, piece in windows(src):
        ins = tokens(piece)
        got = run_records(kernel, record_ins(ins, 6), 6)
        want = [tuple(r) for r in model(M.Tokens(*(ins[k] for k in _TOK)))]
        assert sorted(got) == sorted(want), f"{kind} window at {base}: Vulkan vs model"
        out += [_shift(r, base, _POS_FIELDS[kind]) for r in got]
    return out


def extract_calls(src: bytes, device) -> tuple[list[tuple], list[tuple]]:
    kernel, calls, kwargs = device.compile(python312_extract_calls(*_TOK, "out_calls", "out_call_counts",
                                                                   "out_kwargs", "out_kw_counts", WINDOW)), [], []
    for base, piece in windows(src):
        ins = tokens(piece)
        out = kernel.run(calls_ins(ins))
        got_c = rows(out["out_calls"], int(out["out_call_counts"][0]), 7)
        got_k = rows(out["out_kwargs"], int(out["out_kw_counts"][0]), 2)
        want_c, want_k = M.calls(M.Tokens(*(ins[k] for k in _TOK)), 0)
        drop_base = lambda rs: sorted(r[:4] + r[5:] for r in rs)  # noqa: E731  (kw_base races)
        assert drop_base(got_c) == drop_base([tuple(r) for r in want_c]), f"calls window at {base}"
        assert sorted(got_k) == sorted(tuple(r) for r in want_k), f"kwargs window at {base}"
        calls += [_shift(r, base, (0, 2, 3)) for r in got_c]
        kwargs += [(s + base, n) for s, n in got_k]
    return calls, kwargs


def string_spans(src: bytes) -> list[tuple[int, int]]:
    lines = line_starts(src)
    return [(lines[t.start[0] - 1] + t.start[1], lines[t.end[0] - 1] + t.end[1])
            for t in tokenize.tokenize(io.BytesIO(src).readline) if t.type == tokenize.STRING]


def in_string(pos: int, spans) -> bool:
    return any(a <= pos < b for a, b in spans)


def offset(src: bytes, node) -> int:
    return line_starts(src)[node.lineno - 1] + node.col_offset


def chain(node) -> list | None:
    """The Name/Attribute chain of a (called) expression as [root node, names...], or None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.insert(0, node.attr)
        node = node.value
    return [node, node.id, *names] if isinstance(node, ast.Name) else None


def dotted(src: bytes, expr) -> tuple[int, int] | None:
    """(offset, byte length) of a dotted name written without spaces (what vyre records)."""
    c = chain(expr.func if isinstance(expr, ast.Call) else expr)
    if c is None or len(c) > 10:
        return None
    start, text = offset(src, c[0]), ".".join(c[1:]).encode()
    return (start, len(text)) if src[start:start + len(text)] == text else None


def name_offset(src: bytes, node, name: str) -> int:
    at = offset(src, node)
    return src.index(name.encode(), src.index(b"class" if isinstance(node, ast.ClassDef) else b"def", at) + 3)


@pytest.mark.parametrize("module", ["json/decoder.py", "contextlib.py"])
def test_structure_and_imports_match_ast(module, vk_device):
    src = source(module)
    tree, strings = ast.parse(src), string_spans(src)
    defs = extract("structure", src, vk_device)
    got = {(k, s, n) for k, s, n, *_ in defs}
    want = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            at = name_offset(src, node, node.name)
            kinds = {ast.FunctionDef: (1,), ast.AsyncFunctionDef: (1, 2), ast.ClassDef: (3,)}[type(node)]
            want |= {(k, at, len(node.name.encode())) for k in kinds}
    assert want and want <= got, sorted(want - got)
    assert all(in_string(s, strings) for _, s, _ in got - want), sorted(got - want)
    for _, _, _, p_open, p_close, colon in defs:  # positions that are set point at their bytes
        assert all(p == M.INV or src[p:p + 1] == ch for p, ch in ((p_open, b"("), (p_close, b")"), (colon, b":")))

    imports = extract("imports", src, vk_device)
    got = {(k, s, n) for k, s, n, *_ in imports}
    want = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                before = src[:offset(src, alias)].rstrip()
                if alias.name != "*" and not before.endswith(b"("):  # vyre: only after 'import' or ','
                    want.add((1, offset(src, alias), len(alias.name)))
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            want.add((2, src.index(node.module.encode(), offset(src, node) + 4), len(node.module)))
    assert want and want <= got, sorted(want - got)
    # vyre's rules also record an identifier after any ',' (kind 1) and after the 'from' of
    # `raise X from Y` / `yield from y` (kind 2)
    after_from = {offset(src, n.cause) for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.cause} | \
        {offset(src, n.value) for n in ast.walk(tree) if isinstance(n, ast.YieldFrom)}
    extra = [r for r in imports if (r[0], r[1], r[2]) not in want]
    assert all(in_string(r[1], strings) or (r[0] == 1 and src[r[3]:r[3] + 1] == b",")
               or (r[0] == 2 and r[1] in after_from) for r in extra), extra


@pytest.mark.parametrize("module", ["contextlib.py"])
def test_with_blocks_and_decorators_match_ast(module, vk_device):
    src = source(module)
    tree, strings = ast.parse(src), string_spans(src)
    withs = extract("with", src, vk_device)
    got = {(s, n, f) for s, n, _, _, f, _ in withs}
    want = {(*dotted(src, node.items[0].context_expr), int(isinstance(node, ast.AsyncWith)))
            for node in ast.walk(tree) if isinstance(node, (ast.With, ast.AsyncWith))
            and dotted(src, node.items[0].context_expr)}
    assert want and want <= got, sorted(want - got)
    assert all(in_string(s, strings) for s, _, _ in got - want), sorted(got - want)
    assert all(c == M.INV or src[c:c + 1] == b":" for *_, c, _, _ in withs)

    decs = extract("decorators", src, vk_device)
    got = {(s, n) for s, n, *_ in decs}
    targets = {(s, n): (kind, target) for s, n, kind, _, _, target in decs}
    want = set()
    for node in ast.walk(tree):
        for dec in getattr(node, "decorator_list", []):
            want.add(dotted(src, dec))
            if not isinstance(dec, ast.Call):
                # vyre's target is the token after the name, which vyre's own lexer makes the
                # line's NEWLINE (or a comment): on real code the target kind is always 0
                kind, target = targets[dotted(src, dec)]
                assert kind == 0 and src[target:target + 1] in (b"\n", b"#"), (dec.lineno, kind, target)
    want.discard(None)
    assert want and want <= got, sorted(want - got)
    assert all(in_string(s, strings) for s, _ in got - want), sorted(got - want)


def test_calls_and_keyword_arguments_match_ast(vk_device):
    src = source("json/decoder.py")
    tree, strings = ast.parse(src), string_spans(src)
    calls, kwargs = extract_calls(src, vk_device)
    got = {(s, n) for s, n, *_ in calls}
    want, want_kw = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted(src, node):
            want.add(dotted(src, node))
            want_kw |= {(offset(src, k), len(k.arg)) for k in node.keywords if k.arg}
    assert want and want <= got, sorted(want - got)
    assert want_kw and want_kw <= set(kwargs), sorted(want_kw - set(kwargs))
    for s, n in got - want:  # a keyword vyre lexes as an identifier, a def/class name, or string text
        word = src[s:s + n].decode()
        before = src[:s].split()[-1] if src[:s].split() else b""
        assert keyword.iskeyword(word) or before in (b"def", b"class") or in_string(s, strings), (s, word)


@pytest.mark.parametrize("module, window", [("abc.py", 2), ("contextlib.py", 7)])
def test_lexer_then_extractors_on_a_window_reference_equals_vulkan(module, window, vk_device):
    """Tokens from the lexer op, then every extractor, on the reference and on Vulkan: equal
    buffers, and the model's records in invocation order (the reference's atomic order)."""
    n = REF_WINDOW
    base, piece = windows(source(module), n)[window]
    hay = np.frombuffer(piece.ljust(n, b" "), np.uint8).astype(U32)
    lex_in = {"haystack": hay, **{k: np.zeros(n, U32) for k in _TOK}, "counts": np.zeros(1, U32)}
    _, ref, got = run_both(python312_lexer("haystack", *_TOK, "counts", n), vk_device, lex_in)
    for k in _TOK:
        np.testing.assert_array_equal(got[k], ref[k])
    ins = {k: ref[k] for k in _TOK}
    tk = M.Tokens(*(ins[k] for k in _TOK))
    found = 0
    for kind, (builder, model) in _REC.items():
        _, ref, got = run_both(builder(*_TOK, "out_records", "out_counts", n), vk_device, record_ins(ins, 6))
        assert rows(ref["out_records"], int(ref["out_counts"][0]), 6) == [tuple(r) for r in model(tk)], kind
        assert sorted(rows(got["out_records"], int(got["out_counts"][0]), 6)) == \
            sorted(rows(ref["out_records"], int(ref["out_counts"][0]), 6)), kind
        found += int(ref["out_counts"][0]) // 6
    _, ref, got = run_both(python312_extract_calls(*_TOK, "out_calls", "out_call_counts", "out_kwargs",
                                                   "out_kw_counts", n), vk_device, calls_ins(ins))
    want_c, want_k = M.calls(tk, 0)
    assert rows(ref["out_calls"], int(ref["out_call_counts"][0]), 7) == [tuple(r) for r in want_c]
    assert sorted(rows(ref["out_kwargs"], int(ref["out_kw_counts"][0]), 2)) == sorted(tuple(r) for r in want_k)
    assert int(got["out_call_counts"][0]) == int(ref["out_call_counts"][0]) > 0
    assert found > 0
