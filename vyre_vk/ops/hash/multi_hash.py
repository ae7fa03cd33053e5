"""`vyre-libs::hash::multi_hash`: CRC-32, FNV-1a32 and Adler-32 of ``n`` bytes in one pass, into
``out[0..3]`` (port of vyre-libs/src/hash/multi_hash.rs over vyre-primitives/src/hash/multi_hash.rs).

One invocation (workgroup [1,1,1], ``gid.x == 0``) walks the input once, ``byte = input[i] & 0xFF``
feeding the three state machines of crc32.py, fnv1a32.py and adler32.py; ``out = [crc32, fnv1a32,
adler32]``. The builder keeps vyre's signature: the three outputs live in one buffer named after
``out_crc32`` (``out_fnv1a32`` and ``out_adler32`` are accepted and unused, as in vyre).

Example::

    >>> [(b.name, b.count) for b in multi_hash("input", "out_crc32", "out_fnv1a32", "out_adler32", 3).buffers]
    [('__vyre_hash_multi_input', 3), ('__vyre_hash_multi_out', 3)]
"""
from __future__ import annotations

from ...ir import Expr, Node, Program
from ..wire import pack_u32_slice
from .adler32 import adler32_finalize_expr, adler32_update_byte_nodes
from .crc32 import CRC32_INIT, crc32_finalize_expr, crc32_update_byte_nodes
from .fnv1a32 import FNV1A32_OFFSET, fnv1a32_update_byte_node
from .wrap import HashWrapperSpec, check_count

OP_ID = "vyre-libs::hash::multi_hash"
PRIMITIVE_OP_ID = "vyre-primitives::hash::multi_hash"
FAMILY_PREFIX = "hash_multi"
SPEC = HashWrapperSpec(OP_ID, PRIMITIVE_OP_ID, FAMILY_PREFIX, 3)
OUTPUT_ALIASES = ("out", "output", "crc32", "out_crc32", "multi_hash", "out_multi_hash")
ULP = None  # u32 results: exact


def multi_hash_body(input: str, out: str, n: int) -> list[Node]:
    byte = Expr.var("byte")
    step = [Node.let_bind("byte", Expr.bitand(Expr.load(input, Expr.var("i")), Expr.u32(0xFF))),
            *crc32_update_byte_nodes("crc", "crc_bit", byte),
            fnv1a32_update_byte_node("fnv", byte),
            *adler32_update_byte_nodes("a", "b", byte)]
    return [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.let_bind("crc", Expr.u32(CRC32_INIT)),
        Node.let_bind("fnv", Expr.u32(FNV1A32_OFFSET)),
        Node.let_bind("a", Expr.u32(1)),
        Node.let_bind("b", Expr.u32(0)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(n), step),
        Node.store(out, Expr.u32(0), crc32_finalize_expr(Expr.var("crc"))),
        Node.store(out, Expr.u32(1), Expr.var("fnv")),
        Node.store(out, Expr.u32(2), adler32_finalize_expr(Expr.var("a"), Expr.var("b"))),
    ])]


def multi_hash(input: str, out_crc32: str, out_fnv1a32: str, out_adler32: str, n: int) -> Program:
    """[CRC-32, FNV-1a32, Adler-32] of ``input[0..n]`` into the buffer named after `out_crc32`."""
    check_count(OP_ID, "n", n)
    input = SPEC.scoped_input_buffer(input)
    out = SPEC.scoped_output_buffer_with_aliases(out_crc32, OUTPUT_ALIASES)
    del out_fnv1a32, out_adler32  # vyre's legacy names: one output buffer holds all three
    return SPEC.wrap(input, out, n, multi_hash_body(input, out, n))


def _build(n: int = 3) -> Program:
    return multi_hash("input", "out_crc32", "out_fnv1a32", "out_adler32", n)


ENTRY = SPEC.register(_build, pack_u32_slice([0x352441C2, 0x1A47E90B, 0x024D0127]), ULP)
