"""Oracle of vyre_vk/ops/parsing/python/lex: the per-byte model parsing_models.py_lex over random
Python-like source (keywords, identifiers, numbers, quotes with escapes, comments containing
quotes and keywords, punctuation, operators the lexer ignores, newlines)."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle, ru32
from .parsing_models import py_lex

_PIECES = ["def", "async", "class", "import", "from", "as", "with", "await", "match", "case", "except", "x", "foo_1",
           "_y", "self", "12", "3.5", "1_000", "0x1F", "1e5", "'a'", '"b\\"c"', "'it\\'s'", "'''doc'''",
           "# note 'x' def\n",
           "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "@", "*", "->", "+", "==", "\n", "\n    ", " ", " ", " "]


def py_source(rng, n: int) -> bytes:
    parts, size = [], 0
    while size < n:
        piece = _PIECES[rng.integers(len(_PIECES))] + ("" if rng.random() < 0.3 else " ")
        parts.append(piece)
        size += len(piece)
    return "".join(parts).encode()[:n]


@oracle("vyre-libs::parsing::python312_lexer", {"haystack_len": 256}, 0, "per-byte lexer model: exact")
def _():
    def inputs(rng, p):
        n = p["haystack_len"]
        src = py_source(rng, n)
        return {"haystack": np.frombuffer(src, np.uint8).astype(U32), "tok_types": ru32(rng, n),
                "tok_starts": ru32(rng, n), "tok_lens": ru32(rng, n), "counts": ru32(rng, 1, 1 << 20)}

    def numpy(ins, p):
        rows = py_lex((ins["haystack"] & 0xFF).astype(np.uint8).tobytes())
        out = {k: ins[k].copy() for k in ("tok_types", "tok_starts", "tok_lens")}
        for t, (tok, length) in rows.items():
            out["tok_types"][t], out["tok_starts"][t], out["tok_lens"][t] = tok, t, length
        return {**out, "counts": np.asarray([int(ins["counts"][0]) + len(rows)], U32)}
    return inputs, numpy


# ---- the structural extractors (python/structure.py, calls.py): bodies in parsing_python_parse.py
from . import parsing_python_parse as _X  # noqa: E402

for _kind in ("structure", "imports", "with_blocks", "decorators"):
    oracle(f"vyre-libs::parsing::python312_extract_{_kind}", _X.PARAMS, 0, _X.WHY, repeats=_X.REPEATS)(
        lambda _k=_kind: _X.records_oracle(_k))
oracle("vyre-libs::parsing::python312_extract_calls", _X.PARAMS, 0,
       "token-walk model: exact call and keyword records in invocation order",
       repeats=_X.REPEATS)(lambda: _X.calls_oracle())
