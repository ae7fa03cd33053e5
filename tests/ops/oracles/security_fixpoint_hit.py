"""Oracles of vyre_vk/ops/security/fixpoint_hit (flows_to_to_sink, taint_pollution,
flows_to_with_sanitizer): one dataflow step, then the sink test, from the definition with sets."""
from __future__ import annotations

import numpy as np

from .core import U32, oracle
from .security_fixpoint_reach import DATAFLOW, forward, random_graph, to_bits, to_set, words

P = "vyre-libs::security::"
# The largest graphs these one-workgroup compositions take are 255 nodes / 256 edges.
_PARAMS = {"node_count": 120, "edge_count": 256}


def _bits(rng, n, density=0.5):
    return to_bits(np.flatnonzero(rng.random(n) < density), n)


def _inputs(sink: str, sanitized: bool):
    def inputs(rng, p):
        n = p["node_count"]
        ins = random_graph(rng, n, p["edge_count"])
        ins.update({"source": _bits(rng, n, 0.05), "reach": _bits(rng, n, 0.05),
                    sink: _bits(rng, n, float(rng.choice([0.0, 0.02, 0.3]))),
                    "hits": np.zeros(words(n), U32), "out_scalar": np.zeros(1, U32)})
        if sanitized:
            ins.update({"sanitizer": _bits(rng, n, 0.2), "clean": np.zeros(words(n), U32),
                        "alive": np.zeros(words(n), U32)})
        return ins
    return inputs


def _numpy(sink: str, sanitized: bool):
    def numpy(ins, p):
        n = p["node_count"]
        start = (ins["source"] & ~ins["sanitizer"]).astype(U32) if sanitized else ins["source"]
        reach = to_bits(forward(ins, n, to_set(start, n), DATAFLOW), n, ins["reach"])
        alive = (reach & ~ins["sanitizer"]).astype(U32) if sanitized else reach
        hits = (alive & ins[sink]).astype(U32)
        out = {"reach": reach, "hits": hits, "out_scalar": np.array([int(hits.any())], U32)}
        if sanitized:
            out.update({"clean": start, "alive": alive})
        return out
    return numpy


for _op, _sink, _san in (("flows_to_to_sink", "sink", False), ("taint_pollution", "label_set", False),
                         ("flows_to_with_sanitizer", "sink", True)):
    def _register(op=_op, sink=_sink, san=_san):
        @oracle(P + op, _PARAMS, 0, "set-based step, bitwise sink test: exact", repeats=3)
        def _():
            return _inputs(sink, san), _numpy(sink, san)
    _register()
