"""`vyre-libs::security::label_by_family`: the NodeSet of nodes whose tag bitmap intersects a
label-family mask (port of vyre-libs/src/security/label_by_family.rs, a ``tag_program`` over
vyre-primitives/src/label/resolve_family.rs = nodeset_filter.rs ``Intersects(mask)``).

One invocation per node (workgroup [256,1,1]): ``if v < node_count && node_tags[v] & mask != 0 {
atomic_or(nodeset_out[v >> 5], 1 << (v & 31)) }``. Buffers: ``node_tags`` ro u32 (binding 0,
``node_count``), ``nodeset_out`` plain ReadWrite u32 (1, ``ceil(node_count/32)`` words): its initial
contents stay set (the kernel only ORs bits in; vyre's vector passes zero). The OR is atomic, so
lanes of one word can run in any order: the result is exact.

``FAMILY_BITS`` is vyre's canonical allocation of the security families' tag bits
(security/family_mask.rs: bits 0..15 canonical, 24..31 launch families).

Example::

    >>> p = label_by_family("tags", "out", 40, FAMILY_BITS["SANITIZER"])
    >>> [(b.name, b.binding, b.count) for b in p.buffers], p.entry[0].body[0].generator
    ([('tags', 0, 40), ('out', 1, 2)], 'vyre-primitives::label::resolve_family')
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program, wrap_anonymous
from ..builder import ro_decl, rw_decl
from ..registry import OpParamError, register_case
from ..wire import pack_u32_slice
from .region import BITSET_WORKGROUP, U32_MAX, bitset_words, check_buffer_names, check_node_count, tag_program

OP_ID = "vyre-libs::security::label_by_family"
RESOLVE_FAMILY_OP_ID = "vyre-primitives::label::resolve_family"
# u32 NodeSet: byte-exact (no f32 window).
ULP = None

FAMILY_BITS = {
    "ALLOCATOR": 1 << 0, "RECEIVE": 1 << 1, "OVERFLOW_CHECK": 1 << 2, "SANITIZER": 1 << 3,
    "SOURCE_NETWORK": 1 << 4, "SINK_FILESYSTEM": 1 << 5, "SINK_PROCESS": 1 << 6, "COPY_TO_USER": 1 << 7,
    "FREE": 1 << 8, "COMPARISON_OP": 1 << 9, "DECODE": 1 << 10, "INFLATE": 1 << 11,
    "TYPE_CAST_UNCHECKED": 1 << 12, "PRIVILEGE_CHECK": 1 << 13, "PRIVILEGE_USE": 1 << 14,
    "COPY_FROM_USER": 1 << 15, "GETS_LAUNCH": 1 << 24, "PRINTF_LAUNCH": 1 << 25,
    "UNBOUNDED_COPY_LAUNCH": 1 << 26, "UNBOUNDED_SPRINTF_LAUNCH": 1 << 27, "POINTER_USE_LAUNCH": 1 << 28,
    "TYPE_TAG_CHECK_LAUNCH": 1 << 29, "REASSIGN_NULL_AFTER_FREE_LAUNCH": 1 << 30,
    "BOUNDED_COPY_OR_LENGTH_CHECK_LAUNCH": 1 << 31,
}


def resolve_family(node_tags: str, nodeset_out: str, node_count: int, family_mask: int) -> Program:
    """vyre-primitives' ``resolve_family`` program: ``{v : node_tags[v] & family_mask != 0}``."""
    t, u32 = Expr.gid_x(), DataType.U32
    hit = Expr.ne(Expr.bitand(Expr.load(node_tags, t), Expr.u32(family_mask)), Expr.u32(0))
    body = [Node.if_then(hit, [
        Node.let_bind("word_idx", Expr.shr(t, Expr.u32(5))),
        Node.let_bind("bit", Expr.shl(Expr.u32(1), Expr.bitand(t, Expr.u32(31)))),
        Node.let_bind("_", Expr.atomic_or(nodeset_out, Expr.var("word_idx"), Expr.var("bit"))),
    ])]
    buffers = [ro_decl(node_tags, 0, node_count, u32), rw_decl(nodeset_out, 1, bitset_words(node_count), u32)]
    return Program.wrapped(buffers, BITSET_WORKGROUP, [wrap_anonymous(RESOLVE_FAMILY_OP_ID, [
        Node.if_then(Expr.lt(t, Expr.u32(node_count)), body)])])


def label_by_family(node_tags: str, nodeset_out: str, node_count: int, family_mask: int) -> Program:
    """Resolve every node whose tag bitmap intersects `family_mask` into the NodeSet `nodeset_out`."""
    check_node_count(OP_ID, node_count)
    check_buffer_names(OP_ID, node_tags, nodeset_out)
    if not isinstance(family_mask, int) or isinstance(family_mask, bool) or not 0 <= family_mask <= U32_MAX:
        raise OpParamError(f"{OP_ID} family_mask must be a u32 tag-bit mask; got {family_mask!r}. "
                           "Fix: OR the family bits, e.g. FAMILY_BITS['SANITIZER'].")
    return tag_program(OP_ID, resolve_family(node_tags, nodeset_out, node_count, family_mask))


def _build(node_count: int = 4, family_mask: int = 0b0010) -> Program:
    return label_by_family("node_tags", "out", node_count, family_mask)


# Tags 0x01, 0x02, 0x06, 0x04 against RECEIVE (bit 1): nodes 1 and 2.
ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0x01, 0x02, 0x06, 0x04]), pack_u32_slice([0])],
                      [pack_u32_slice([0b0110])], category="security", ulp=ULP,
                      bench=dict(node_count=1 << 24))
