"""The C and Python lexers over real files nobody here wrote: the C headers of this system
(/usr/include/stdio.h, stdlib.h, string.h) and standard-library modules (json/decoder.py,
textwrap.py of /usr/lib/python3.11, else of the running interpreter).

Vulkan's results are compared with the reference's bit for bit (every result buffer) and both
with independent tokenizers: a C11 regex tokenizer (c11_regex.py, written from ISO C11 6.4) and
the stdlib ``tokenize`` module mapped to vyre's kinds (py_tokenize_map.py), plus the cursor-walk
models of tests/ops/oracles/parsing_models.py. The serial C lexer costs the reference ~1.3 ms per
byte, so the quick tier compares with the reference on a ~1 KB code window of each header and
json/decoder.py, and checks whole headers and textwrap.py on Vulkan against the tokenizers and
models; the whole-file reference runs (25-65 s per header, 10 s for textwrap.py on a loaded
2-core box) are marked slow.
"""
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS, c_keyword, c_keyword_map_words
from vyre_vk.ops.parsing.c.lexer import c11_lexer
from vyre_vk.ops.parsing.c.single_pass import c11_lex_single_pass
from vyre_vk.ops.parsing.python.lex import python312_lexer

from ..oracles.parsing_models import DIGRAPH_PAIRS, c_lex, py_lex
from . import c11_regex, py_tokenize_map

U32 = np.uint32
HEADERS = [Path("/usr/include") / h for h in ("stdio.h", "stdlib.h", "string.h")]
# the system's Python 3.11 library where there is one, else this interpreter's
_STDLIB = next((d for d in (Path("/usr/lib/python3.11"), Path(sysconfig.get_paths()["stdlib"])) if d.is_dir()))
MODULES = [_STDLIB / m for m in ("json/decoder.py", "textwrap.py")]
WINDOW = 1000
_KIND = {T.TOK_PREPROC: "directive", T.TOK_IDENTIFIER: "identifier", T.TOK_INTEGER: "integer",
         T.TOK_FLOAT: "float", T.TOK_STRING: "string", T.TOK_CHAR: "char"}
_PUNCT = {s: tok for tok, s in T.THREE_BYTE_OPS + T.TWO_BYTE_OPS + T.ONE_BYTE_OPS} | {"...": T.TOK_ELLIPSIS}


def source(path: Path) -> bytes:
    if not path.exists():
        pytest.skip(f"{path} is not on this system")
    return path.read_bytes()


def code_window(src: bytes) -> bytes:
    """From the last directive before the first ``extern`` declaration (past the licence and the
    configuration macros) to the first directive WINDOW bytes on: a directive starts outside any
    comment, so the cut splits none."""
    directives = [s for kind, s, _ in c11_regex.tokenize(src) if kind == "directive"]
    first_extern = src.index(b"\nextern ")
    start = max(s for s in directives if s < first_extern)
    return src[start:next(s for s in directives if s >= start + WINDOW)]


def haystack_inputs(src: bytes, names) -> dict:
    n = len(src)
    return {names[0]: np.frombuffer(src, np.uint8).astype(U32), **{k: np.zeros(n, U32) for k in names[1:4]},
            names[4]: np.zeros(1, U32)}


def run_both(program, ins, device, *, ref: bool, grid=None) -> dict:
    """Vulkan's results, equal to the reference's bit for bit when `ref`."""
    got = device.compile(program).run(ins, grid=grid)
    if ref:
        want = reference.run(program, ins, grid=grid, max_steps=0)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"`{name}`: Vulkan vs reference")
    return got


_LEX = ("haystack", "types", "starts", "lens", "counts")


def lex_c(src: bytes, device, ref: bool) -> list[tuple[int, int, int]]:
    # only invocation 0 works: grid (1,1,1) keeps the reference's lane arrays small, same result
    got = run_both(c11_lexer(*_LEX, len(src)), haystack_inputs(src, _LEX), device, ref=ref, grid=(1, 1, 1))
    c = int(got["counts"][0])
    return list(zip(got["types"][:c].tolist(), got["starts"][:c].tolist(), got["lens"][:c].tolist()))


def check_c_tokens(src: bytes, rows) -> None:
    assert rows == c_lex(src), "C lexer vs the cursor-walk model"
    want = [(_PUNCT[src[s:s + n].decode()] if kind == "punct" else
             {v: k for k, v in _KIND.items()}[kind], s, n) for kind, s, n in c11_regex.tokenize(src)]
    assert rows == want, "C lexer vs the C11 regex tokenizer"
    assert len(rows) > len(src) // 16


@pytest.mark.parametrize("path", HEADERS, ids=lambda p: p.name)
def test_c_lexer_on_a_header_window_vulkan_reference_and_c11(path, vk_device):
    src = code_window(source(path))
    check_c_tokens(src, lex_c(src, vk_device, ref=True))


