"""`vyre-libs::logical::{and, or, xor, nand, nor}`: bitwise ops over u32 words
(port of vyre-libs/src/logical/mod.rs).

- ``and`` / ``or`` / ``xor``: vyre-primitives' ``bitset::{and, or, xor}`` word programs wrapped as
  child Regions (workgroup [256,1,1]; see wrap.py);
- ``nand`` = ``~(a & b)``, ``nor`` = ``~(a | b)``: the u32 binary elementwise skeleton
  (workgroup [64,1,1]).

Buffers of all five: ``a``, ``b`` ro u32 (bindings 0, 1), ``out`` output u32 (2), count ``size``.
vyre's vectors pass a zero-filled slot for ``out`` (the legacy form: one input per buffer).

Example::

    >>> [(b.name, b.binding, b.count) for b in nand("a", "b", "out", 4).buffers]
    [('a', 0, 4), ('b', 1, 4), ('out', 2, 4)]
    >>> and_("a", "b", "out", 4).workgroup_size
    (256, 1, 1)
"""
from __future__ import annotations

from ...ir import Expr, Program
from ..registry import register_op
from ..wire import pack_u32_slice
from .wrap import build_logical_binary, wrap_bitset_binary

AND_OP_ID = "vyre-libs::logical::and"
OR_OP_ID = "vyre-libs::logical::or"
XOR_OP_ID = "vyre-libs::logical::xor"
NAND_OP_ID = "vyre-libs::logical::nand"
NOR_OP_ID = "vyre-libs::logical::nor"
BITSET_AND_OP_ID = "vyre-primitives::bitset::and"
BITSET_OR_OP_ID = "vyre-primitives::bitset::or"
BITSET_XOR_OP_ID = "vyre-primitives::bitset::xor"
# u32 results: byte-exact (no f32 window).
ULP = None


def and_(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = a[i] & b[i]`` (vyre's ``logical::and``; ``and`` is a Python keyword)."""
    return wrap_bitset_binary(AND_OP_ID, BITSET_AND_OP_ID, a, b, out, size, Expr.bitand)


def or_(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = a[i] | b[i]``."""
    return wrap_bitset_binary(OR_OP_ID, BITSET_OR_OP_ID, a, b, out, size, Expr.bitor)


def xor(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = a[i] ^ b[i]``."""
    return wrap_bitset_binary(XOR_OP_ID, BITSET_XOR_OP_ID, a, b, out, size, Expr.bitxor)


def nand(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = ~(a[i] & b[i])``."""
    return build_logical_binary(NAND_OP_ID, a, b, out, size, lambda x, y: Expr.bitnot(Expr.bitand(x, y)))


def nor(a: str, b: str, out: str, size: int) -> Program:
    """``out[i] = ~(a[i] | b[i])``."""
    return build_logical_binary(NOR_OP_ID, a, b, out, size, lambda x, y: Expr.bitnot(Expr.bitor(x, y)))


def _build_and(size: int = 4) -> Program:
    return and_("a", "b", "out", size)


def _build_or(size: int = 4) -> Program:
    return or_("a", "b", "out", size)


def _build_xor(size: int = 4) -> Program:
    return xor("a", "b", "out", size)


def _build_nand(size: int = 4) -> Program:
    return nand("a", "b", "out", size)


def _build_nor(size: int = 4) -> Program:
    return nor("a", "b", "out", size)


_A = [0xFF00FF00, 0x00FF00FF, 0xFFFFFFFF, 0x00000000]
_B = [0xF0F0F0F0, 0x0F0F0F0F, 0xFFFFFFFF, 0x00000000]


def _vectors():
    return [[pack_u32_slice(_A), pack_u32_slice(_B), bytes(16)]]


def _register(op_id: str, builder, expected: list[int]):
    return register_op(op_id, builder, test_inputs=_vectors,
                       expected_output=lambda: [[pack_u32_slice(expected)]],
                       category=None, ulp=ULP, bench=dict(size=1 << 24))


AND_ENTRY = _register(AND_OP_ID, _build_and, [0xF000F000, 0x000F000F, 0xFFFFFFFF, 0x00000000])
NAND_ENTRY = _register(NAND_OP_ID, _build_nand, [0x0FFF0FFF, 0xFFF0FFF0, 0x00000000, 0xFFFFFFFF])
NOR_ENTRY = _register(NOR_OP_ID, _build_nor, [0x000F000F, 0xF000F000, 0x00000000, 0xFFFFFFFF])
OR_ENTRY = _register(OR_OP_ID, _build_or, [0xFFF0FFF0, 0x0FFF0FFF, 0xFFFFFFFF, 0x00000000])
XOR_ENTRY = _register(XOR_OP_ID, _build_xor, [0x0FF00FF0, 0x0FF00FF0, 0x00000000, 0x00000000])
