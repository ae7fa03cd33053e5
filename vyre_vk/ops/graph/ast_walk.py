"""`vyre-libs::graph::ast_walk_preorder` and `vyre-libs::graph::ast_walk_postorder`: stackless walks
of a VAST first-child / next-sibling tree (ports of vyre-libs/src/graph/ast_walk_{pre,post}order.rs,
``tag_program`` over vyre-primitives/src/graph/vast_tree_walk.rs).

``nodes`` holds ``node_count`` rows of ``NODE_STRIDE_U32`` = 10 words (vyre-foundation's VastNode:
kind, parent_idx, first_child, next_sibling, src_file, src_byte_off, src_byte_len, attr_off,
attr_len, reserved); links are node indices, ``SENTINEL`` (0xFFFFFFFF) or any index >= node_count
meaning none. The walk starts at node 0 and writes node indices to ``out[0..]``, at most
``out_cap`` of them, and at most ``node_count`` steps (so a cyclic table cannot hang it).

* preorder: emit ``n``; go to its first child if valid, else climb (at most node_count times)
  from ``n`` through parents to the first node with a valid next sibling and go there; stop when
  there is none.
* postorder: descend from 0 along first children to the leftmost leaf; emit ``n``; stop at node
  0; go to ``n``'s next sibling and descend to its leftmost leaf, else to its parent (stop if none).

Both programs are serial: workgroup [1,1,1] and no invocation guard, so every dispatched
invocation (vyre's grid gives one per ``out`` word) walks the tree and stores the same words to
the same slots. That write race is benign (identical values), as in vyre. Slots past the walk
keep the ``out`` buffer's input contents (it is ReadWrite).

Example::

    >>> p = ast_walk_preorder("nodes", "out", 6, 8)
    >>> [(b.name, b.count) for b in p.buffers], [r.generator for r in p.entry[0].body]
    ([('nodes', 60), ('out', 8)], ['vyre-primitives::graph::vast_walk_preorder'])
"""
from __future__ import annotations

from typing import Sequence

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ..hash.wrap import check_count
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice

PREORDER_OP_ID = "vyre-libs::graph::ast_walk_preorder"
POSTORDER_OP_ID = "vyre-libs::graph::ast_walk_postorder"
PRIMITIVE_PREORDER_OP_ID = "vyre-primitives::graph::vast_walk_preorder"
PRIMITIVE_POSTORDER_OP_ID = "vyre-primitives::graph::vast_walk_postorder"
NODE_STRIDE_U32 = 10
SENTINEL = 0xFFFFFFFF
PARENT, FIRST_CHILD, NEXT_SIBLING = 1, 2, 3  # word offsets inside a node row
ULP = None  # u32 results: exact
U32 = DataType.U32
U32_MAX = 0xFFFFFFFF


def _valid(e: Expr, node_count: int) -> Expr:
    return Expr.and_(Expr.ne(e, Expr.u32(SENTINEL)), Expr.lt(e, Expr.u32(node_count)))


def _field(nodes: str, base: Expr, offset: int) -> Expr:
    return Expr.load(nodes, Expr.add(base, Expr.u32(offset)))


def _ret_if(cond: Expr) -> Node:
    return Node.if_then(cond, [Node.return_()])


def preorder_body(nodes: str, out: str, node_count: int, out_cap: int) -> list[Node]:
    v = Expr.var
    climb = Node.loop_for("climb", Expr.u32(0), Expr.u32(node_count), [Node.if_then(
        Expr.and_(Expr.eq(v("next"), Expr.u32(SENTINEL)), _valid(v("walk"), node_count)), [
            Node.let_bind("walk_base", Expr.mul(v("walk"), Expr.u32(NODE_STRIDE_U32))),
            Node.let_bind("sib", _field(nodes, v("walk_base"), NEXT_SIBLING)),
            Node.if_then(_valid(v("sib"), node_count), [Node.assign("next", v("sib"))]),
            Node.if_then(Expr.not_(_valid(v("sib"), node_count)), [
                Node.let_bind("parent", _field(nodes, v("walk_base"), PARENT)),
                Node.assign("walk", v("parent"))]),
        ])])
    return [
        Node.let_bind("oi", Expr.u32(0)),
        Node.let_bind("n", Expr.u32(0)),
        Node.loop_for("step", Expr.u32(0), Expr.u32(node_count), [
            _ret_if(Expr.eq(Expr.u32(node_count), Expr.u32(0))),
            _ret_if(Expr.ge(v("oi"), Expr.u32(out_cap))),
            _ret_if(Expr.ge(v("n"), Expr.u32(node_count))),
            Node.let_bind("base", Expr.mul(v("n"), Expr.u32(NODE_STRIDE_U32))),
            Node.let_bind("fc", _field(nodes, v("base"), FIRST_CHILD)),
            Node.store(out, v("oi"), v("n")),
            Node.assign("oi", Expr.add(v("oi"), Expr.u32(1))),
            Node.if_then(_valid(v("fc"), node_count), [Node.assign("n", v("fc"))]),
            Node.if_then(Expr.not_(_valid(v("fc"), node_count)), [
                Node.let_bind("next", Expr.u32(SENTINEL)),
                Node.let_bind("walk", v("n")),
                climb,
                _ret_if(Expr.eq(v("next"), Expr.u32(SENTINEL))),
                Node.assign("n", v("next"))]),
        ]),
    ]


