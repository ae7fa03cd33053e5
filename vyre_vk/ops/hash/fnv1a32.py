"""`vyre-libs::hash::fnv1a32`: 32-bit FNV-1a of the input bytes into ``out[0]`` (port of
vyre-libs/src/hash/fnv1a32.rs over vyre-primitives/src/hash/fnv1a.rs).

One invocation (workgroup [1,1,1], ``gid.x == 0``): ``h = 0x811C9DC5``; per element
``h = (h ^ (input[i] & 0xFF)) * 0x01000193`` (wrapping); ``out[0] = h``. Each u32 element carries
one byte in its low 8 bits. ``fnv1a32_n`` (registered, vyre's harness builder) hashes ``n``
elements of a sized input; ``fnv1a32`` hashes ``buf_len(input)`` elements of an unsized one.
vyre-primitives' packed-byte variants read a U8 buffer instead, one byte per element (a quarter of
the input bandwidth): ``fnv1a32_program_u8`` (``n`` bytes) and ``fnv1a32_program_dyn_u8`` (all
``buf_len(input)`` bytes), the primitive's own program (buffers as named, Region
``vyre-primitives::hash::fnv1a32``).

Example::

    >>> p = fnv1a32_n("input", "out", 3)
    >>> [(b.name, b.count) for b in p.buffers], fnv1a32("input", "out").buffers[0].count
    ([('__vyre_hash_fnv1a32_input', 3), ('__vyre_hash_fnv1a32_out', 1)], 0)
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program
from ..wire import pack_u32_slice
from .wrap import HashWrapperSpec

OP_ID = "vyre-libs::hash::fnv1a32"
SPEC = HashWrapperSpec(OP_ID, "vyre-primitives::hash::fnv1a32", "hash_fnv1a32", 1)
FNV1A32_OFFSET = 0x811C9DC5
FNV1A32_PRIME = 0x01000193
ULP = None  # u32 result: exact


def fnv1a32_update_byte_node(hash_var: str, byte: Expr) -> Node:
    low = Expr.bitand(Expr.cast(DataType.U32, byte), Expr.u32(0xFF))
    return Node.assign(hash_var, Expr.mul(Expr.bitxor(Expr.var(hash_var), low), Expr.u32(FNV1A32_PRIME)))


def fnv1a32_body(input: str, out: str, bound: Expr) -> list[Node]:
    return [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.let_bind("h", Expr.u32(FNV1A32_OFFSET)),
        Node.loop_for("i", Expr.u32(0), bound, [
            fnv1a32_update_byte_node("h", Expr.cast(DataType.U32, Expr.load(input, Expr.var("i"))))]),
        Node.store(out, Expr.u32(0), Expr.var("h")),
    ])]


def fnv1a32(input: str, out: str) -> Program:
    """FNV-1a32 of every element of an unsized ``input`` (``buf_len``) into ``out[0]``."""
    return SPEC.build(input, out, None, fnv1a32_body)


def fnv1a32_n(input: str, out: str, n: int) -> Program:
    """FNV-1a32 of ``input[0..n]`` into ``out[0]``."""
    return SPEC.build(input, out, n, fnv1a32_body)


def fnv1a32_program_u8(input: str, out: str, n: int) -> Program:
    """FNV-1a32 of the first ``n`` bytes of the U8 buffer ``input`` into ``out[0]``.

    >>> [(b.name, b.element.value, b.count) for b in fnv1a32_program_u8("input", "out", 513).buffers]
    [('input', 'u8', 513), ('out', 'u32', 1)]
    """
    return SPEC.primitive(input, out, n, fnv1a32_body, DataType.U8)


def fnv1a32_program_dyn_u8(input: str, out: str) -> Program:
    """FNV-1a32 of every byte of an unsized U8 buffer ``input`` (``buf_len``: the bytes bound) into ``out[0]``."""
    return SPEC.primitive(input, out, None, fnv1a32_body, DataType.U8)


def _build(n: int = 3) -> Program:
    return fnv1a32_n("input", "out", n)


ENTRY = SPEC.register(_build, pack_u32_slice([0x1A47E90B]), ULP)  # FNV-1a32("abc")
