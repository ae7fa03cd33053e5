"""The security ops that are ONE step of a frontier fixpoint, each with vyre's
``ConvergenceContract { max_iterations: 4096 }`` (vyre-libs/src/security/{flows_to, taint_flow,
dominator_tree, bounded_by_comparison, sanitized_by}.rs).

A registered vector is one dispatch (vyre's OpEntry vectors are); the fixpoint is what
:func:`vyre_vk.reference.convergence.converge` / :func:`vyre_vk.runtime.convergence.converge` compute
under the contract registered here (frontiers ``fin`` -> ``fout``; ``fout`` accumulates with atomicOr).

- ``flows_to`` / ``taint_flow``: forward CSR step along ``FLOWS_TO_MASK`` (dataflow kinds), as
  ``tag_program(op, csr_forward_traverse)``; the fixpoint is forward reachability.
- ``dominator_tree``: backward CSR step along ``DOMINANCE | BLOCK_MEMBER`` (vyre names it after
  its use: from a node's set over dominator-tree edges the fixpoint is its dominator set; over
  other graphs it is backward reachability, a may-over-approximation, as vyre's own test says).
- ``bounded_by_comparison``: the backward step along ``DOMINANCE`` only.
- ``sanitized_by``: ``clean = fin & ~san`` (stored per word), then the forward step from ``clean``.

Buffers: the five ProgramGraph tables (bindings 0..4), ``fin`` ro, ``fout`` rw (``ceil(n/32)`` words);
sanitized_by: ``fin`` 0, ``san`` 1, ``__sanitized_by_clean__<fin>`` rw 2, the tables 3..7, ``fout`` 8.

Example::

    >>> p = flows_to(4, 3, "fin", "fout")
    >>> p.entry[0].generator, p.entry[0].body[0].generator
    ('vyre-libs::security::flows_to', 'vyre-primitives::graph::csr_forward_traverse')
    >>> convergence_contract(DOMINATOR_TREE_OP_ID).max_iterations
    4096
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program, wrap_anonymous
from ..builder import ro_decl, rw_decl
from ..convergence import convergence_contract, register_convergence  # noqa: F401 (doctest)
from ..registry import register_case
from ..wire import pack_u32_slice as u32s
from .fixpoint_graph import (ASSIGNMENT, BACKWARD_OP_ID, BLOCK_MEMBER, DOMINANCE, FLOWS_TO_MASK, FORWARD_OP_ID,
                             KINDS, TARGETS, allowed, csr_step, edge_loop, mark_node_bit, shape_buffers)
from .region import bitset_words, check_buffer_names, check_node_count, tag_program

P = "vyre-libs::security::"
FLOWS_TO_OP_ID, TAINT_FLOW_OP_ID = P + "flows_to", P + "taint_flow"
DOMINATOR_TREE_OP_ID, BOUNDED_OP_ID, SANITIZED_BY_OP_ID = P + "dominator_tree", P + "bounded_by_comparison", \
    P + "sanitized_by"
# u32 results: byte-exact.
ULP = None
U32 = DataType.U32


def _checked(op_id: str, node_count: int, edge_count: int, *names: str) -> None:
    check_node_count(op_id, node_count)
    if not isinstance(edge_count, int) or isinstance(edge_count, bool) or not 0 <= edge_count < 2**32:
        from ..registry import OpParamError
        raise OpParamError(f"{op_id} edge_count must be a u32; got {edge_count!r}. Fix: pass the CSR edge count.")
    check_buffer_names(op_id, *names)


def flows_to(node_count: int, edge_count: int, frontier_in: str, frontier_out: str) -> Program:
    """One forward dataflow step: ``frontier_out |= succ(frontier_in)`` along FLOWS_TO_MASK edges."""
    _checked(FLOWS_TO_OP_ID, node_count, edge_count, frontier_in, frontier_out)
    return tag_program(FLOWS_TO_OP_ID, csr_step(FORWARD_OP_ID, True, node_count, edge_count, frontier_in,
                                                 frontier_out, FLOWS_TO_MASK))


def taint_flow(node_count: int, edge_count: int, frontier_in: str, frontier_out: str) -> Program:
    """flows_to's step under its own op id (vyre keeps both predicate names)."""
    _checked(TAINT_FLOW_OP_ID, node_count, edge_count, frontier_in, frontier_out)
    return tag_program(TAINT_FLOW_OP_ID, csr_step(FORWARD_OP_ID, True, node_count, edge_count, frontier_in,
                                                   frontier_out, FLOWS_TO_MASK))


def dominator_tree(node_count: int, edge_count: int, frontier_in: str, frontier_out: str) -> Program:
    """One backward step along DOMINANCE | BLOCK_MEMBER: ``frontier_out |= pred(frontier_in)``."""
    _checked(DOMINATOR_TREE_OP_ID, node_count, edge_count, frontier_in, frontier_out)
    return tag_program(DOMINATOR_TREE_OP_ID, csr_step(BACKWARD_OP_ID, False, node_count, edge_count, frontier_in,
                                                       frontier_out, DOMINANCE | BLOCK_MEMBER))


def bounded_by_comparison(node_count: int, edge_count: int, frontier_in: str, frontier_out: str) -> Program:
    """One backward step along DOMINANCE edges."""
    _checked(BOUNDED_OP_ID, node_count, edge_count, frontier_in, frontier_out)
    return tag_program(BOUNDED_OP_ID, csr_step(BACKWARD_OP_ID, False, node_count, edge_count, frontier_in,
                                                frontier_out, DOMINANCE))


