"""The two program shapes of vyre-libs/src/logical/wrap.rs.

- ``wrap_bitset_binary``: vyre-primitives' bitset word program (``binary_word.rs``: workgroup
  [256,1,1], ``if gid.x < words { out[gid.x] = op(a[gid.x], b[gid.x]) }`` in
  ``Region(primitive_op_id)``) placed as a child Region of the logical op:
  ``Region(op_id){ Region(primitive_op_id, parent=op_id){ Region(primitive_op_id){ if ... } } }``,
  with the logical op's buffers (``a``, ``b`` ro at bindings 0, 1, ``out`` an output at 2, count
  ``size``).
- ``build_logical_binary``: the u32 binary elementwise skeleton (workgroup [64,1,1]).

Example::

    >>> from vyre_vk.ir import Expr
    >>> p = wrap_bitset_binary("demo::and", "demo::bitset_and", "a", "b", "out", 4, Expr.bitand)
    >>> outer = p.entry[0]; child = outer.body[0]
    >>> outer.generator, child.generator, child.source_region, child.body[0].generator
    ('demo::and', 'demo::bitset_and', 'demo::and', 'demo::bitset_and')
"""
from __future__ import annotations

from typing import Callable

from ...ir import DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ..builder import out_decl, ro_decl
from ..math.elementwise import check_unique_names, u32_elementwise_binary

BITSET_WORKGROUP = (256, 1, 1)


def bitset_word_body(primitive_op_id: str, a: str, b: str, out: str, words: int,
                     op: Callable[[Expr, Expr], Expr]) -> list[Node]:
    """vyre-primitives' bitset binary word program's entry: one Region guarding ``gid.x < words``."""
    t = Expr.gid_x()
    return [wrap_anonymous(primitive_op_id, [
        Node.if_then(Expr.lt(t, Expr.u32(words)), [Node.store(out, t, op(Expr.load(a, t), Expr.load(b, t)))])])]


def wrap_bitset_binary(op_id: str, primitive_op_id: str, a: str, b: str, out: str, size: int,
                       op: Callable[[Expr, Expr], Expr]) -> Program:
    check_unique_names(op_id, a, b, out)
    u32 = DataType.U32
    buffers = [ro_decl(a, 0, size, u32), ro_decl(b, 1, size, u32), out_decl(out, 2, size, u32)]
    child = wrap_child(primitive_op_id, op_id, bitset_word_body(primitive_op_id, a, b, out, size, op))
    return Program.wrapped(buffers, BITSET_WORKGROUP, [wrap_anonymous(op_id, [child])])


def build_logical_binary(op_id: str, a: str, b: str, out: str, size: int,
                         op: Callable[[Expr, Expr], Expr]) -> Program:
    return u32_elementwise_binary(op_id, a, b, out, size, op)
