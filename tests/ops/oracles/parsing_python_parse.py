"""Oracle bodies of vyre_vk/ops/parsing/python/structure.py and calls.py (registered in
parsing_python.py, the module of the parsing.python ops): the token-walk models of
parsing_py_extract_models.py over the lexer model's (py_lex) rows of random Python-like source
(defs, classes, decorators, imports, with blocks, calls with dotted names, brackets and type
parameters, strings, comments), with random initial output words and counters.

Records are compared in invocation order, the reference's atomic order (one workgroup: 256 bytes,
where lavapipe's order is the same). The calls oracle keeps keyword arguments ('=' inside a call)
in the last call head of the source only: kw_base is a racy read in vyre (calls.py), and there
every call reads the initial counter on the reference and on the GPU.

Example::

    >>> inputs, numpy = records_oracle("imports")
    >>> ins = inputs(np.random.default_rng(0), PARAMS)
    >>> int(numpy(ins, PARAMS)["out_counts"][0]) % 6 == int(ins["out_counts"][0]) % 6
    True
"""
from __future__ import annotations

import numpy as np

from . import parsing_py_extract_models as M
from .core import U32, ru32
from .parsing_models import py_lex

_PIECES = ["def", "async", "class", "import", "from", "with", "await", "as", "x", "foo", "a.b", "os.path", "self.f",
           "@", "@app.route", "(", ")", "(", ")", "[", "]", ":", ":", ",", ",", ".", "1", "'s'", "# c: def (\n",
           "\n", "\n    ", "f(", "g.h(", "[T]", "->", "->", "print(", "y", "z"]


_NAMES = ["x", "foo", "a.b", "os.path", "self.f", "T", "app.route", "y1"]
_STATEMENTS = ["def {n}({a}):", "async def {n}[T]({a}) -> {n}:", "class {n}({n}):", "@{n}", "@{n}({a})",
               "import {n}, {n}", "from {n} import {n} as {n}, {n}", "with {n}({a}) as {n}:", "async with {n}:",
               "await {n}({a})", "{n} = {n}({n}({a}), [{a}])", "# {n}({a}) def {n}:", "'{n}({a})'"]


def py_like(rng, n: int, pieces=_PIECES, statements=_STATEMENTS) -> bytes:
    """Statements from templates (defs, decorators, imports, with, calls) mixed with random
    pieces that break them (unclosed brackets, stray keywords)."""
    parts, size = [], 0
    pick = lambda xs: xs[rng.integers(len(xs))]  # noqa: E731
    while size < n:
        if rng.random() < 0.5:
            piece = pick(statements).format(n=pick(_NAMES), a=pick(["", "x", "a, b", "*c"])) + \
                pick(["\n", "\n    ", " "])
        else:
            piece = pick(pieces) + ("" if rng.random() < 0.4 else " ")
        parts.append(piece)
        size += len(piece)
    return "".join(parts).encode()[:n]


def token_inputs(src: bytes, rng, n: int) -> dict:
    """The lexer model's sparse rows of `src` padded to n bytes; garbage starts/lens where no
    token starts (the extractors must not read them, except through INVALID_POS, which reads 0)."""
    rows = py_lex(src.ljust(n, b" "))
    types, starts, lens = np.zeros(n, U32), ru32(rng, n), ru32(rng, n)
    for t, (tok, length) in rows.items():
        types[t], starts[t], lens[t] = tok, t, length
    return {"tok_types": types, "tok_starts": starts, "tok_lens": lens}


def _tokens(ins) -> M.Tokens:
    return M.Tokens(ins["tok_types"], ins["tok_starts"], ins["tok_lens"])


_RECORD_MODELS = {"structure": M.structure, "imports": M.imports, "with_blocks": M.with_blocks,
                  "decorators": M.decorators}
PARAMS = {"haystack_len": 256}
WHY = "token-walk model of the rules: exact records in invocation order"
REPEATS = 4


def records_oracle(kind: str):
    """(inputs, numpy) of python312_extract_<kind> (structure, imports, with_blocks, decorators)."""
    model, words = _RECORD_MODELS[kind], 6

    def inputs(rng, p):
        hl = p["haystack_len"]
        ins = token_inputs(py_like(rng, hl), rng, hl)
        # a counter start near the end of out_records checks that far slots are dropped
        ins["out_records"] = ru32(rng, hl * words)
        ins["out_counts"] = np.asarray([rng.integers(0, hl * words)], U32)
        return ins

    def numpy(ins, p):
        buf, count = M.place(ins["out_records"], int(ins["out_counts"][0]), model(_tokens(ins)))
        return {"out_records": np.asarray(buf, U32), "out_counts": np.asarray([count], U32)}
    return inputs, numpy


_NO_EQ = [p for p in _PIECES if "=" not in p]
_NO_EQ_STATEMENTS = [p for p in _STATEMENTS if "=" not in p]


def calls_oracle():
    """(inputs, numpy) of python312_extract_calls."""
    def inputs(rng, p):
        n = p["haystack_len"]
        tail = b"\nlast.call(k=1, v=[w=2], (u=3), o.q=4, *s)"  # kwargs k and v only
        ins = token_inputs(py_like(rng, n - len(tail), _NO_EQ, _NO_EQ_STATEMENTS) + tail, rng, n)
        ins["out_calls"], ins["out_kwargs"] = ru32(rng, n * 7), ru32(rng, n * 2)
        ins["out_call_counts"] = np.asarray([rng.integers(0, n * 7)], U32)
        ins["out_kw_counts"] = np.asarray([rng.integers(0, n * 2)], U32)
        return ins

    def numpy(ins, p):
        kw0 = int(ins["out_kw_counts"][0])
        recs, kws = M.calls(_tokens(ins), kw0)
        calls, cc = M.place(ins["out_calls"], int(ins["out_call_counts"][0]), recs)
        kwargs, kc = M.place(ins["out_kwargs"], kw0, kws)
        return {"out_calls": np.asarray(calls, U32), "out_call_counts": np.asarray([cc], U32),
                "out_kwargs": np.asarray(kwargs, U32), "out_kw_counts": np.asarray([kc], U32)}
    return inputs, numpy
