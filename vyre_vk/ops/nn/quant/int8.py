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

from ....ir import DataType, Expr, Node, Program
from ...builder import elementwise_program, out_decl, ro_decl
from ...registry import register_case
from ...wire import pack_f32_slice, pack_u32_slice
from .pack import int8_pack  # noqa: F401  (re-exported: vyre's int8 module has both)

UNPACK_OP_ID = "vyre-libs::quant::int8_unpack"
# 4 ULP: elementary f32 ops only (vyre's program budget); one cast (exact below 2^24) and one multiply.
ULP = 4


def int8_unpack(packed: str, scales: str, output: str, n: int, cols: int) -> Program:
    rows = -(-n // cols)
    i = Expr.var("i")
    value = Expr.mul(Expr.cast(DataType.F32, Expr.load(packed, i)), Expr.load(scales, Expr.div(i, Expr.u32(cols))))
    return elementwise_program(UNPACK_OP_ID, [ro_decl(packed, 0, n, DataType.U32), ro_decl(scales, 1, rows),
                                              out_decl(output, 2, n)], n, [Node.store(output, i, value)])


def _build_unpack(n: int = 4, cols: int = 2) -> Program:
    return int8_unpack("packed", "scales", "output", n, cols)


# row0: [10*0.5, 20*0.5] = [5, 10]; row1: [30*2, 40*2] = [60, 80]
ENTRY_UNPACK = register_case(UNPACK_OP_ID, _build_unpack,
                             [pack_u32_slice([10, 20, 30, 40]), pack_f32_slice([0.5, 2.0])],
                             [pack_f32_slice([5.0, 10.0, 60.0, 80.0])], category="nn", ulp=ULP,
                             bench=dict(n=1 << 24, cols=4096))
