"""`vyre-libs::substrate::{indexed_map, strided_accumulate}`: the shared kernel skeletons of
vyre-libs/src/builder.rs registered as ops of their own (port of vyre-libs/src/substrate_catalog.rs).

- ``indexed_map``: ``out[i] = input[i] + 1`` for ``i = gid.x < n`` through ``build_indexed_map``
  (``Region(indexed_map){ Region(indexed_map, parent=indexed_map){...} }``); ``input`` ro u32
  (binding 0), ``out`` output u32 (1), count ``n``; workgroup [4,1,1].
- ``strided_accumulate``: in workgroup 0 lane ``local`` sums ``values[chunk*tile + local]`` over
  ``chunk < ceil(n/tile)`` (wrapping u32) into ``scratch[local]`` (the strided-accumulate child
  Region), a barrier, then lane 0 stores ``scratch[0]`` to ``out[0]`` (no tree: ``out[0]`` is lane
  0's partial, the sum of ``values[0], values[tile], ...``). ``values`` ro u32 (binding 0, count
  n), ``scratch`` workgroup u32 (tile), ``out`` output u32 (1, count 1); workgroup [tile,1,1].

vyre builds both at one fixed size (n = 4, tile = 4); here those are the builders' defaults.

As in vyre, the final store is guarded by ``local == 0`` only: for ``n > tile`` the inferred grid
has ``ceil(n/tile)`` workgroups and every one's lane 0 stores its own ``scratch[0]`` (0 outside
workgroup 0) into ``out[0]``, a race. Run such sizes with grid (1,1,1) (the oracle does; the
registered size is one workgroup).

Example::

    >>> p = strided_accumulate()
    >>> p.workgroup_size, [(b.name, b.count) for b in p.buffers]
    ((4, 1, 1), [('values', 4), ('scratch', 4), ('out', 1)])
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..builder import (INDEXED_MAP_OP_ID, STRIDED_ACCUMULATE_OP_ID, build_indexed_map, out_decl, ro_decl,
                       strided_accumulate_child)
from ..registry import OpParamError, register_op
from ..wire import pack_u32_slice

# u32 results: byte-exact (no f32 window).
ULP = None
INDEXED_MAP_WORKGROUP = (4, 1, 1)


def indexed_map(n: int = 4) -> Program:
    """``out[i] = input[i] + 1`` (wrapping) for ``i < n``."""
    u32 = DataType.U32
    return build_indexed_map(INDEXED_MAP_OP_ID, [ro_decl("input", 0, n, u32), out_decl("out", 1, n, u32)], "out", n,
                             INDEXED_MAP_WORKGROUP, lambda i: (i, Expr.add(Expr.load("input", i), Expr.u32(1))))


def strided_accumulate(n: int = 4, tile: int = 4) -> Program:
    """``out[0]`` = the wrapping sum of ``values[k*tile]`` for ``k*tile < n`` (lane 0's partial)."""
    if n < 1 or tile < 1:
        raise OpParamError(f"strided_accumulate needs n >= 1 and tile >= 1, got n={n}, tile={tile}. "
                           "Fix: pass positive sizes (vyre registers n=4, tile=4).")
    chunks = -(-n // tile)
    local = Expr.var("local")
    body = [
        Node.let_bind("local", Expr.local_x()),
        strided_accumulate_child(STRIDED_ACCUMULATE_OP_ID, tile, chunks, n, "acc", Expr.u32(0), "scratch",
                                 lambda idx, acc: Expr.add(acc, Expr.load("values", idx))),
        Node.barrier(),
        Node.if_then(Expr.eq(local, Expr.u32(0)), [Node.store("out", Expr.u32(0), Expr.load("scratch", Expr.u32(0)))]),
    ]
    return Program.wrapped(
        [ro_decl("values", 0, n, DataType.U32), BufferDecl.workgroup("scratch", tile, DataType.U32),
         out_decl("out", 1, 1, DataType.U32)],
        (tile, 1, 1),
        [wrap_anonymous(STRIDED_ACCUMULATE_OP_ID, body)],
    )


INDEXED_MAP_ENTRY = register_op(
    INDEXED_MAP_OP_ID, indexed_map,
    test_inputs=lambda: [[pack_u32_slice([1, 2, 3, 4])]],
    expected_output=lambda: [[pack_u32_slice([2, 3, 4, 5])]],
    category=None, ulp=ULP, bench=dict(n=1 << 22),
)

STRIDED_ACCUMULATE_ENTRY = register_op(
    STRIDED_ACCUMULATE_OP_ID, strided_accumulate,
    test_inputs=lambda: [[pack_u32_slice([7, 11, 13, 17])]],
    expected_output=lambda: [[pack_u32_slice([7])]],
    category=None, ulp=ULP, bench=dict(n=1024, tile=1024),  # one workgroup: race-free
)
