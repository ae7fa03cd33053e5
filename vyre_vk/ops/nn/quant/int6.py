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

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Program
from ...builder import build_indexed_map
from ...registry import OpEntry, register
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
        [BufferDecl.storage(packed, 0, BufferAccess.ReadOnly, DataType.U32).with_count(n),
         BufferDecl.storage(scale, 1, BufferAccess.ReadOnly, DataType.F32).with_count(n_blocks),
         BufferDecl.storage(zero, 2, BufferAccess.ReadOnly, DataType.F32).with_count(n_blocks),
         BufferDecl.output(output, 3, DataType.F32).with_count(n)],
        output, n, (64, 1, 1), f)


def _build_unpack(n: int = 4, block_size: int = 4) -> Program:
    return int6_unpack("packed", "scale", "zero", "output", n, block_size)


ENTRY_UNPACK = register(OpEntry(
    id=UNPACK_OP_ID, build=_build_unpack, builder=_build_unpack, params={"n": 4, "block_size": 4},
    test_inputs=lambda: [[pack_u32_slice([63, 32, 1, 0]), pack_f32_slice([0.1]), pack_f32_slice([0.0])]],
    # 63*0.1=6.3, 32*0.1=3.2, 1*0.1=0.1, 0*0.1=0.0 (f32 literals)
    expected_output=lambda: [[pack_f32_slice([6.3, 3.2, 0.1, 0.0])]],
    category="nn", ulp=ULP,
))
