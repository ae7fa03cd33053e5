"""The Python 3.12 extractors on the reference and on Vulkan over hand-checked sources (tokens
from the lexer model): type parameters, ``async def`` recorded twice, dotted names, vyre's
any-comma import rule, ``async with``, keyword arguments and what hides them (brackets, '.',
nesting) or fakes one ('==' lexes as two '='), nested calls, and vyre's decorator quirks (the
target read from the NEWLINE token; a called decorator's ')' searched from its name; the segment
loop restarting at byte 0). Records are compared in invocation order on the reference and as a
multiset on Vulkan. Also the module doctests and the builders' parameter check.
"""
from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops.parsing.python.calls import python312_extract_calls, python312_extract_decorators
from vyre_vk.ops.parsing.python.structure import (python312_extract_imports, python312_extract_structure,
                                                  python312_extract_with_blocks)
from vyre_vk.ops.registry import OpParamError

from ..oracles.parsing_models import py_lex

U32 = np.uint32
INV = 0xFFFFFFFF
_TOK = ("tok_types", "tok_starts", "tok_lens")


def token_rows(src: bytes) -> dict:
    n = len(src)
    types, starts, lens = (np.zeros(n, U32) for _ in range(3))
    for t, (tok, length) in py_lex(src).items():
        types[t], starts[t], lens[t] = tok, t, length
    return dict(zip(_TOK, (types, starts, lens)))


def rows(buf, count: int, words: int, first: int = 0) -> list[list[int]]:
    return [[int(x) for x in buf[i:i + words]] for i in range(first, count, words)]


def both(program, ins: dict, outputs: list[tuple[str, str, int]], device) -> list[list[list[int]]]:
    """Records (buffer, counter, words per record) from the counter's initial value on, on the
    reference, checked equal as multisets on Vulkan (the GPU orders the atomic slots its own way)."""
    ref, got = reference.run(program, ins), device.compile(program).run(ins)
    out = []
    for buf, count, words in outputs:
        first = int(ins[count][0])
        r = rows(ref[buf], int(ref[count][0]), words, first)
        assert int(got[count][0]) == int(ref[count][0])
        assert sorted(rows(got[buf], int(got[count][0]), words, first)) == sorted(r)
        out.append(r)
    return out


def records(builder, src: bytes, device) -> list[list[int]]:
    n = len(src)
    ins = {**token_rows(src), "out_records": np.zeros(6 * n, U32), "out_counts": np.zeros(1, U32)}
    return both(builder(*_TOK, "out_records", "out_counts", n), ins, [("out_records", "out_counts", 6)], device)[0]


def test_structure(vk_device):
    src = b"class C[T](B):\n async def f[U](x, y=g(1)) -> int:\n  def h(): pass\n"
    at = src.index
    h = at(b"h(")
    assert records(python312_extract_structure, src, vk_device) == [
        [3, 6, 1, 10, 12, 13],                        # class: type params skipped, '(' ')' ':'
        [2, 26, 1, 30, 40, INV],                      # async def: '-> int' hides the ':'
        [1, 26, 1, 30, 40, INV],                      # ... and its 'def' again
        [1, h, 1, h + 1, h + 2, h + 3],
    ]
    assert (at(b"async"), at(b"f["), at(b"(x"), at(b")) ->") + 1) == (16, 26, 30, 40)


def test_imports(vk_device):
    src = b"from a.b import c, d as e\nimport x.y.z\nf(g, h)\n"
    # [kind, start, dotted len, previous token, last segment, next token]; 'h' after any ','
    assert records(python312_extract_imports, src, vk_device) == [
        [2, 5, 3, 0, 7, 6], [1, 16, 1, 9, 16, 17], [1, 19, 1, 17, 19, 21], [1, 33, 5, 26, 37, 34],
        [1, 44, 1, 42, 44, 45]]


def test_with_blocks(vk_device):
    src = b"with a.b(c) as d, e:\n  async with f:\n    pass\n"
    assert records(python312_extract_with_blocks, src, vk_device) == [[5, 3, 0, 19, 0, 0], [34, 1, 29, 35, 1, 0]]


def calls(src: bytes, device) -> tuple[list, list]:
    n = len(src)
    ins = {**token_rows(src), "out_calls": np.zeros(7 * n, U32), "out_call_counts": np.zeros(1, U32),
           "out_kwargs": np.zeros(2 * n, U32), "out_kw_counts": np.full(1, 10, U32)}
    program = python312_extract_calls(*_TOK, "out_calls", "out_call_counts", "out_kwargs", "out_kw_counts", n)
    return tuple(both(program, ins, [("out_calls", "out_call_counts", 7), ("out_kwargs", "out_kw_counts", 2)],
                      device))


def test_call_keyword_arguments(vk_device):
    """k counts; z.w (after '.'), q (in []), r (in ()) do not; s of 's == t' does ('==' is two
    '=' tokens). kw_base is the counter before the call's adds (10: the slots start there)."""
    src = b"await x.y(k=1, z.w=2, [q=3], (r=4), s == t)\n"
    got_calls, kwargs = calls(src, vk_device)
    assert got_calls == [[6, 3, 9, 42, 10, 2, 1]]
    assert kwargs == [[10, 1], [36, 1]] and src[36:37] == b"s"


def test_nested_calls(vk_device):
    got_calls, kwargs = calls(b"a.b(c(d), e[f(g)])(h)\n", vk_device)
    assert got_calls == [[0, 3, 3, 17, 10, 0, 0], [4, 1, 5, 7, 10, 0, 0], [12, 1, 13, 15, 10, 0, 0]]
    assert kwargs == []


@pytest.mark.parametrize("src, want", [
    # the target is the token after the name: vyre's own lexer makes it the line's NEWLINE (kind 0);
    # '@c.d(e)' searches its ')' from the name, so the '(' counts as nested and none is found: the
    # target search restarts at byte 0 (INVALID + 1) and lands on the first '@'
    (b"@a.b\n@c.d(e)\nasync def f(): pass\n@g\nclass K: pass\n",
     [[1, 3, 0, 0, 0, 4], [6, 3, 0, 0, 0, 0], [34, 1, 0, 0, 0, 35]]),
    # on one line the target is found: [name, len, kind 3, 'Z' start, len, 'class' pos]
    (b"@x.y class Z", [[1, 3, 3, 11, 1, 5]]),
    # a dead segment cursor searches from byte 0 again: '.q' at the start extends '@p' to 'q',
    # and the name length wraps (starts[q] - starts[p] + 1 = -2)
    (b".q\n@p\ndef f(): pass\n", [[4, 0xFFFFFFFE, 0, 0, 0, 2]]),
])
def test_decorators(src, want, vk_device):
    assert records(python312_extract_decorators, src, vk_device) == want


@pytest.mark.parametrize("name", ["vyre_vk.ops.parsing.python.scan", "vyre_vk.ops.parsing.python.structure",
                                  "vyre_vk.ops.parsing.python.calls", "vyre_vk.ops.parsing.core_ast",
                                  "tests.ops.oracles.parsing_py_extract_models",
                                  "tests.ops.oracles.parsing_python_parse", "tests.ops.oracles.parsing_core_ast"])
def test_module_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("builder", [python312_extract_structure, python312_extract_imports,
                                     python312_extract_with_blocks, python312_extract_decorators])
def test_builders_reject_an_empty_haystack(builder):
    with pytest.raises(OpParamError, match="Fix:"):
        builder(*_TOK, "r", "c", 0)
    with pytest.raises(OpParamError, match="Fix:"):
        python312_extract_calls(*_TOK, "c", "cc", "k", "kc", 0)
