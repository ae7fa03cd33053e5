"""Region and bitset helpers the security ops share (ports of vyre-harness/src/region.rs
``tag_program`` / ``reparent_program_children`` and vyre-primitives' bitset word programs,
vyre-primitives/src/bitset/binary_word.rs and graph/csr_forward_traverse.rs ``bitset_words``).

- ``reparent_program_children(program, parent)``: the program's entry Regions, each now naming
  ``parent`` as its ``source_region`` (a root Region becomes ``inline::<parent>``; a bare node is
  wrapped into one), generators kept.
- ``tag_program(parent, program)``: the same buffers and workgroup under one ``Region(parent)``
  holding the re-parented children.
- ``bitset_word_program(primitive_id, lhs, rhs, out, words, op)``: vyre-primitives' per-word
  bitset program: ``lhs``, ``rhs`` ro, ``out`` plain ReadWrite (bindings 0..2, ``words`` each),
  workgroup [256,1,1], ``Region(primitive_id){ if gid.x < words { out[gid.x] = op(lhs, rhs) } }``.

Example::

    >>> from vyre_vk.ir import Expr
    >>> p = tag_program("demo::parent", bitset_word_program(BITSET_AND_OP_ID, "a", "b", "o", 1, Expr.bitand))
    >>> child = p.entry[0].body[0]
    >>> p.entry[0].generator, child.generator, child.source_region, bitset_words(33)
    ('demo::parent', 'vyre-primitives::bitset::and', 'demo::parent', 2)
"""
from __future__ import annotations

from typing import Callable

from ...ir import (BufferDecl, DataType, Expr, Node, Program, Region, reparent_program_children,  # noqa: F401
                   tag_program, wrap, wrap_anonymous)
from ..builder import ro_decl, rw_decl
from ..math.elementwise import check_unique_names
from ..registry import OpParamError

BITSET_AND_OP_ID = "vyre-primitives::bitset::and"
BITSET_AND_NOT_OP_ID = "vyre-primitives::bitset::and_not"
BITSET_WORKGROUP = (256, 1, 1)
U32_MAX = 0xFFFFFFFF


def bitset_words(node_count: int) -> int:
    """u32 words of a NodeSet over ``node_count`` nodes: ``ceil(node_count / 32)``."""
    return -(-int(node_count) // 32)


def check_node_count(op_id: str, node_count: int) -> int:
    """vyre's ``assert_security_inputs`` rule: a positive u32 node count (0 would declare
    count-0 buffers, which vyre reads as runtime-sized)."""
    if not isinstance(node_count, int) or isinstance(node_count, bool) or not 0 < node_count <= U32_MAX:
        raise OpParamError(f"{op_id} node_count must be a positive u32; got {node_count!r}. "
                           "Fix: pass the number of graph nodes (>= 1); skip empty translation units.")
    return node_count


def check_buffer_names(op_id: str, *names: str) -> None:
    """Non-empty, pairwise distinct buffer names (vyre's ``assert_security_inputs`` + NameCollision)."""
    for name in names:
        if not isinstance(name, str) or not name:
            raise OpParamError(f"{op_id} requires a non-empty buffer name; got {name!r}. "
                               "Fix: pass a stable non-empty buffer identifier.")
    check_unique_names(op_id, *names)


def bitset_word_program(primitive_op_id: str, lhs: str, rhs: str, out: str, words: int,
                        op: Callable[[Expr, Expr], Expr]) -> Program:
    t = Expr.gid_x()
    u32 = DataType.U32
    buffers: list[BufferDecl] = [ro_decl(lhs, 0, words, u32), ro_decl(rhs, 1, words, u32), rw_decl(out, 2, words, u32)]
    body = [Node.if_then(Expr.lt(t, Expr.u32(words)), [Node.store(out, t, op(Expr.load(lhs, t), Expr.load(rhs, t)))])]
    return Program.wrapped(buffers, BITSET_WORKGROUP, [wrap_anonymous(primitive_op_id, body)])


def and_not(lhs: Expr, rhs: Expr) -> Expr:
    """``lhs & ~rhs`` (vyre's ``BitwiseBinaryOp::AndNot``)."""
    return Expr.bitand(lhs, Expr.bitnot(rhs))