@pytest.mark.parametrize("path", HEADERS, ids=lambda p: p.name)
def test_c_lexer_on_a_whole_header_vulkan_and_c11(path, vk_device):
    src = source(path)
    rows = lex_c(src, vk_device, ref=False)
    check_c_tokens(src, rows)
    kinds = {k for k, _, _ in rows}
    assert {T.TOK_PREPROC, T.TOK_IDENTIFIER, T.TOK_INTEGER, T.TOK_LPAREN, T.TOK_SEMICOLON} <= kinds


@pytest.mark.slow
def test_c_lexer_on_a_whole_header_reference(vk_device):
    # one whole system header through the reference: strings.h (4.7 KB, ~5 s; the reference walks the
    # one-invocation lexer statement by statement, so string.h took 21-30 s and stdio.h 30-44 s, over the
    # suite's time budget); the three HEADERS run whole on Vulkan against the model and the C11 regex
    # tokenizer above, and their windows through the reference
    src = source(Path("/usr/include/strings.h"))
    check_c_tokens(src, lex_c(src, vk_device, ref=True))


@pytest.mark.parametrize("path", HEADERS, ids=lambda p: p.name)
def test_c_keyword_promotes_exactly_the_keyword_spellings_of_a_header(path, vk_device):
    """c_keyword over the header's lexed tokens: every identifier spelled as a C_KEYWORDS entry,
    and no other (FNV-1a is matched by hash alone: a collision would show here)."""
    src = source(path)
    rows = c_lex(src)
    n = len(rows)
    table = dict(C_KEYWORDS)
    names = ("tok_types", "tok_starts", "tok_lens", "counts", "haystack", "keyword_map")
    ins = {"tok_types": np.asarray([r[0] for r in rows], U32), "tok_starts": np.asarray([r[1] for r in rows], U32),
           "tok_lens": np.asarray([r[2] for r in rows], U32), "counts": np.asarray([n], U32),
           "haystack": np.frombuffer(src, np.uint8).astype(U32), "keyword_map": np.asarray(c_keyword_map_words(), U32)}
    got = run_both(c_keyword(*names, n, len(C_KEYWORDS), len(src)), ins, vk_device, ref=True)
    want = [table.get(src[s:s + ln].decode(), t) if t == T.TOK_IDENTIFIER else t for t, s, ln in rows]
    assert got["tok_types"].tolist() == want
    assert sum(w != r[0] for w, r in zip(want, rows)) > 50


def test_c11_lex_single_pass_on_a_header_is_the_lexer_stream(vk_device):
    """The fused lexer + digraph program over string.h: the headers spell no digraph, so the
    digraph lanes write nothing and the result is the lexer's (race-free, see single_pass.py)."""
    src = source(HEADERS[2])
    rows = c_lex(src)
    assert not any((a[0], b[0]) in DIGRAPH_PAIRS for a, b in zip(rows, rows[1:]))
    n = len(src)
    got = run_both(c11_lex_single_pass(*_LEX, n, n), haystack_inputs(src, _LEX), vk_device, ref=False)
    c = int(got["counts"][0])
    assert list(zip(got["types"][:c].tolist(), got["starts"][:c].tolist(), got["lens"][:c].tolist())) == rows


# ------------------------------------------------------------------ Python
def lex_python(src: bytes, device, ref: bool) -> dict[int, tuple[int, int]]:
    got = run_both(python312_lexer(*_LEX, len(src)), haystack_inputs(src, _LEX), device, ref=ref)
    at = np.flatnonzero(got["types"])
    assert got["starts"][at].tolist() == at.tolist()
    rows = {int(p): (int(got["types"][p]), int(got["lens"][p])) for p in at}
    assert int(got["counts"][0]) == len(rows)
    return rows


def check_python_tokens(src: bytes, rows) -> None:
    assert rows == py_lex(src), "Python lexer vs the per-byte model"
    want, skipped = py_tokenize_map.expected(src)
    bad = [(p, want[p], rows.get(p, (0, 0))) for p in sorted(want) if rows.get(p, (0, 0)) != want[p]]
    assert not bad, f"vs stdlib tokenize (offset, tokenize, vyre): {bad[:5]}"
    assert len(want) > len(src) // 2 and skipped < len(src) // 2


@pytest.mark.parametrize("path", MODULES[:1], ids=lambda p: p.name)
def test_python_lexer_on_a_stdlib_module_vulkan_reference_and_tokenize(path, vk_device):
    src = source(path)
    check_python_tokens(src, lex_python(src, vk_device, ref=True))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_python_lexer_on_a_stdlib_module_vulkan_and_tokenize(path, vk_device):
    src = source(path)
    check_python_tokens(src, lex_python(src, vk_device, ref=False))


# (textwrap.py through the reference too took 10 s of the suite's budget: decoder.py, a whole module,
# is the reference's real-file run; textwrap.py runs whole on Vulkan against tokenize above)
