"""Shared kernel skeletons of vyre-libs/src/builder.rs.

- ``build_indexed_map``: ``for i < count: out[dst(i)] = value(i)`` inside
  ``Region(op_id){ Region("vyre-libs::substrate::indexed_map", parent=op_id){...} }``.
- ``strided_accumulate_child`` / ``strided_accumulate2_child`` / ``strided_writeback_child``:
  workgroup-0 loops over ``idx = chunk*tile + local`` (the parent binds ``local``).
- ``elementwise_program``: the one-invocation-per-element kernel most vyre-libs ops write out by
  hand, ``i = gid.x; if i < bound { body }`` in ``Region(op_id)``, workgroup [64,1,1]; with
  ``ro_decl`` / ``rw_decl`` / ``out_decl`` for its buffer lists.

Example::

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr
    >>> p = build_indexed_map("demo::copy", [BufferDecl.read("a", 0, DataType.U32).with_count(4),
    ...     BufferDecl.output("o", 1, DataType.U32).with_count(4)], "o", 4, (64, 1, 1),
    ...     lambda i: (i, Expr.load("a", i)))
    >>> p.entry[0].body[0].generator
    'vyre-libs::substrate::indexed_map'
"""
from __future__ import annotations

from typing import Callable, Sequence, Union

from ..ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous, wrap_child

INDEXED_MAP_OP_ID = "vyre-libs::substrate::indexed_map"
STRIDED_ACCUMULATE_OP_ID = "vyre-libs::substrate::strided_accumulate"
STRIDED_WRITEBACK_OP_ID = "anonymous::vyre-libs::substrate::strided_writeback"


def build_indexed_map(op_id: str, buffers: Sequence, output: str, count: int,
                      workgroup_size: Sequence[int], f: Callable[[Expr], tuple]) -> Program:
    i = Expr.var("i")
    dst_index, value = f(i)
    child_body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.u32(count)), [Node.store(output, dst_index, value)]),
    ]
    return Program.wrapped(list(buffers), tuple(workgroup_size),
                           [wrap_anonymous(op_id, [wrap_child(INDEXED_MAP_OP_ID, op_id, child_body)])])


def ro_decl(name: str, binding: int, count: int, dtype: DataType = DataType.F32) -> BufferDecl:
    """A read-only storage buffer of `count` elements."""
    return BufferDecl.read(name, binding, dtype).with_count(count)


def rw_decl(name: str, binding: int, count: int, dtype: DataType = DataType.F32) -> BufferDecl:
    """A ReadWrite storage buffer of `count` elements: an input (initial contents) and a result."""
    return BufferDecl.read_write(name, binding, dtype).with_count(count)


def out_decl(name: str, binding: int, count: int, dtype: DataType = DataType.F32) -> BufferDecl:
    """An output buffer (zero-initialised result) of `count` elements."""
    return BufferDecl.output(name, binding, dtype).with_count(count)


def elementwise_program(op_id: str, buffers: Sequence[BufferDecl], bound: Union[int, Expr], body: Sequence[Node],
                        index: str = "i", workgroup_size: Sequence[int] = (64, 1, 1)) -> Program:
    """``index = gid.x; if index < bound { body }`` in ``Region(op_id)``; an int `bound` is a u32
    literal, an Expr (e.g. ``buf_len(input)``) is used as is. `body` reads ``Expr.var(index)``."""
    limit = Expr.u32(bound) if isinstance(bound, int) else bound
    nodes = [Node.let_bind(index, Expr.gid_x()), Node.if_then(Expr.lt(Expr.var(index), limit), list(body))]
    return Program.wrapped(list(buffers), tuple(workgroup_size), [wrap_anonymous(op_id, nodes)])


def _strided_loop(tile: int, chunks: int, n: int, guarded_body: list) -> Node:
    return Node.loop_for("chunk", Expr.u32(0), Expr.u32(chunks), [
        Node.let_bind("idx", Expr.add(Expr.mul(Expr.var("chunk"), Expr.u32(tile)), Expr.var("local"))),
        Node.if_then(Expr.lt(Expr.var("idx"), Expr.u32(n)), guarded_body),
    ])


def _wg0() -> Expr:
    return Expr.eq(Expr.workgroup_x(), Expr.u32(0))


def strided_accumulate_child(parent_op_id: str, tile: int, chunks: int, n: int, acc_name: str,
                             initial: Expr, scratch: str, step: Callable[[Expr, Expr], Expr]):
    idx = Expr.var("idx")
    body = [Node.if_then(_wg0(), [
        Node.let_bind(acc_name, initial),
        _strided_loop(tile, chunks, n, [Node.assign(acc_name, step(idx, Expr.var(acc_name)))]),
        Node.store(scratch, Expr.var("local"), Expr.var(acc_name)),
    ])]
    return wrap_child(STRIDED_ACCUMULATE_OP_ID, parent_op_id, body)


def strided_accumulate2_child(parent_op_id: str, tile: int, chunks: int, n: int, first: tuple, second: tuple):
    """``first``/``second`` = (acc_name, initial, scratch, step(idx, acc))."""
    (n1, i1, s1, f1), (n2, i2, s2, f2) = first, second
    idx = Expr.var("idx")
    body = [Node.if_then(_wg0(), [
        Node.let_bind(n1, i1),
        Node.let_bind(n2, i2),
        _strided_loop(tile, chunks, n, [Node.assign(n1, f1(idx, Expr.var(n1))),
                                        Node.assign(n2, f2(idx, Expr.var(n2)))]),
        Node.store(s1, Expr.var("local"), Expr.var(n1)),
        Node.store(s2, Expr.var("local"), Expr.var(n2)),
    ])]
    return wrap_child(STRIDED_ACCUMULATE_OP_ID, parent_op_id, body)


def strided_writeback_child(parent_op_id: str, tile: int, chunks: int, n: int, output: str,
                            prelude: Sequence, value: Callable[[Expr], Expr]):
    idx = Expr.var("idx")
    guarded = list(prelude) + [_strided_loop(tile, chunks, n, [Node.store(output, idx, value(idx))])]
    return wrap_child(STRIDED_WRITEBACK_OP_ID, parent_op_id, [Node.if_then(_wg0(), guarded)])
