"""`vyre-libs::security::aliases_dataflow`: one step of bidirectional aliasing reachability
(port of vyre-libs/src/security/aliases_dataflow.rs).

``aliases(x, y) := (reach_from(x) ∩ y) ∪ (reach_from(y) ∩ x)`` along aliasing edges only
(ASSIGNMENT | ALIAS | MUT_REF | PHI). One dispatch runs twelve arms fused in order
(vyre's ``fuse_programs``, see fusion.py), a barrier after each of the first eleven:

1. ``reach_x |= x``; 2. ``reach_y |= y`` (seed the accumulators);
3. ``hop_x = 0``; 4. ``hop_y = 0`` (scratch cleared before each hop);
5. ``hop_x = step(reach_x)``; 6. ``hop_y = step(reach_y)`` (one CSR forward step each);
7. ``reach_x |= hop_x``; 8. ``reach_y |= hop_y``;
9. ``x_in_y = reach_y & x``; 10. ``y_in_x = reach_x & y``;
11. ``out |= x_in_y``; 12. ``out |= y_in_x``.

A caller repeats the dispatch (the buffers persist) to walk further; vyre drives that with
``fixpoint_iterations``, not a ConvergenceContract, so this op is one dispatch.

Buffers (all u32, all plain storage; the ReadWrite ones are inputs and results), in vyre's fused
order: reach_x (0, rw), x (1, ro), reach_y (2, rw), y (3, ro), hop_x (4, rw), hop_y (5, rw), the
ProgramGraph pg_nodes, pg_edge_offsets, pg_edge_targets, pg_edge_kind_mask, pg_node_tags (6..10, ro),
x_in_y (11, rw), y_in_x (12, rw), out (13, rw); bitsets are ``ceil(node_count/32)`` words.
The program's top Region is the fusion's root Region (vyre does not tag it with the op id).

Not the same as vyre on large graphs: vyre's barriers are GridSync (the driver splits the
dispatch there); the IR here has none, so the arms are ordered by workgroup barriers and
``node_count`` is limited to one workgroup's 256 lanes (OpParamError above that).

Example::

    >>> p = aliases_dataflow(4, 3, "x", "y", "rx", "ry", "hx", "hy", "xy", "yx", "out")
    >>> [b.name for b in p.buffers][:6], p.workgroup_size
    (['rx', 'x', 'ry', 'y', 'hx', 'hy'], (256, 1, 1))
"""
from __future__ import annotations

from ...ir import Expr, Program
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .fusion import fuse_programs
from .graph import EDGE_KIND, bitset_or_into, bitset_zero_inplace, flows_to_alias_only
from .region import (BITSET_AND_OP_ID, BITSET_WORKGROUP, U32_MAX, bitset_word_program, bitset_words,
                     check_buffer_names, check_node_count)

OP_ID = "vyre-libs::security::aliases_dataflow"
ZERO_OP_ID = "vyre-libs::security::aliases_dataflow::zero"
# Active lanes (one per node, one per word) must share one workgroup: see the module docstring.
MAX_NODES = BITSET_WORKGROUP[0]
# u32 bitsets: byte-exact (no f32 window).
ULP = None


def aliases_dataflow(node_count: int, edge_count: int, x_buf: str, y_buf: str, reach_x_buf: str,
                     reach_y_buf: str, hop_x_buf: str, hop_y_buf: str, x_in_y_buf: str, y_in_x_buf: str,
                     out_buf: str) -> Program:
    """One bidirectional aliasing step over a ProgramGraph of `node_count` nodes, `edge_count` edges."""
    check_node_count(OP_ID, node_count)
    if node_count > MAX_NODES:
        raise OpParamError(f"{OP_ID} with node_count={node_count} needs vyre's GridSync barriers between its "
                           f"fused arms, which the IR lacks; a workgroup barrier orders them only up to "
                           f"{MAX_NODES} nodes. Fix: pass node_count <= {MAX_NODES}, or shard the graph.")
    if not isinstance(edge_count, int) or isinstance(edge_count, bool) or not 0 <= edge_count <= U32_MAX:
        raise OpParamError(f"{OP_ID} edge_count must be a u32; got {edge_count!r}. "
                           "Fix: pass the number of CSR edges (pg_edge_offsets[node_count]).")
    check_buffer_names(OP_ID, x_buf, y_buf, reach_x_buf, reach_y_buf, hop_x_buf, hop_y_buf, x_in_y_buf,
                       y_in_x_buf, out_buf)
    words = bitset_words(node_count)
    return fuse_programs([
        bitset_or_into(reach_x_buf, x_buf, words),
        bitset_or_into(reach_y_buf, y_buf, words),
        bitset_zero_inplace(ZERO_OP_ID, hop_x_buf, words),
        bitset_zero_inplace(ZERO_OP_ID, hop_y_buf, words),
        flows_to_alias_only(node_count, edge_count, reach_x_buf, hop_x_buf),
        flows_to_alias_only(node_count, edge_count, reach_y_buf, hop_y_buf),
        bitset_or_into(reach_x_buf, hop_x_buf, words),
        bitset_or_into(reach_y_buf, hop_y_buf, words),
        bitset_word_program(BITSET_AND_OP_ID, reach_y_buf, x_buf, x_in_y_buf, words, Expr.bitand),
        bitset_word_program(BITSET_AND_OP_ID, reach_x_buf, y_buf, y_in_x_buf, words, Expr.bitand),
        bitset_or_into(out_buf, x_in_y_buf, words),
        bitset_or_into(out_buf, y_in_x_buf, words),
    ])


def _build(node_count: int = 4, edge_count: int = 3) -> Program:
    return aliases_dataflow(node_count, edge_count, "x", "y", "reach_x", "reach_y", "hop_x", "hop_y", "x_in_y",
                            "y_in_x", "out")


# vyre's witness: chain 0 -> 1 -> 2 -> 3 of ASSIGNMENT edges, x = {0}, y = {1}. One step reaches
# {0,1} from x and {1,2} from y; y lies in x's reach, so out = {1}.
_A = EDGE_KIND["ASSIGNMENT"]
_INPUTS = {"reach_x": [0b0001], "x": [0b0001], "reach_y": [0b0010], "y": [0b0010], "hop_x": [0], "hop_y": [0],
           "pg_nodes": [0, 0, 0, 0], "pg_edge_offsets": [0, 1, 2, 3, 3], "pg_edge_targets": [1, 2, 3],
           "pg_edge_kind_mask": [_A, _A, _A], "pg_node_tags": [0, 0, 0, 0], "x_in_y": [0], "y_in_x": [0],
           "out": [0]}
_EXPECTED = {"reach_x": [0b0011], "reach_y": [0b0110], "hop_x": [0b0010], "hop_y": [0b0100], "x_in_y": [0],
             "y_in_x": [0b0010], "out": [0b0010]}
ENTRY = register_case(OP_ID, _build, [pack_u32_slice(w) for w in _INPUTS.values()],
                      [pack_u32_slice(w) for w in _EXPECTED.values()], category="security", ulp=ULP,
                      bench=dict(node_count=MAX_NODES, edge_count=4 * MAX_NODES))
