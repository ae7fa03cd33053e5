"""The graph pieces of the fixpoint security ops: vyre-primitives' ProgramGraph buffers
(graph/program_graph.rs), edge kinds (predicate/mod.rs ``edge_kind``), the CSR frontier step
(graph/csr_frontier_step.rs, forward and backward) and ``bitset::any`` (bitset/any.rs). The
compositions fuse them with fusion.py's ``fuse_programs``.

- ``shape_buffers(n, e)``: ``pg_nodes`` (n), ``pg_edge_offsets`` (n + 1), ``pg_edge_targets``,
  ``pg_edge_kind_mask`` (max(e, 1) each), ``pg_node_tags`` (n): read-only u32 at bindings 0..4.
- ``csr_step(op_id, forward, n, e, fin, fout, mask)``: workgroup [256,1,1], one invocation per node
  ``src``. Forward: if ``src`` is in ``fin``, every out-edge whose kind has a bit of ``mask`` ORs its
  target into ``fout`` (atomicOr). Backward: ``src`` is ORed into ``fout`` if any such out-edge
  targets a node of ``fin``. Targets >= n are skipped; ``fin``/``fout`` (``ceil(n / 32)`` words)
  sit at bindings 5, 6.

Example::

    >>> p = csr_step("demo", True, 4, 3, "fin", "fout", ASSIGNMENT)
    >>> [(b.name, b.binding, b.count) for b in p.buffers][4:]
    [('pg_node_tags', 4, 4), ('fin', 5, 1), ('fout', 6, 1)]
"""
from __future__ import annotations

from typing import Sequence

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import ro_decl, rw_decl
from .region import bitset_words

# vyre-primitives/src/predicate/mod.rs edge_kind: one bit per ProgramGraph edge kind.
ASSIGNMENT, CALL_ARG, RETURN, PHI, DOMINANCE = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4
ALIAS, MEM_STORE, MEM_LOAD, MUT_REF, CONTROL = 1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 9
BLOCK_MEMBER = 1 << 25
#: vyre-libs security/flows_to.rs FLOWS_TO_MASK: the dataflow kinds (no CONTROL, no DOMINANCE).
FLOWS_TO_MASK = ASSIGNMENT | CALL_ARG | RETURN | PHI | ALIAS | MEM_STORE | MEM_LOAD | MUT_REF

NODES, OFFSETS, TARGETS, KINDS, TAGS = ("pg_nodes", "pg_edge_offsets", "pg_edge_targets", "pg_edge_kind_mask",
                                        "pg_node_tags")
GRAPH_NAMES = (NODES, OFFSETS, TARGETS, KINDS, TAGS)
FORWARD_OP_ID = "vyre-primitives::graph::csr_forward_traverse"
BACKWARD_OP_ID = "vyre-primitives::graph::csr_backward_traverse"
BITSET_ANY_OP_ID = "vyre-primitives::bitset::any"
STEP_WORKGROUP = (256, 1, 1)
U32 = DataType.U32


def shape_buffers(node_count: int, edge_count: int, first_binding: int = 0) -> list[BufferDecl]:
    """ProgramGraphShape::read_only_buffers: the five CSR graph tables, read-only u32."""
    counts = (node_count, node_count + 1, max(edge_count, 1), max(edge_count, 1), node_count)
    return [ro_decl(n, first_binding + k, c, U32) for k, (n, c) in enumerate(zip(GRAPH_NAMES, counts))]


def _bit_of(node_var: str) -> Expr:
    return Expr.shl(Expr.u32(1), Expr.bitand(Expr.var(node_var), Expr.u32(31)))


def mark_node_bit(fout: str, node_var: str, word_var: str, bit_var: str) -> list[Node]:
    """``atomicOr(fout[node >> 5], 1 << (node & 31))``."""
    return [Node.let_bind(word_var, Expr.shr(Expr.var(node_var), Expr.u32(5))),
            Node.let_bind(bit_var, _bit_of(node_var)),
            Node.let_bind("_prev", Expr.atomic_or(fout, Expr.var(word_var), Expr.var(bit_var)))]


def edge_loop(body: Sequence[Node]) -> list[Node]:
    """``for e in offsets[src] .. offsets[src + 1]`` (bounds read once, as vyre's Loop)."""
    return [Node.let_bind("edge_start", Expr.load(OFFSETS, Expr.var("src"))),
            Node.let_bind("edge_end", Expr.load(OFFSETS, Expr.add(Expr.var("src"), Expr.u32(1)))),
            Node.loop_for("e", Expr.var("edge_start"), Expr.var("edge_end"), list(body))]


