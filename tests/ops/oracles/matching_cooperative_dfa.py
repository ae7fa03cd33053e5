"""Oracle of vyre_vk/ops/matching/cooperative_dfa, exact: a lane-by-lane Python model of vyre's
cooperative scan (each lane steps the root with its byte, then per round takes the state of lane
``local - 2^r``, or lane 0, and steps it with its own byte; width-32 subgroups as vyre's reference
simulates them), over the tables of vyre_vk's ``dfa_compile`` padded to state_count. The op is not
an exact DFA scan (see its module); tests/ops/matching checks the cases where it is.

Example::

    >>> from tests.ops.oracles import ORACLES
    >>> spec = ORACLES["vyre-libs::matching::cooperative_dfa"]
    >>> ins = spec.inputs(np.random.default_rng(0), spec.params)
    >>> spec.numpy(ins, spec.params)["matches"].shape
    (600,)
"""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .matching_aho_corasick import mixed_bytes, padded_tables

PATTERNS = (b"a", b"he", b"she", b"his")
SUBGROUP = 32  # vyre-reference's simulated subgroup width


def cooperative_model(data: np.ndarray, trans: np.ndarray, accept: np.ndarray, width: int) -> np.ndarray:
    """``matches`` of the cooperative scan of `data` with workgroups of `width` lanes."""
    width = max(width, 1)
    rounds = width.bit_length() - 1
    n = len(data)
    row = lambda s: int(s) * 256  # noqa: E731
    t = lambda k: int(trans[k]) if 0 <= k < len(trans) else 0  # noqa: E731 - out-of-bounds loads read 0
    out = np.zeros(n, U32)
    for wg0 in range(0, n, width):
        lanes = range(width)
        byte = [int(data[wg0 + l]) if wg0 + l < n else int(data[0]) for l in lanes]
        state = [t(row(0) + byte[l]) for l in lanes]
        for r in range(rounds):
            off = 1 << r
            prev = list(state)
            for l in lanes:
                src = 0 if l < off else l - off            # the lane vyre asks for (workgroup-local id)
                sg_base = l - l % SUBGROUP                  # ...read in this lane's own 32-lane subgroup
                sg_len = min(SUBGROUP, width - sg_base)
                fwd = prev[sg_base + src] if src < sg_len else 0
                state[l] = t(row(fwd) + byte[l])
        for l in lanes:
            if wg0 + l < n:
                a = int(accept[state[l]]) if state[l] < len(accept) else 0
                out[wg0 + l] = 1 if a else 0
    return out


@oracle("vyre-libs::matching::cooperative_dfa", {"input_len": 600, "state_count": 16, "subgroup_size": 32}, 0,
        "lane-by-lane model of vyre's shuffle rounds: exact")
def _():
    def inputs(rng, p):
        trans, accept = padded_tables(PATTERNS, p["state_count"])
        data = np.frombuffer(mixed_bytes(rng, p["input_len"], np.frombuffer(b"aehis", np.uint8)), np.uint8)
        return {"input": data.astype(U32), "transitions": trans, "accept_mask": accept}
    return inputs, lambda ins, p: {"matches": cooperative_model(ins["input"], ins["transitions"],
                                                                ins["accept_mask"], p["subgroup_size"])}
