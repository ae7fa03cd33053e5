"""The ProgramGraph pieces aliases_dataflow composes (ports of vyre-primitives/src/graph/
{program_graph, csr_forward_traverse, csr_frontier_step}.rs, predicate ``edge_kind``, the bitset
``or_into`` program, and vyre-libs' ``flows_to_alias_only``).

- A ProgramGraph is five read-only u32 buffers at bindings 0..4: ``pg_nodes`` (node kinds,
  ``node_count``), ``pg_edge_offsets`` (CSR row pointers, ``node_count + 1``), ``pg_edge_targets``
  and ``pg_edge_kind_mask`` (``max(edge_count, 1)`` each), ``pg_node_tags`` (``node_count``).
- ``csr_forward_traverse``: one BFS step, one invocation per source node ``src < node_count``:
  if ``src`` is in ``frontier_in``, every outgoing edge whose kind mask meets ``allow_mask`` and
  whose target is ``< node_count`` atomically ORs its target's bit into ``frontier_out``
  (frontier_in ro at binding 5, frontier_out plain ReadWrite at 6; workgroup [256,1,1]).
- ``flows_to_alias_only``: that step along ALIAS_PROPAGATION_MASK edges, tagged as
  ``vyre-libs::security::flows_to``.
- ``bitset_or_into(target, operand, words)``: ``target[w] |= operand[w]`` (target plain ReadWrite
  at binding 0, operand ro at 1); ``bitset_zero_inplace``: ``target[w] = 0``.

Example::

    >>> p = flows_to_alias_only(4, 3, "fin", "fout")
    >>> [b.name for b in p.buffers][:5], p.entry[0].body[0].generator
    (['pg_nodes', 'pg_edge_offsets', 'pg_edge_targets', 'pg_edge_kind_mask', 'pg_node_tags'], \
'vyre-primitives::graph::csr_forward_traverse')
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import ro_decl, rw_decl
from .region import BITSET_WORKGROUP, bitset_words, tag_program

FLOWS_TO_OP_ID = "vyre-libs::security::flows_to"
CSR_FORWARD_TRAVERSE_OP_ID = "vyre-primitives::graph::csr_forward_traverse"
BITSET_OR_INTO_OP_ID = "vyre-primitives::bitset::or_into"

NAME_NODES = "pg_nodes"
NAME_EDGE_OFFSETS = "pg_edge_offsets"
NAME_EDGE_TARGETS = "pg_edge_targets"
NAME_EDGE_KIND_MASK = "pg_edge_kind_mask"
NAME_NODE_TAGS = "pg_node_tags"
BINDING_FRONTIER_IN = 5
BINDING_FRONTIER_OUT = 6

# vyre-primitives predicate::edge_kind: one bit per kind; an edge may carry several.
EDGE_KIND = {"ASSIGNMENT": 1 << 0, "CALL_ARG": 1 << 1, "RETURN": 1 << 2, "PHI": 1 << 3, "DOMINANCE": 1 << 4,
             "ALIAS": 1 << 5, "MEM_STORE": 1 << 6, "MEM_LOAD": 1 << 7, "MUT_REF": 1 << 8, "CONTROL": 1 << 9}
# Same memory cell, not mere dataflow: CALL_ARG / RETURN / MEM_* are excluded (vyre's flows_to.rs).
ALIAS_PROPAGATION_MASK = EDGE_KIND["ASSIGNMENT"] | EDGE_KIND["ALIAS"] | EDGE_KIND["MUT_REF"] | EDGE_KIND["PHI"]


def program_graph_buffers(node_count: int, edge_count: int) -> list[BufferDecl]:
    u32, edges = DataType.U32, max(edge_count, 1)
    return [ro_decl(NAME_NODES, 0, node_count, u32), ro_decl(NAME_EDGE_OFFSETS, 1, node_count + 1, u32),
            ro_decl(NAME_EDGE_TARGETS, 2, edges, u32), ro_decl(NAME_EDGE_KIND_MASK, 3, edges, u32),
            ro_decl(NAME_NODE_TAGS, 4, node_count, u32)]


def _mark_node_bit(frontier_out: str, node: str) -> list[Node]:
    v = Expr.var
    return [Node.let_bind("dst_word_idx", Expr.shr(v(node), Expr.u32(5))),
            Node.let_bind("dst_bit", Expr.shl(Expr.u32(1), Expr.bitand(v(node), Expr.u32(31)))),
            Node.let_bind("_prev", Expr.atomic_or(frontier_out, v("dst_word_idx"), v("dst_bit")))]


def csr_forward_traverse(node_count: int, edge_count: int, frontier_in: str, frontier_out: str,
                         allow_mask: int) -> Program:
    v, u = Expr.var, Expr.u32
    edge_loop = [
        Node.let_bind("dst", Expr.load(NAME_EDGE_TARGETS, v("e"))),
        Node.let_bind("kind_mask", Expr.load(NAME_EDGE_KIND_MASK, v("e"))),
        Node.if_then(Expr.ne(Expr.bitand(v("kind_mask"), u(allow_mask)), u(0)), [
            # Targets past the graph are dropped, so a malformed edge cannot write outside the NodeSet.
            Node.if_then(Expr.lt(v("dst"), u(node_count)), _mark_node_bit(frontier_out, "dst"))]),
    ]
    active = [
        Node.let_bind("edge_start", Expr.load(NAME_EDGE_OFFSETS, v("src"))),
        Node.let_bind("edge_end", Expr.load(NAME_EDGE_OFFSETS, Expr.add(v("src"), u(1)))),
        Node.loop_for("e", v("edge_start"), v("edge_end"), edge_loop),
    ]
    t = Expr.gid_x()
    body = [Node.if_then(Expr.lt(t, u(node_count)), [
        Node.let_bind("src", t),
        Node.let_bind("word_idx", Expr.shr(v("src"), u(5))),
        Node.let_bind("bit_mask", Expr.shl(u(1), Expr.bitand(v("src"), u(31)))),
        Node.let_bind("src_word", Expr.load(frontier_in, v("word_idx"))),
        Node.if_then(Expr.ne(Expr.bitand(v("src_word"), v("bit_mask")), u(0)), active),
    ])]
    words, u32 = bitset_words(node_count), DataType.U32
    buffers = program_graph_buffers(node_count, edge_count) + [
        ro_decl(frontier_in, BINDING_FRONTIER_IN, words, u32), rw_decl(frontier_out, BINDING_FRONTIER_OUT, words, u32)]
    return Program.wrapped(buffers, BITSET_WORKGROUP, [wrap_anonymous(CSR_FORWARD_TRAVERSE_OP_ID, body)])


def flows_to_alias_only(node_count: int, edge_count: int, frontier_in: str, frontier_out: str) -> Program:
    """One forward step along aliasing edges only (vyre's ``flows_to_alias_only``)."""
    return tag_program(FLOWS_TO_OP_ID, csr_forward_traverse(node_count, edge_count, frontier_in, frontier_out,
                                                            ALIAS_PROPAGATION_MASK))


def _word_program(op_id: str, buffers: list[BufferDecl], words: int, store: Node) -> Program:
    t = Expr.gid_x()
    return Program.wrapped(buffers, BITSET_WORKGROUP, [wrap_anonymous(op_id, [
        Node.if_then(Expr.lt(t, Expr.u32(words)), [store])])])


def bitset_or_into(target: str, operand: str, words: int) -> Program:
    t, u32 = Expr.gid_x(), DataType.U32
    return _word_program(BITSET_OR_INTO_OP_ID, [rw_decl(target, 0, words, u32), ro_decl(operand, 1, words, u32)],
                         words, Node.store(target, t, Expr.bitor(Expr.load(target, t), Expr.load(operand, t))))


def bitset_zero_inplace(op_id: str, target: str, words: int) -> Program:
    return _word_program(op_id, [rw_decl(target, 0, words, DataType.U32)], words,
                         Node.store(target, Expr.gid_x(), Expr.u32(0)))
