"""`vyre-libs::hash::fnv1a64`: 64-bit FNV-1a of the input bytes into ``out[0..2]`` as (low word,
high word) (port of vyre-libs/src/hash/fnv1a64.rs over vyre-primitives/src/hash/fnv1a.rs).

One invocation (workgroup [1,1,1], ``gid.x == 0``) keeps the state in two u32 words, offset basis
0xCBF29CE484222325, and per element XORs the low byte into the low word and multiplies by the
prime 0x100000001B3 modulo 2^64 in 32-bit pieces: ``new_lo = lo16 * 0x1B3 + (hi16 * 0x1B3 << 16)``
with its carry ``(hi16 * 0x1B3 >> 16) + overflow``, ``new_hi = h_hi * 0x1B3 + h_lo * 0x100 + carry``
(vyre's decomposition, kept as written). ``fnv1a64_n`` (registered) hashes ``n`` elements of a
sized input, ``fnv1a64`` ``buf_len(input)`` elements of an unsized one. vyre-primitives'
packed-byte variants read a U8 buffer, one byte per element: ``fnv1a64_program_u8`` (all
``buf_len(input)`` bytes) and ``fnv1a64_program_n_u8`` (``n`` bytes), the primitive's own program.

Example::

    >>> [(b.name, b.count) for b in fnv1a64_n("input", "out", 3).buffers]
    [('__vyre_hash_fnv1a64_input', 3), ('__vyre_hash_fnv1a64_out', 2)]
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program
from .wrap import HashWrapperSpec

OP_ID = "vyre-libs::hash::fnv1a64"
SPEC = HashWrapperSpec(OP_ID, "vyre-primitives::hash::fnv1a64", "hash_fnv1a64", 2)
PRIME_LO, PRIME_HI = 0x000001B3, 0x00000100
OFFSET_LO, OFFSET_HI = 0x84222325, 0xCBF29CE4
ULP = None  # u32 results: exact


def fnv1a64_body(input: str, out: str, bound: Expr) -> list[Node]:
    v, u = Expr.var, Expr.u32
    byte = Expr.bitand(Expr.cast(DataType.U32, Expr.load(input, v("i"))), u(0xFF))
    step = [
        Node.assign("h_lo", Expr.bitxor(v("h_lo"), byte)),
        Node.let_bind("lo_lo16", Expr.bitand(v("h_lo"), u(0xFFFF))),
        Node.let_bind("lo_hi16", Expr.shr(v("h_lo"), u(16))),
        Node.let_bind("part_a", Expr.mul(v("lo_lo16"), u(PRIME_LO))),
        Node.let_bind("part_b", Expr.mul(v("lo_hi16"), u(PRIME_LO))),
        Node.let_bind("shifted_b", Expr.shl(v("part_b"), u(16))),
        Node.let_bind("new_lo", Expr.add(v("part_a"), v("shifted_b"))),
        Node.let_bind("overflow_bit", Expr.select(Expr.gt(v("part_a"), Expr.sub(u(0xFFFFFFFF), v("shifted_b"))),
                                                  u(1), u(0))),
        Node.let_bind("carry", Expr.add(Expr.shr(v("part_b"), u(16)), v("overflow_bit"))),
        Node.let_bind("hi_times_p_lo", Expr.mul(v("h_hi"), u(PRIME_LO))),
        Node.let_bind("lo_times_p_hi", Expr.mul(v("h_lo"), u(PRIME_HI))),
        Node.let_bind("new_hi", Expr.add(Expr.add(v("hi_times_p_lo"), v("lo_times_p_hi")), v("carry"))),
        Node.assign("h_lo", v("new_lo")),
        Node.assign("h_hi", v("new_hi")),
    ]
    return [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
        Node.let_bind("h_lo", u(OFFSET_LO)),
        Node.let_bind("h_hi", u(OFFSET_HI)),
        Node.loop_for("i", u(0), bound, step),
        Node.store(out, u(0), v("h_lo")),
        Node.store(out, u(1), v("h_hi")),
    ])]


def fnv1a64(input: str, out: str) -> Program:
    """FNV-1a64 of every element of an unsized ``input`` (``buf_len``) into ``out[0..2]``."""
    return SPEC.build(input, out, None, fnv1a64_body)


def fnv1a64_n(input: str, out: str, n: int) -> Program:
    """FNV-1a64 of ``input[0..n]`` into ``out[0..2]`` (low word first)."""
    return SPEC.build(input, out, n, fnv1a64_body)


def fnv1a64_program_u8(input: str, out: str) -> Program:
    """FNV-1a64 of every byte of an unsized U8 buffer ``input`` into ``out[0..2]`` (low word first).

    >>> [(b.name, b.element.value, b.count) for b in fnv1a64_program_u8("input", "out").buffers]
    [('input', 'u8', 0), ('out', 'u32', 2)]
    """
    return SPEC.primitive(input, out, None, fnv1a64_body, DataType.U8)


def fnv1a64_program_n_u8(input: str, out: str, n: int) -> Program:
    """FNV-1a64 of the first ``n`` bytes of the U8 buffer ``input`` into ``out[0..2]``."""
    return SPEC.primitive(input, out, n, fnv1a64_body, DataType.U8)


def _build(n: int = 3) -> Program:
    return fnv1a64_n("input", "out", n)


ENTRY = SPEC.register(_build, (0xE71FA2190541574B).to_bytes(8, "little"), ULP)  # FNV-1a64("abc")
