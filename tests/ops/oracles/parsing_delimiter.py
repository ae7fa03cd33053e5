"""Oracles of vyre_vk/ops/parsing/delimiter: a stack walk for bracket_match (random brace
streams, balanced runs with stray closes and opens) and running depth sums for
core_delimiter_match (wrapping u32)."""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.parsing.delimiter import CLOSE_BRACE, MATCH_NONE, OPEN_BRACE

from .core import U32, oracle, ru32


def bracket_pairs(kinds, max_depth: int) -> np.ndarray:
    """Each close pops the latest open still on a stack of at most `max_depth` (extra opens are
    dropped); unmatched braces and other kinds get MATCH_NONE."""
    out = np.full(len(kinds), MATCH_NONE, U32)
    stack: list[int] = []
    for i, k in enumerate(int(x) for x in kinds):
        if k == OPEN_BRACE and len(stack) < max_depth:
            stack.append(i)
        elif k == CLOSE_BRACE and stack:
            j = stack.pop()
            out[i], out[j] = j, i
    return out


def brace_kinds(rng, n: int) -> np.ndarray:
    """Mostly opens and closes (some other kinds, some values above 2): deep nesting and strays."""
    k = rng.choice(np.asarray([0, 1, 1, 1, 2, 2, 2, 7], U32), n)
    return k


@oracle("vyre-libs::parsing::bracket_match", {"n": 300, "max_depth": 300}, 0, "stack walk: exact")
def _():
    return (lambda rng, p: {"kinds": brace_kinds(rng, p["n"]), "stack": ru32(rng, p["max_depth"])},
            lambda ins, p: {"stack": ins["stack"].copy(), "match_pairs": bracket_pairs(ins["kinds"], p["max_depth"])})


def prefix_depths(types, open_id: int, close_id: int) -> np.ndarray:
    step = (types == open_id).astype(np.int64) - (types == close_id).astype(np.int64)
    return (np.cumsum(step) % (1 << 32)).astype(U32)


@oracle("vyre-libs::parsing::core_delimiter_match", {"tok_count": 400, "open_tok_id": 12, "close_tok_id": 13}, 0,
        "running depth sum mod 2^32: exact")
def _():
    def inputs(rng, p):
        return {"tok_types": rng.choice(np.asarray([0, 1, 12, 12, 13, 13, 13, 40], U32), p["tok_count"]),
                "tok_depths": ru32(rng, p["tok_count"])}
    return inputs, lambda ins, p: {"tok_depths": prefix_depths(ins["tok_types"], p["open_tok_id"], p["close_tok_id"])}
