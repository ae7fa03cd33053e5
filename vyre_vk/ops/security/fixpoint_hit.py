"""Source-to-sink security flows (vyre-libs/src/security/{flows_to_to_sink, taint_pollution,
flows_to_with_sanitizer}.rs over flow_composition.rs ``security_flow_program``): one dataflow step
fused with the sink test, in one dispatch.

- ``flows_to_to_sink(source, sink, reach, hits, out_scalar)`` and ``taint_pollution`` (the same
  composition under its own id, the sink named ``label_set``): ``reach |= succ(source)`` along
  FLOWS_TO_MASK (flows_to's step), barrier, ``hits = reach & sink``, barrier,
  ``out_scalar[0] = any(hits)``.
- ``flows_to_with_sanitizer``: ``clean = source & ~sanitizer``, the step from ``clean`` into
  ``reach``, ``alive = reach & ~sanitizer``, ``hits = alive & sink``, ``out_scalar = any(hits)``,
  a barrier between each.

vyre fuses the arms with ``fuse_programs`` (ported in fusion.py), whose barriers are GridSync (every
arm's writes are invocation-gated); the IR here has no GridSync (V043 on Vulkan), so the barriers
are workgroup barriers and these ops are registered only where the whole grid is ONE workgroup
(``node_count + 1 <= 256`` and ``edge_count <= 256``: vyre's grid for these atomic programs is
the largest binding's count over 256 lanes). Larger graphs raise OpParamError instead of racing.
None of the three has a ConvergenceContract in vyre.

Example::

    >>> p = flows_to_to_sink(4, 3, "source", "sink", "reach", "hits", "out_scalar")
    >>> [b.name for b in p.buffers][5:]
    ['source', 'reach', 'sink', 'hits', 'out_scalar']
"""
from __future__ import annotations

from typing import Optional

from ...ir import Expr, Program
from ...reference import dispatch_grid
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice as u32s
from .fixpoint_graph import ASSIGNMENT, FLOWS_TO_MASK, FORWARD_OP_ID, bitset_any, csr_step
from .fixpoint_reach import FLOWS_TO_OP_ID, _checked
from .fusion import fuse_programs
from .region import (BITSET_AND_NOT_OP_ID, BITSET_AND_OP_ID, and_not, bitset_word_program, bitset_words,
                     tag_program)

P = "vyre-libs::security::"
TO_SINK_OP_ID, POLLUTION_OP_ID, SANITIZER_OP_ID = P + "flows_to_to_sink", P + "taint_pollution", \
    P + "flows_to_with_sanitizer"
# u32 results: byte-exact.
ULP = None


def check_one_workgroup(op_id: str, program: Program) -> Program:
    """Refuse a fused flow whose grid is more than one workgroup (its barriers would not order the arms)."""
    grid = dispatch_grid(program, {b.name: b.count for b in program.buffers if not b.is_workgroup})
    if tuple(grid) != (1, 1, 1):
        raise OpParamError(f"{op_id} at this size dispatches {grid[0]} workgroups, and its fused arms are ordered by "
                           "workgroup barriers (vyre's GridSync has no Vulkan equivalent here). Fix: keep "
                           "node_count <= 255 and edge_count <= 256, or run flows_to and the bitset ops as separate "
                           "dispatches.")
    return program


def security_flow(op_id: str, node_count: int, edge_count: int, source: str, sink: str, reach: str, hits: str,
                  out_scalar: str, sanitizer: Optional[str] = None, clean: Optional[str] = None,
                  alive: Optional[str] = None) -> Program:
    """vyre's ``security_flow_program`` in hit mode (sanitized when ``sanitizer`` is given)."""
    names = [n for n in (source, sink, reach, hits, out_scalar, sanitizer, clean, alive) if n is not None]
    _checked(op_id, node_count, edge_count, *names)
    words = bitset_words(node_count)
    parts = []
    start = source
    if sanitizer is not None:
        parts.append(bitset_word_program(BITSET_AND_NOT_OP_ID, source, sanitizer, clean, words, and_not))
        start = clean
    parts.append(tag_program(FLOWS_TO_OP_ID, csr_step(FORWARD_OP_ID, True, node_count, edge_count, start, reach,
                                                      FLOWS_TO_MASK)))
    hit_source = reach
    if sanitizer is not None:
        parts.append(bitset_word_program(BITSET_AND_NOT_OP_ID, reach, sanitizer, alive, words, and_not))
        hit_source = alive
    parts.append(bitset_word_program(BITSET_AND_OP_ID, hit_source, sink, hits, words, Expr.bitand))
    parts.append(bitset_any(hits, out_scalar, words))
    return check_one_workgroup(op_id, tag_program(op_id, fuse_programs(parts)))