def allowed(mask: int, body: Sequence[Node]) -> Node:
    return Node.if_then(Expr.ne(Expr.bitand(Expr.var("kind_mask"), Expr.u32(mask)), Expr.u32(0)), list(body))


def _forward_body(n: int, fin: str, fout: str, mask: int) -> list[Node]:
    t = Expr.gid_x()
    on_edge = [Node.let_bind("dst", Expr.load(TARGETS, Expr.var("e"))),
               Node.let_bind("kind_mask", Expr.load(KINDS, Expr.var("e"))),
               allowed(mask, [Node.if_then(Expr.lt(Expr.var("dst"), Expr.u32(n)),
                                           mark_node_bit(fout, "dst", "dst_word_idx", "dst_bit"))])]
    return [Node.if_then(Expr.lt(t, Expr.u32(n)), [
        Node.let_bind("src", t),
        Node.let_bind("word_idx", Expr.shr(Expr.var("src"), Expr.u32(5))),
        Node.let_bind("bit_mask", _bit_of("src")),
        Node.let_bind("src_word", Expr.load(fin, Expr.var("word_idx"))),
        Node.if_then(Expr.ne(Expr.bitand(Expr.var("src_word"), Expr.var("bit_mask")), Expr.u32(0)),
                     edge_loop(on_edge))])]


def _backward_body(n: int, fin: str, fout: str, mask: int) -> list[Node]:
    t = Expr.gid_x()
    # vyre keeps scanning after a hit; `hit == 0` only skips the loads.
    probe = Node.if_then(Expr.lt(Expr.var("dst"), Expr.u32(n)), [
        Node.let_bind("dst_word", Expr.load(fin, Expr.shr(Expr.var("dst"), Expr.u32(5)))),
        Node.let_bind("dst_bit", _bit_of("dst")),
        Node.if_then(Expr.ne(Expr.bitand(Expr.var("dst_word"), Expr.var("dst_bit")), Expr.u32(0)),
                     [Node.assign("hit", Expr.u32(1))])])
    on_edge = [Node.if_then(Expr.eq(Expr.var("hit"), Expr.u32(0)), [
        Node.let_bind("kind_mask", Expr.load(KINDS, Expr.var("e"))),
        allowed(mask, [Node.let_bind("dst", Expr.load(TARGETS, Expr.var("e"))), probe])])]
    return [Node.if_then(Expr.lt(t, Expr.u32(n)), [
        Node.let_bind("src", t), Node.let_bind("hit", Expr.u32(0)), *edge_loop(on_edge),
        Node.if_then(Expr.eq(Expr.var("hit"), Expr.u32(1)), mark_node_bit(fout, "src", "src_word_idx", "src_bit"))])]


def csr_step(op_id: str, forward: bool, node_count: int, edge_count: int, fin: str, fout: str,
             mask: int) -> Program:
    """vyre-primitives' ``csr_frontier_step_program`` (Forward or Backward) under ``Region(op_id)``."""
    words = bitset_words(node_count)
    buffers = [*shape_buffers(node_count, edge_count), ro_decl(fin, 5, words, U32), rw_decl(fout, 6, words, U32)]
    body = (_forward_body if forward else _backward_body)(node_count, fin, fout, mask)
    return Program.wrapped(buffers, STEP_WORKGROUP, [wrap_anonymous(op_id, body)])


def bitset_any(inp: str, out: str, words: int) -> Program:
    """vyre-primitives' ``bitset::any``: invocation 0 stores 1 if any word of ``inp`` is non-zero."""
    body = [Node.let_bind("acc", Expr.u32(0)), Node.let_bind("found", Expr.u32(0)),
            Node.loop_for("w", Expr.u32(0), Expr.u32(words), [
                Node.if_then(Expr.eq(Expr.var("found"), Expr.u32(0)), [
                    Node.assign("acc", Expr.bitor(Expr.var("acc"), Expr.load(inp, Expr.var("w")))),
                    Node.if_then(Expr.ne(Expr.var("acc"), Expr.u32(0)), [Node.assign("found", Expr.u32(1))])])]),
            Node.store(out, Expr.u32(0), Expr.select(Expr.ne(Expr.var("acc"), Expr.u32(0)), Expr.u32(1),
                                                     Expr.u32(0)))]
    buffers = [ro_decl(inp, 0, words, U32), rw_decl(out, 1, 1, U32)]
    return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous(BITSET_ANY_OP_ID, [
        Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), body)])])
