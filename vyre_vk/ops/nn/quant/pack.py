"""`vyre-libs::quant::int6_pack` (``input[i] & 0x3F``, an indexed map) and
`vyre-libs::quant::int8_pack` (``input[i] & 0xFF``, guard ``i < n``): u32 -> u32, workgroup [64,1,1]
(ports of the pack halves of vyre-libs/src/nn/quant/int6.rs and int8.rs); and the registration of
`vyre-libs::quant::int4_dot_i32` (builder in int4.py). Here in one module because all are
integer-exact (module ``ULP = None``; the f32 ops of those files keep their windows there).

Example::

    >>> [b.name for b in int8_pack("input", "output", 4).buffers]
    ['input', 'output']
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program
from ...builder import build_indexed_map, elementwise_program, out_decl, ro_decl
from ...registry import register_case
from ...wire import pack_i32_slice, pack_u32_slice
from .int4 import DOT_OP_ID as INT4_DOT_OP_ID, LHS_WORD, RHS_WORD, int4_dot_i32

INT6_PACK_OP_ID = "vyre-libs::quant::int6_pack"
INT8_PACK_OP_ID = "vyre-libs::quant::int8_pack"
# u32 results: byte-exact (no f32 window).
ULP = None


def _u32_map_buffers(input: str, output: str, n: int) -> list:
    return [ro_decl(input, 0, n, DataType.U32), out_decl(output, 1, n, DataType.U32)]


def int6_pack(input: str, output: str, n: int) -> Program:
    return build_indexed_map(INT6_PACK_OP_ID, _u32_map_buffers(input, output, n), output, n, (64, 1, 1),
                             lambda i: (i, Expr.bitand(Expr.load(input, i), Expr.u32(0x3F))))


def int8_pack(input: str, output: str, n: int) -> Program:
    i = Expr.var("i")
    return elementwise_program(INT8_PACK_OP_ID, _u32_map_buffers(input, output, n), n,
                               [Node.store(output, i, Expr.bitand(Expr.load(input, i), Expr.u32(0xFF)))])


def _build_int6(n: int = 4) -> Program:
    return int6_pack("input", "output", n)


def _build_int8(n: int = 4) -> Program:
    return int8_pack("input", "output", n)


ENTRY_INT6 = register_case(INT6_PACK_OP_ID, _build_int6, [pack_u32_slice([63, 100, 1, 0])],
                           [pack_u32_slice([63, 36, 1, 0])], category="nn", ulp=ULP, bench=dict(n=1 << 24))

ENTRY_INT8 = register_case(INT8_PACK_OP_ID, _build_int8, [pack_u32_slice([255, 256, 1, 0])],
                           [pack_u32_slice([255, 0, 1, 0])], category="nn", ulp=ULP, bench=dict(n=1 << 24))


def _build_int4_dot(lane_count: int = 8) -> Program:
    return int4_dot_i32("lhs", "rhs", "out", lane_count)


# lanes [1,2,3,4,-1,-2,-3,-4] . [4,3,2,1,-4,-3,-2,-1] = 40
ENTRY_INT4_DOT = register_case(INT4_DOT_OP_ID, _build_int4_dot,
                               [pack_u32_slice([LHS_WORD]), pack_u32_slice([RHS_WORD])], [pack_i32_slice([40])],
                               category="nn", ulp=ULP, bench=dict(lane_count=4096))