def flows_to_to_sink(node_count: int, edge_count: int, source: str, sink: str, reach: str, hits: str,
                     out_scalar: str) -> Program:
    """One dataflow step from ``source`` into ``reach``; ``out_scalar = any(reach & sink)``."""
    return security_flow(TO_SINK_OP_ID, node_count, edge_count, source, sink, reach, hits, out_scalar)


def taint_pollution(node_count: int, edge_count: int, source: str, label_set: str, reach: str, hits: str,
                    out_scalar: str) -> Program:
    """flows_to_to_sink with the sink named ``label_set`` (vyre's taint_pollution)."""
    return security_flow(POLLUTION_OP_ID, node_count, edge_count, source, label_set, reach, hits, out_scalar)


def flows_to_with_sanitizer(node_count: int, edge_count: int, source: str, sink: str, sanitizer: str, clean: str,
                            reach: str, alive: str, hits: str, out_scalar: str) -> Program:
    """The step from ``source & ~sanitizer``; ``out_scalar = any(reach & ~sanitizer & sink)``."""
    return security_flow(SANITIZER_OP_ID, node_count, edge_count, source, sink, reach, hits, out_scalar,
                         sanitizer, clean, alive)


def _build_to_sink(node_count: int = 4, edge_count: int = 3) -> Program:
    return flows_to_to_sink(node_count, edge_count, "source", "sink", "reach", "hits", "out_scalar")


def _build_pollution(node_count: int = 4, edge_count: int = 3) -> Program:
    return taint_pollution(node_count, edge_count, "source", "label_set", "reach", "hits", "out_scalar")


def _build_sanitizer(node_count: int = 4, edge_count: int = 3) -> Program:
    return flows_to_with_sanitizer(node_count, edge_count, "source", "sink", "sanitizer", "clean", "reach", "alive",
                                   "hits", "out_scalar")


# vyre's fixtures: the chain 0 -> 1 -> 2 -> 3 (ASSIGNMENT), source {0}, reach seeded {0}, sink {1}.
_CHAIN = [u32s([0, 0, 0, 0]), u32s([0, 1, 2, 3, 3]), u32s([1, 2, 3]), u32s([ASSIGNMENT] * 3), u32s([0, 0, 0, 0])]
_HIT_IN = [*_CHAIN, u32s([0b0001]), u32s([0b0001]), u32s([0b0010]), u32s([0]), u32s([0])]
_HIT_OUT = [u32s([0b0011]), u32s([0b0010]), u32s([1])]
_BENCH = dict(node_count=255, edge_count=256)  # the largest one-workgroup graph (see the module doc)

TO_SINK_ENTRY = register_case(TO_SINK_OP_ID, _build_to_sink, _HIT_IN, _HIT_OUT, category="security", ulp=ULP,
                              bench=_BENCH)
POLLUTION_ENTRY = register_case(POLLUTION_OP_ID, _build_pollution, _HIT_IN, _HIT_OUT, category="security", ulp=ULP,
                                bench=_BENCH)
# source {0}, sanitizer {}, clean seeded {0}, the chain, reach {0}, alive, sink {1}, hits, out_scalar.
SANITIZER_ENTRY = register_case(
    SANITIZER_OP_ID, _build_sanitizer,
    [u32s([0b0001]), u32s([0]), u32s([0b0001]), *_CHAIN, u32s([0b0001]), u32s([0]), u32s([0b0010]), u32s([0]),
     u32s([0])],
    [u32s([0b0001]), u32s([0b0011]), u32s([0b0011]), u32s([0b0010]), u32s([1])], category="security", ulp=ULP,
    bench=_BENCH)
