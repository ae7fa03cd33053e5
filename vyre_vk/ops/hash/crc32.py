"""`vyre-libs::hash::crc32`: CRC-32 (ISO 3309 / ITU-T V.42, zlib's) of ``n`` bytes into
``out[0]`` (port of vyre-libs/src/hash/crc32.rs over vyre-primitives/src/hash/crc32.rs).

One invocation (workgroup [1,1,1], ``gid.x == 0``) walks the input: ``crc = 0xFFFFFFFF``; per
element ``crc ^= input[i] & 0xFF``, then eight times ``crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320 :
crc >> 1`` (the reflected polynomial, bit by bit: no table); ``out[0] = crc ^ 0xFFFFFFFF``.
Each u32 element carries one byte in its low 8 bits; higher bits are ignored.

Example::

    >>> p = crc32("input", "out", 3)
    >>> [(b.name, b.count) for b in p.buffers]
    [('__vyre_hash_crc32_input', 3), ('__vyre_hash_crc32_out', 1)]
"""
from __future__ import annotations

from ...ir import Expr, Node, Program
from ..wire import pack_u32_slice
from .wrap import HashWrapperSpec

OP_ID = "vyre-libs::hash::crc32"
SPEC = HashWrapperSpec(OP_ID, "vyre-primitives::hash::crc32", "hash_crc32", 1)
CRC32_INIT = 0xFFFFFFFF
CRC32_POLY = 0xEDB88320
ULP = None  # u32 result: exact


def crc32_update_byte_nodes(crc_var: str, bit_var: str, byte: Expr) -> list[Node]:
    """Fold the low byte of `byte` into the running state `crc_var` (loop variable `bit_var`)."""
    crc = Expr.var(crc_var)
    return [
        Node.assign(crc_var, Expr.bitxor(crc, Expr.bitand(byte, Expr.u32(0xFF)))),
        Node.loop_for(bit_var, Expr.u32(0), Expr.u32(8), [Node.assign(crc_var, Expr.select(
            Expr.ne(Expr.bitand(crc, Expr.u32(1)), Expr.u32(0)),
            Expr.bitxor(Expr.shr(crc, Expr.u32(1)), Expr.u32(CRC32_POLY)),
            Expr.shr(crc, Expr.u32(1))))]),
    ]


def crc32_finalize_expr(crc: Expr) -> Expr:
    return Expr.bitxor(crc, Expr.u32(CRC32_INIT))


def crc32_body(input: str, out: str, bound: Expr) -> list[Node]:
    return [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.let_bind("crc", Expr.u32(CRC32_INIT)),
        Node.loop_for("i", Expr.u32(0), bound,
                      crc32_update_byte_nodes("crc", "bit", Expr.load(input, Expr.var("i")))),
        Node.store(out, Expr.u32(0), crc32_finalize_expr(Expr.var("crc"))),
    ])]


def crc32(input: str, out: str, n: int) -> Program:
    """CRC-32 of ``input[0..n]`` (low byte of each element) into ``out[0]``."""
    return SPEC.build(input, out, n, crc32_body)


def _build(n: int = 3) -> Program:
    return crc32("input", "out", n)


ENTRY = SPEC.register(_build, pack_u32_slice([0x352441C2]), ULP)  # CRC-32("abc")
