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
from ..registry import register_op
from ..wire import pack_bytes_as_u32_slice, pack_u32_slice
from .wrap import HashWrapperSpec, check_count

OP_ID = "vyre-libs::hash::adler32"
PRIMITIVE_OP_ID = "vyre-primitives::hash::adler32"
FAMILY_PREFIX = "hash_adler32"
SPEC = HashWrapperSpec(OP_ID, PRIMITIVE_OP_ID, FAMILY_PREFIX, 1)
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


def adler32_body(input: str, out: str, n: int) -> list[Node]:
    return [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.let_bind("a", Expr.u32(1)),
        Node.let_bind("b", Expr.u32(0)),
        Node.loop_for("i", Expr.u32(0), Expr.u32(n),
                      adler32_update_byte_nodes("a", "b", Expr.load(input, Expr.var("i")))),
        Node.store(out, Expr.u32(0), adler32_finalize_expr(Expr.var("a"), Expr.var("b"))),
    ])]


def adler32(input: str, out: str, n: int) -> Program:
    """Adler-32 of ``input[0..n]`` (low byte of each element) into ``out[0]``."""
    check_count(OP_ID, "n", n)
    input, out = SPEC.scoped_standard_buffers(input, out)
    return SPEC.wrap(input, out, n, adler32_body(input, out, n))


def _build(n: int = 3) -> Program:
    return adler32("input", "out", n)


ENTRY = register_op(
    OP_ID, _build, category=None, ulp=ULP,
    test_inputs=lambda: [[pack_bytes_as_u32_slice(b"abc")]],
    expected_output=lambda: [[pack_u32_slice([0x024D0127])]],  # Adler-32("abc"): a = 295, b = 589
    bench=dict(n=1 << 16),
)
