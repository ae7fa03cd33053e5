"""Oracle of vyre_vk/ops/scan/substring (substring_search), exact: every (overlapping) occurrence
of the needle found with ``bytes.find``; haystacks and needles over a two-letter alphabet so
occurrences are frequent.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::scan::substring_search"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> int(spec.numpy(ins, spec.params)["matches"].sum()) > 0
    True
"""
from __future__ import annotations

import numpy as np

from .core import U32, oracle


def find_all(haystack: bytes, needle: bytes) -> np.ndarray:
    out = np.zeros(len(haystack), U32)
    at = haystack.find(needle)
    while at != -1 and at < len(haystack):
        out[at] = 1
        at = haystack.find(needle, at + 1)
    return out


def as_bytes(words: np.ndarray) -> bytes:
    return np.asarray(words).astype(np.uint8).tobytes()


@oracle("vyre-libs::scan::substring_search", {"haystack_len": 300, "needle_len": 3}, 0,
        "bytes.find of every occurrence: exact")
def _():
    def inputs(rng, p):
        return {"haystack": rng.choice(np.asarray([97, 98], U32), p["haystack_len"]),
                "needle": rng.choice(np.asarray([97, 98], U32), p["needle_len"])}
    return inputs, lambda ins, p: {"matches": find_all(as_bytes(ins["haystack"]), as_bytes(ins["needle"]))}