def sanitized_by(node_count: int, edge_count: int, frontier_in: str, sanitizers_in: str,
                 frontier_out: str) -> Program:
    """``clean = frontier_in & ~sanitizers_in`` (stored), then ``frontier_out |= succ(clean)``."""
    clean = f"__sanitized_by_clean__{frontier_in}"
    _checked(SANITIZED_BY_OP_ID, node_count, edge_count, frontier_in, sanitizers_in, frontier_out, clean)
    words = bitset_words(node_count)
    t = Expr.gid_x()
    clean_word = Expr.bitand(Expr.load(frontier_in, Expr.var("word_idx")),
                             Expr.bitnot(Expr.load(sanitizers_in, Expr.var("word_idx"))))
    on_edge = [Node.let_bind("kind_mask", Expr.load(KINDS, Expr.var("e"))),
               allowed(FLOWS_TO_MASK, [Node.let_bind("dst", Expr.load(TARGETS, Expr.var("e"))),
                                       Node.if_then(Expr.lt(Expr.var("dst"), Expr.u32(node_count)),
                                                    mark_node_bit(frontier_out, "dst", "dst_word_idx", "dst_bit"))])]
    body = [
        Node.if_then(Expr.lt(t, Expr.u32(words)), [Node.let_bind("word_idx", t), Node.store(clean, t, clean_word)]),
        Node.if_then(Expr.lt(t, Expr.u32(node_count)), [
            Node.let_bind("src", t),
            Node.let_bind("word_idx", Expr.shr(Expr.var("src"), Expr.u32(5))),
            Node.let_bind("bit_mask", Expr.shl(Expr.u32(1), Expr.bitand(Expr.var("src"), Expr.u32(31)))),
            Node.let_bind("clean_word", clean_word),
            Node.if_then(Expr.ne(Expr.bitand(Expr.var("clean_word"), Expr.var("bit_mask")), Expr.u32(0)),
                         edge_loop(on_edge))])]
    buffers = [ro_decl(frontier_in, 0, words, U32), ro_decl(sanitizers_in, 1, words, U32),
               rw_decl(clean, 2, words, U32), *shape_buffers(node_count, edge_count, 3),
               rw_decl(frontier_out, 8, words, U32)]
    return Program.wrapped(buffers, (256, 1, 1), [wrap_anonymous(SANITIZED_BY_OP_ID, body)])


def _build_flows_to(node_count: int = 4, edge_count: int = 3) -> Program:
    return flows_to(node_count, edge_count, "fin", "fout")


def _build_taint_flow(node_count: int = 4, edge_count: int = 3) -> Program:
    return taint_flow(node_count, edge_count, "fin", "fout")


def _build_dominator_tree(node_count: int = 4, edge_count: int = 4) -> Program:
    return dominator_tree(node_count, edge_count, "fin", "fout")


def _build_bounded(node_count: int = 4, edge_count: int = 4) -> Program:
    return bounded_by_comparison(node_count, edge_count, "fin", "fout")


def _build_sanitized_by(node_count: int = 4, edge_count: int = 3) -> Program:
    return sanitized_by(node_count, edge_count, "fin", "san", "fout")


# vyre's fixtures: the chain 0 -> 1 -> 2 -> 3 (ASSIGNMENT) from {0}, fout seeded {0}: one step adds {1}.
_CHAIN = [u32s([0, 0, 0, 0]), u32s([0, 1, 2, 3, 3]), u32s([1, 2, 3]), u32s([ASSIGNMENT] * 3), u32s([0, 0, 0, 0])]
# The diamond 0 -> {1, 2} -> 3 (DOMINANCE) from {3}, fout seeded {3}: one backward step adds {1, 2}.
_DIAMOND = [u32s([0, 0, 0, 0]), u32s([0, 2, 3, 4, 4]), u32s([1, 2, 3, 3]), u32s([DOMINANCE] * 4),
            u32s([0, 0, 0, 0])]
_BENCH = dict(node_count=1 << 16, edge_count=1 << 18)

FLOWS_TO_ENTRY = register_case(FLOWS_TO_OP_ID, _build_flows_to, [*_CHAIN, u32s([0b0001]), u32s([0b0001])],
                               [u32s([0b0011])], category="security", ulp=ULP, bench=_BENCH)
TAINT_FLOW_ENTRY = register_case(TAINT_FLOW_OP_ID, _build_taint_flow, [*_CHAIN, u32s([0b0001]), u32s([0b0001])],
                                 [u32s([0b0011])], category="security", ulp=ULP, bench=_BENCH)
DOMINATOR_TREE_ENTRY = register_case(DOMINATOR_TREE_OP_ID, _build_dominator_tree,
                                     [*_DIAMOND, u32s([0b1000]), u32s([0b1000])], [u32s([0b1110])],
                                     category="security", ulp=ULP, bench=_BENCH)
BOUNDED_ENTRY = register_case(BOUNDED_OP_ID, _build_bounded, [*_DIAMOND, u32s([0b1000]), u32s([0b1000])],
                              [u32s([0b1110])], category="security", ulp=ULP, bench=_BENCH)
# fin {0}, san {1}, clean scratch, the chain with node 1 tagged, fout seeded {0}.
SANITIZED_BY_ENTRY = register_case(
    SANITIZED_BY_OP_ID, _build_sanitized_by,
    [u32s([0b0001]), u32s([0b0010]), u32s([0]), *_CHAIN[:4], u32s([0, 1, 0, 0]), u32s([0b0001])],
    [u32s([0b0001]), u32s([0b0011])], category="security", ulp=ULP, bench=_BENCH)

for _op in (FLOWS_TO_OP_ID, TAINT_FLOW_OP_ID, DOMINATOR_TREE_OP_ID, BOUNDED_OP_ID, SANITIZED_BY_OP_ID):
    register_convergence(_op, 4096)
