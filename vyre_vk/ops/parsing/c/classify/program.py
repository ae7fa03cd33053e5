"""`vyre-libs::parsing::c11_classify_vast_node_kinds`: the typed kind of every VAST row (port of
vyre-libs/src/parsing/c/parse/vast/classify.rs and classify/nodes_00.rs .. nodes_09.rs).

Invocation ``t < num_nodes`` (workgroup [256,1,1]) reads row ``t`` of ``vast_nodes`` (10 words:
kind, parent, first child, next sibling, previous sibling, start, len, typedef flags, scope,
symbol hash; see vast.py) and its neighbourhood, runs the declaration scans and rules of the
modules beside this one, and writes row ``t`` of ``out_typed_vast_nodes``: word 0 the typed kind
(a C_AST_KIND_*, a predicate node kind such as VARIABLE / CALL / BINARY, or 0), word 1 the parent
(moved to the ``*`` for the ``[`` of ``(*p)[..]``), words 2..9 copied. The scans make one
invocation O(num_nodes) (the ``(`` ancestor scan O(num_nodes) per ancestor).

The registered id is the plain variant (scans start at row 0; vyre guesses typedef names from
the stream when word 7 is zero everywhere). The ``precomputed_context`` variants read each scan's
start row from a 4-word-per-node ``decl_contexts`` buffer (binding 1, output at binding 2), and
the ``annotated`` one also trusts word 7's typedef flags instead of guessing.

Example::

    >>> p = c11_classify_vast_node_kinds("vast", 9, "typed")
    >>> [(b.name, b.binding, b.count) for b in p.buffers], p.workgroup_size
    ([('vast', 0, 90), ('typed', 1, 90)], (256, 1, 1))
"""
from __future__ import annotations

from typing import Optional

from .....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...common import check_len, child_phase, u, v, with_entry_op_id
from ....registry import register_case
from ....wire import pack_u32_slice
from .. import tokens as T
from ..vast import vast_rows
from ..vast_ref.classify import reference_classify_vast_node_kinds
from .context import STRIDE, neighbour_lets, word
from .decl_scans import (VAST_DECL_CONTEXT_STRIDE_U32, ancestor_scan, leading_definition_attribute, own_scan,
                         own_scan_lets, parent_open_kind, parent_scans)
from .kinds import kind_lets
from .rules import declarator_rules, expression_rules
from .typedef_suffix import suffix_lets, typedef_lets

OP_ID = "vyre-libs::parsing::c11_classify_vast_node_kinds"
PHASE_OP_ID = OP_ID + "::node_classification_pass"
ULP = None  # u32 results: exact
U32 = DataType.U32


def classify_body(vast: str, out: str, n: Expr, t: Expr, decl_contexts: Optional[str],
                  typedef_annotations_available: bool) -> list[Node]:
    """Invocation t's statements: nodes_00 .. nodes_09 in order, then words 1..9 of row t."""
    base = Expr.mul(t, u(STRIDE))
    body = [
        *neighbour_lets(vast, n, t, base),
        *parent_scans(vast, decl_contexts),
        ancestor_scan(vast, n),
        *parent_open_kind(vast, n),
        *own_scan_lets(decl_contexts, t),
        own_scan(vast, t),
        *leading_definition_attribute(vast, n, t),
        *typedef_lets(vast, n, t, typedef_annotations_available),
        *suffix_lets(vast, n),
        *declarator_rules(vast, t),
        *expression_rules(),
        *kind_lets(out, base),
    ]
    body += [Node.store(out, Expr.add(base, u(k)), v("declarator_parent_override") if k == 1 else word(vast, base, k))
             for k in range(1, STRIDE)]
    return body


def _classify(vast_nodes: str, decl_contexts: Optional[str], num_nodes: int, out_typed_vast_nodes: str,
              typedef_annotations_available: bool) -> Program:
    check_len(OP_ID, "num_nodes", num_nodes)
    n, t = u(num_nodes), Expr.gid_x()
    rows = max(num_nodes, 1)
    buffers = [BufferDecl.storage(vast_nodes, 0, BufferAccess.ReadOnly, U32).with_count(rows * STRIDE)]
    if decl_contexts is not None:
        buffers.append(BufferDecl.storage(decl_contexts, 1, BufferAccess.ReadOnly, U32)
                       .with_count(rows * VAST_DECL_CONTEXT_STRIDE_U32))
    buffers.append(BufferDecl.output(out_typed_vast_nodes, len(buffers), U32).with_count(rows * STRIDE))
    body = classify_body(vast_nodes, out_typed_vast_nodes, n, t, decl_contexts, typedef_annotations_available)
    program = Program.wrapped(buffers, (256, 1, 1), [wrap_anonymous(OP_ID, [
        Node.if_then(Expr.lt(t, n), [child_phase(OP_ID, PHASE_OP_ID, body)])])])
    return with_entry_op_id(program, OP_ID)


def c11_classify_vast_node_kinds(vast_nodes: str, num_nodes: int, out_typed_vast_nodes: str) -> Program:
    """Typed VAST rows of ``vast_nodes[0 .. 10 * num_nodes]`` (see the module doc)."""
    return _classify(vast_nodes, None, num_nodes, out_typed_vast_nodes, False)


def c11_classify_vast_node_kinds_precomputed_context(vast_nodes: str, decl_contexts: str, num_nodes: int,
                                                     out_typed_vast_nodes: str) -> Program:
    """As the plain variant, each scan starting at ``decl_contexts[4 * node]`` (its prefix start)."""
    return _classify(vast_nodes, decl_contexts, num_nodes, out_typed_vast_nodes, False)


def c11_classify_annotated_vast_node_kinds_precomputed_context(vast_nodes: str, decl_contexts: str, num_nodes: int,
                                                               out_typed_vast_nodes: str) -> Program:
    """The precomputed-context variant that takes word 7's typedef flags as complete."""
    return _classify(vast_nodes, decl_contexts, num_nodes, out_typed_vast_nodes, True)


def _build(num_nodes: int = 9) -> Program:
    return c11_classify_vast_node_kinds("vast_nodes", num_nodes, "out_typed_vast_nodes")


# vyre's witness (vast/ref_expr_shape.rs): the VAST rows of `int main() { return 2; }`.
WITNESS_TYPES = [T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_RETURN, T.TOK_INTEGER,
                 T.TOK_SEMICOLON, T.TOK_RBRACE]
WITNESS_ROWS = vast_rows(WITNESS_TYPES, [0, 4, 8, 9, 10, 11, 18, 19, 20], [3, 4, 1, 1, 1, 6, 1, 1, 1])
# Expected bytes: vyre's CPU oracle (ref_classify.rs, ported in vast_ref/classify.py) over them.
ENTRY = register_case(OP_ID, _build, [pack_u32_slice(WITNESS_ROWS), bytes(len(WITNESS_ROWS) * 4)],
                      [pack_u32_slice(reference_classify_vast_node_kinds(WITNESS_ROWS))], category="parsing", ulp=ULP,
                      bench=dict(num_nodes=2048))  # one invocation per row, each O(num_nodes)
