"""`vyre-libs::scan::substring_search`: brute-force substring search (port of
vyre-libs/src/scan/substring/substring.rs).

Workgroup [64,1,1], one invocation per start offset ``i``: when ``needle_len <= buf_len(haystack)``
and ``i <= buf_len(haystack) - needle_len`` (two comparisons, so ``i + needle_len`` never wraps),
``matches[i] = AND over k < needle_len of (haystack[i+k] == needle[k])`` (1 or 0); offsets past
the last possible start keep their zero. An empty needle matches at every offset. Each u32 element
holds one byte, compared as a whole word. A buffer declared with length 0 is sized by the bound
data; ``matches`` has ``max(haystack_len, 1)`` words of which ``haystack_len`` are returned.

vyre also keeps a deprecated ``vyre-libs::matching::substring_search`` id for the same program;
it is not registered (not one of vyre's 200 own op ids), but ``substring_search_with_op_id``
builds it.

Example::

    >>> p = substring_search("haystack", "needle", "matches", 8, 3)
    >>> [(b.name, b.count) for b in p.buffers], p.buffers[2].output_byte_range
    ([('haystack', 8), ('needle', 3), ('matches', 8)], (0, 32))
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..hash.wrap import check_count
from ..registry import register_op
from ..wire import pack_u32_slice

OP_ID = "vyre-libs::scan::substring_search"
LEGACY_MATCHING_SUBSTRING_OP_ID = "vyre-libs::matching::substring_search"
ULP = None  # u32 results: exact
U32 = DataType.U32


def substring_search_with_op_id(op_id: str, haystack: str, needle: str, matches: str, haystack_len: int,
                                needle_len: int) -> Program:
    """The substring program under the Region id `op_id` (vyre's compatibility builder)."""
    check_count(op_id, "haystack_len", haystack_len)
    check_count(op_id, "needle_len", needle_len)
    i = Expr.var("i")
    # ok latches to 0 on the first mismatching byte; Select keeps it in u32 arithmetic.
    same = Expr.select(Expr.eq(Expr.load(haystack, Expr.add(i, Expr.var("k"))), Expr.load(needle, Expr.var("k"))),
                       Expr.u32(1), Expr.u32(0))
    check = [Node.let_bind("ok", Expr.u32(1)),
             Node.loop_for("k", Expr.u32(0), Expr.u32(needle_len),
                           [Node.assign("ok", Expr.bitand(Expr.var("ok"), same))]),
             Node.store(matches, i, Expr.var("ok"))]
    # The subtraction wraps when the needle is longer than the haystack, but then the first
    # conjunct is false (And evaluates both sides; the result is still right).
    fits = Expr.and_(Expr.le(Expr.u32(needle_len), Expr.var("haystack_len")),
                     Expr.le(i, Expr.sub(Expr.var("haystack_len"), Expr.u32(needle_len))))
    body = [Node.let_bind("i", Expr.gid_x()),
            Node.let_bind("haystack_len", Expr.buf_len(haystack)),
            Node.if_then(fits, check)]
    return Program.wrapped(
        [BufferDecl.read(haystack, 0, U32).with_count(haystack_len),
         BufferDecl.read(needle, 1, U32).with_count(needle_len),
         BufferDecl.output(matches, 2, U32).with_count(max(haystack_len, 1))
         .with_output_byte_range(0, haystack_len * 4)],
        (64, 1, 1), [wrap_anonymous(op_id, body)])


def substring_search(haystack: str, needle: str, matches: str, haystack_len: int, needle_len: int) -> Program:
    """``matches[i] = 1`` where ``haystack[i:]`` starts with ``needle``, else 0."""
    return substring_search_with_op_id(OP_ID, haystack, needle, matches, haystack_len, needle_len)


def _build(haystack_len: int = 8, needle_len: int = 3) -> Program:
    return substring_search("haystack", "needle", "matches", haystack_len, needle_len)


def _case(haystack: bytes, needle: bytes) -> list[bytes]:
    return [pack_u32_slice(haystack), pack_u32_slice(needle)]


ENTRY = register_op(
    OP_ID, _build, category="scan", ulp=ULP,
    test_inputs=lambda: [_case(b"abcabc++", b"abc"), _case(b"xyzxyzxy", b"xyz")],
    expected_output=lambda: [[pack_u32_slice([1, 0, 0, 1, 0, 0, 0, 0])]] * 2,
    bench=dict(haystack_len=1 << 16, needle_len=8))

__all__ = ["LEGACY_MATCHING_SUBSTRING_OP_ID", "OP_ID", "substring_search", "substring_search_with_op_id"]
