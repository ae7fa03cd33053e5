"""`vyre-libs::parsing::c11_compute_alignments`: size and alignment of scalar C ABI type kinds
(port of vyre-libs/src/compiler/types_layout.rs).

Invocation ``t < num_types`` (workgroup [256,1,1]) maps ``type_definitions[t]`` to
``out_sizes[t]`` / ``out_alignments[t]``: C_ABI_CHAR (1) -> 1/1, C_ABI_POINTER (2) -> pointer
size, C_ABI_LONG (3) -> long size, C_ABI_DOUBLE (4) -> 8 / the double alignment, any other kind
-> 4/4 (vyre's int-sized default). ``c11_compute_alignments`` is LP64 (8, 8, 8);
``c11_compute_alignments_for_abi`` takes the data model (each of pointer size, long size and
double alignment 4 or 8: -m32 is 4, 4, 4).

Example::

    >>> abi_layout(C_ABI_DOUBLE, 4, 4, 4), abi_layout(7)
    ((8, 4), (4, 4))
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import OpParamError, register_case
from ...wire import pack_u32_slice
from ..common import check_len, u, v

OP_ID = "vyre-libs::parsing::c11_compute_alignments"
ULP = None  # u32 results: exact
U32 = DataType.U32
C_ABI_CHAR, C_ABI_POINTER, C_ABI_LONG, C_ABI_DOUBLE = 1, 2, 3, 4


def abi_layout(kind: int, pointer: int = 8, long: int = 8, double_align: int = 8) -> tuple[int, int]:
    """(size, alignment) of one type kind, on the host (the rule the program encodes)."""
    size = {C_ABI_CHAR: 1, C_ABI_POINTER: pointer, C_ABI_LONG: long, C_ABI_DOUBLE: 8}.get(kind, 4)
    return size, double_align if kind == C_ABI_DOUBLE else size


def c11_compute_alignments_for_abi(type_definitions: str, out_sizes: str, out_alignments: str, num_types: int,
                                   pointer_size_bytes: int, long_size_bytes: int,
                                   double_alignment_bytes: int) -> Program:
    """Sizes and alignments of ``type_definitions[0..num_types]`` under the given data model."""
    check_len(OP_ID, "num_types", num_types)
    for name, value in (("pointer_size_bytes", pointer_size_bytes), ("long_size_bytes", long_size_bytes),
                        ("double_alignment_bytes", double_alignment_bytes)):
        if value not in (4, 8):
            raise OpParamError(f"{OP_ID}: `{name}` = {value!r} is not 4 or 8 bytes. "
                               f"Fix: pass 8 for LP64 (-m64) or 4 for ILP32 (-m32).")
    t, kind = Expr.gid_x(), v("type_kind")

    def is_(k: int) -> Expr:
        return Expr.eq(kind, u(k))
    body = [
        Node.let_bind("type_kind", Expr.load(type_definitions, t)),
        Node.let_bind("size_bytes", Expr.select(is_(C_ABI_CHAR), u(1), Expr.select(
            Expr.or_(is_(C_ABI_POINTER), is_(C_ABI_LONG)),
            Expr.select(is_(C_ABI_POINTER), u(pointer_size_bytes), u(long_size_bytes)),
            Expr.select(is_(C_ABI_DOUBLE), u(8), u(4))))),
        Node.let_bind("align_bytes", Expr.select(is_(C_ABI_DOUBLE), u(double_alignment_bytes), v("size_bytes"))),
        Node.store(out_sizes, t, v("size_bytes")),
        Node.store(out_alignments, t, v("align_bytes")),
    ]
    n = max(num_types, 1)
    # vyre builds this one without an entry op id or the non-composable flag
    return Program.wrapped(
        [BufferDecl.storage(type_definitions, 0, BufferAccess.ReadOnly, U32).with_count(n),
         BufferDecl.storage(out_sizes, 1, BufferAccess.ReadWrite, U32).with_count(n),
         BufferDecl.storage(out_alignments, 2, BufferAccess.ReadWrite, U32).with_count(n)],
        (256, 1, 1), [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(t, u(num_types)), body)])])


def c11_compute_alignments(type_definitions: str, out_sizes: str, out_alignments: str, num_types: int) -> Program:
    """LP64: pointer 8, long 8, double aligned to 8."""
    return c11_compute_alignments_for_abi(type_definitions, out_sizes, out_alignments, num_types, 8, 8, 8)


def _build(num_types: int = 5) -> Program:
    return c11_compute_alignments("types", "sizes", "aligns", num_types)


# vyre's vector: char, pointer, long, double, 0 -> sizes and alignments 1, 8, 8, 8, 4.
ENTRY = register_case(
    OP_ID, _build, [pack_u32_slice([C_ABI_CHAR, C_ABI_POINTER, C_ABI_LONG, C_ABI_DOUBLE, 0]), bytes(20), bytes(20)],
    [pack_u32_slice([1, 8, 8, 8, 4]), pack_u32_slice([1, 8, 8, 8, 4])],
    category="compiler", ulp=ULP, bench=dict(num_types=1 << 20))
