"""`vyre-libs::quant::int6_unpack` and `vyre-libs::quant::int6_pack` (port of
vyre-libs/src/nn/quant/int6.rs), indexed maps with workgroup [64,1,1]:

- unpack: ``output[i] = f32(packed[i] & 0x3F) * scale[i/block] + zero[i/block]`` (one 6-bit code
  per u32 word, as upstream; no 4-per-3-bytes packing despite the module comment);
- pack: ``output[i] = input[i] & 0x3F``.

Example::

    >>> [(b.name, b.count) for b in int6_unpack("packed", "scale", "zero", "output", 4, 4).buffers]
    [('packed', 4), ('scale', 1), ('zero', 1), ('output', 4)]
"""
from __future__ import annotations

from ....ir import DataType, Expr, Program
from ...builder import build_indexed_map, out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice, pack_u32_slice
from .pack import int6_pack  # noqa: F401  (re-exported: vyre's int6 module has both)

UNPACK_OP_ID = "vyre-libs::quant::int6_unpack"
# 4 ULP: elementary f32 ops only (vyre's program budget; a backend may contract a*b+c).
ULP = 4


def int6_unpack(packed: str, scale: str, zero: str, output: str, n: int, block_size: int) -> Program:
    n_blocks = -(-n // block_size)

    def f(i):
        block = Expr.div(i, Expr.u32(block_size))
        masked = Expr.bitand(Expr.load(packed, i), Expr.u32(0x3F))
        return i, Expr.add(Expr.mul(Expr.cast(DataType.F32, masked), Expr.load(scale, block)), Expr.load(zero, block))

    return build_indexed_map(
        UNPACK_OP_ID,
        [ro_decl(packed, 0, n, DataType.U32), ro_decl(scale, 1, n_blocks), ro_decl(zero, 2, n_blocks),
         out_decl(output, 3, n)],
        output, n, (64, 1, 1), f)


def _build_unpack(n: int = 4, block_size: int = 4) -> Program:
    return int6_unpack("packed", "scale", "zero", "output", n, block_size)


ENTRY_UNPACK = register_op(
    UNPACK_OP_ID, _build_unpack,
    test_inputs=lambda: [[pack_u32_slice([63, 32, 1, 0]), pack_f32_slice([0.1]), pack_f32_slice([0.0])]],
    # 63*0.1=6.3, 32*0.1=3.2, 1*0.1=0.1, 0*0.1=0.0 (f32 literals)
    expected_output=lambda: [[pack_f32_slice([6.3, 3.2, 0.1, 0.0])]],
    category="nn", ulp=ULP,
    bench=dict(n=1 << 24, block_size=64),
)
