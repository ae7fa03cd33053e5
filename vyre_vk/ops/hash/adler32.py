"""`vyre-libs::hash::adler32`: Adler-32 (RFC 1950) of ``n`` bytes into ``out[0]`` (port of
vyre-libs/src/hash/adler32.rs over vyre-primitives/src/hash/adler32.rs).

One invocation (workgroup [1,1,1], ``gid.x == 0``): ``a = 1, b = 0``; per element
``a = (a + (input[i] & 0xFF)) % 65521; b = (b + a) % 65521``; ``out[0] = (b << 16) | a``.
Each u32 element carries one byte in its low 8 bits; higher bits are ignored.

Example::

    >>> p = adler32("input", "out", 3)
    >>> p.entry[0].body[0].generator, p.workgroup_size
    ('vyre-primitives::hash::adler32', (1, 1, 1))
"""
from __future__ import annotations

from ...ir import Expr, Node, Program
from ..wire import pack_u32_slice
from .wrap import HashWrapperSpec

OP_ID = "vyre-libs::hash::adler32"
SPEC = HashWrapperSpec(OP_ID, "vyre-primitives::hash::adler32", "hash_adler32", 1)
ADLER32_MOD = 65521
ULP = None  # u32 result: exact


def adler32_update_byte_nodes(a_var: str, b_var: str, byte: Expr) -> list[Node]:
    byte = Expr.bitand(byte, Expr.u32(0xFF))
    return [
        Node.assign(a_var, Expr.rem(Expr.add(Expr.var(a_var), byte), Expr.u32(ADLER32_MOD))),
        Node.assign(b_var, Expr.rem(Expr.add(Expr.var(b_var), Expr.var(a_var)), Expr.u32(ADLER32_MOD))),
    ]


def adler32_finalize_expr(a: Expr, b: Expr) -> Expr:
    return Expr.bitor(Expr.shl(b, Expr.u32(16)), a)


def adler32_body(input: str, out: str, bound: Expr) -> list[Node]:
    return [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.let_bind("a", Expr.u32(1)),
        Node.let_bind("b", Expr.u32(0)),
        Node.loop_for("i", Expr.u32(0), bound,
                      adler32_update_byte_nodes("a", "b", Expr.load(input, Expr.var("i")))),
        Node.store(out, Expr.u32(0), adler32_finalize_expr(Expr.var("a"), Expr.var("b"))),
    ])]


def adler32(input: str, out: str, n: int) -> Program:
    """Adler-32 of ``input[0..n]`` (low byte of each element) into ``out[0]``."""
    return SPEC.build(input, out, n, adler32_body)


def _build(n: int = 3) -> Program:
    return adler32("input", "out", n)


ENTRY = SPEC.register(_build, pack_u32_slice([0x024D0127]), ULP)  # Adler-32("abc"): a = 295, b = 589