def _descend(nodes: str, node_count: int) -> Node:
    """Follow first children from ``n`` to the leftmost leaf (at most node_count steps)."""
    v = Expr.var
    return Node.loop_for("descend", Expr.u32(0), Expr.u32(node_count), [Node.if_then(_valid(v("n"), node_count), [
        Node.let_bind("fc_idx", Expr.add(Expr.mul(v("n"), Expr.u32(NODE_STRIDE_U32)), Expr.u32(FIRST_CHILD))),
        Node.let_bind("fc", Expr.load(nodes, v("fc_idx"))),
        Node.if_then(_valid(v("fc"), node_count), [Node.assign("n", v("fc"))])])])


def postorder_body(nodes: str, out: str, node_count: int, out_cap: int) -> list[Node]:
    v = Expr.var
    return [
        _ret_if(Expr.eq(Expr.u32(node_count), Expr.u32(0))),
        Node.let_bind("oi", Expr.u32(0)),
        Node.let_bind("n", Expr.u32(0)),
        _descend(nodes, node_count),
        Node.loop_for("emit", Expr.u32(0), Expr.u32(node_count), [
            _ret_if(Expr.ge(v("oi"), Expr.u32(out_cap))),
            _ret_if(Expr.ge(v("n"), Expr.u32(node_count))),
            Node.store(out, v("oi"), v("n")),
            Node.assign("oi", Expr.add(v("oi"), Expr.u32(1))),
            _ret_if(Expr.eq(v("n"), Expr.u32(0))),
            Node.let_bind("base", Expr.mul(v("n"), Expr.u32(NODE_STRIDE_U32))),
            Node.let_bind("sib", _field(nodes, v("base"), NEXT_SIBLING)),
            Node.if_then(_valid(v("sib"), node_count), [Node.assign("n", v("sib")), _descend(nodes, node_count)]),
            Node.if_then(Expr.not_(_valid(v("sib"), node_count)), [
                Node.let_bind("parent", _field(nodes, v("base"), PARENT)),
                _ret_if(Expr.not_(_valid(v("parent"), node_count))),
                Node.assign("n", v("parent"))]),
        ]),
    ]


def _walk(op_id: str, primitive_id: str, body_fn, nodes: str, out: str, node_count: int, out_cap: int) -> Program:
    check_count(op_id, "node_count", node_count)
    check_count(op_id, "out_cap", out_cap)
    if out_cap == 0:
        raise OpParamError(f"{op_id} requires out_cap > 0. Fix: allocate traversal output capacity (out_cap >= 1).")
    if node_count * NODE_STRIDE_U32 > U32_MAX:
        raise OpParamError(f"{op_id} node_count={node_count} stride={NODE_STRIDE_U32} overflows the VAST node buffer "
                           "words. Fix: shard the tree before GPU dispatch.")
    node_words = node_count * NODE_STRIDE_U32 if node_count else 1
    # tag_program: the primitive's Region re-parented under the vyre-libs op id.
    return Program.wrapped(
        [BufferDecl.read(nodes, 0, U32).with_count(node_words),
         BufferDecl.read_write(out, 1, U32).with_count(out_cap)],
        (1, 1, 1),
        [wrap_anonymous(op_id, [wrap_child(primitive_id, op_id, body_fn(nodes, out, node_count, out_cap))])])


def ast_walk_preorder(nodes: str, out: str, node_count: int, out_cap: int) -> Program:
    """Preorder node indices of the tree rooted at node 0."""
    return _walk(PREORDER_OP_ID, PRIMITIVE_PREORDER_OP_ID, preorder_body, nodes, out, node_count, out_cap)


def ast_walk_postorder_nodes(nodes: str, out: str, node_count: int, out_cap: int) -> Program:
    """Postorder node indices of the tree rooted at node 0."""
    return _walk(POSTORDER_OP_ID, PRIMITIVE_POSTORDER_OP_ID, postorder_body, nodes, out, node_count, out_cap)


def pack_nodes(rows: Sequence[tuple[int, int, int]]) -> list[int]:
    """VAST node words for ``(parent, first_child, next_sibling)`` rows (kind 1, src_byte_off = index,
    src_byte_len 1, other fields 0, as vyre's branching fixture)."""
    words: list[int] = []
    for k, (parent, first_child, next_sibling) in enumerate(rows):
        words += [1, parent, first_child, next_sibling, 0, k, 1, 0, 0, 0]
    return words


S = SENTINEL
#: vyre's branching fixture: 0 -> (1 -> (4), 2, 3 -> (5)); preorder 0 1 4 2 3 5, postorder 4 1 2 5 3 0.
BRANCHING_FIXTURE = ((S, 1, S), (0, 4, 2), (0, S, 3), (0, 5, S), (1, S, S), (3, S, S))


def _build_preorder(node_count: int = 6, out_cap: int = 8) -> Program:
    return ast_walk_preorder("nodes", "out", node_count, out_cap)


def _build_postorder(node_count: int = 6, out_cap: int = 8) -> Program:
    return ast_walk_postorder_nodes("nodes", "out", node_count, out_cap)


_INPUTS = [pack_u32_slice(pack_nodes(BRANCHING_FIXTURE)), pack_u32_slice([0] * 8)]
PREORDER = register_case(PREORDER_OP_ID, _build_preorder, _INPUTS, [pack_u32_slice([0, 1, 4, 2, 3, 5, 0, 0])],
                         category="graph", ulp=ULP, bench=dict(node_count=1 << 8, out_cap=1 << 8))
POSTORDER = register_case(POSTORDER_OP_ID, _build_postorder, _INPUTS, [pack_u32_slice([4, 1, 2, 5, 3, 0, 0, 0])],
                          category="graph", ulp=ULP, bench=dict(node_count=1 << 8, out_cap=1 << 8))

__all__ = ["NODE_STRIDE_U32", "POSTORDER_OP_ID", "PREORDER_OP_ID", "SENTINEL", "ast_walk_postorder_nodes",
           "ast_walk_preorder", "pack_nodes"]
