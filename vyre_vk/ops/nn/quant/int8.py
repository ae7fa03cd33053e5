"""`vyre-libs::quant::int8_unpack` and `vyre-libs::quant::int8_pack` (port of
vyre-libs/src/nn/quant/int8.rs), workgroup [64,1,1], guard ``i < n``:

- unpack: ``output[i] = f32(packed[i]) * scales[i / cols]`` (one code per u32 word, unsigned,
  no masking; ``rows = ceil(n / cols)`` scales);
- pack: ``output[i] = input[i] & 0xFF``.

Example::

    >>> [(b.name, b.count) for b in int8_unpack("packed", "scales", "output", 4, 2).buffers]
    [('packed', 4), ('scales', 2), ('output', 4)]
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import OpEntry, register
from ...wire import pack_f32_slice, pack_u32_slice
from .pack import int8_pack  # noqa: F401  (re-exported: vyre's int8 module has both)

UNPACK_OP_ID = "vyre-libs::quant::int8_unpack"
# 4 ULP: elementary f32 ops only (vyre's program budget); one cast (exact below 2^24) and one multiply.
ULP = 4


def _map(op_id: str, buffers: list, output: str, n: int, value: Expr) -> Program:
    i = Expr.var("i")
    body = [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.u32(n)), [Node.store(output, i, value)])]
    return Program.wrapped(buffers, (64, 1, 1), [wrap_anonymous(op_id, body)])


def int8_unpack(packed: str, scales: str, output: str, n: int, cols: int) -> Program:
    rows = -(-n // cols)
    i = Expr.var("i")
    value = Expr.mul(Expr.cast(DataType.F32, Expr.load(packed, i)), Expr.load(scales, Expr.div(i, Expr.u32(cols))))
    return _map(UNPACK_OP_ID,
                [BufferDecl.storage(packed, 0, BufferAccess.ReadOnly, DataType.U32).with_count(n),
                 BufferDecl.storage(scales, 1, BufferAccess.ReadOnly, DataType.F32).with_count(rows),
                 BufferDecl.output(output, 2, DataType.F32).with_count(n)],
                output, n, value)


def _build_unpack(n: int = 4, cols: int = 2) -> Program:
    return int8_unpack("packed", "scales", "output", n, cols)


ENTRY_UNPACK = register(OpEntry(
    id=UNPACK_OP_ID, build=_build_unpack, builder=_build_unpack, params={"n": 4, "cols": 2},
    test_inputs=lambda: [[pack_u32_slice([10, 20, 30, 40]), pack_f32_slice([0.5, 2.0])]],
    # row0: [10*0.5, 20*0.5] = [5, 10]; row1: [30*2, 40*2] = [60, 80]
    expected_output=lambda: [[pack_f32_slice([5.0, 10.0, 60.0, 80.0])]],
    category="nn", ulp=ULP,
))
