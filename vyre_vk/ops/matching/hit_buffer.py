"""`vyre-libs::matching::emit_hit` and `vyre-libs::matching::compact_hits`: the hit-buffer append
and clamp steps of vyre's matching pipeline (port of vyre-libs/src/scan/hit_buffer.rs).

A hit is the u32 tuple ``(rule_id, file_id, span_start, span_len)``; ``out_hits`` stores four
words per hit.

``emit_hit`` (workgroup [64,1,1], one lane per hit): lane ``l < buf_len(rule_id)`` with
``l < capacity = buf_len(out_hits) / 4`` writes its tuple to ``out_hits[4l .. 4l+3]``; lane 0 sets
``out_cursor[0] = min(lanes, capacity)`` and, only when lanes > capacity, writes the dropped
count ``lanes - capacity`` to ``hit_buffer_overflow_count[0]`` (otherwise that buffer keeps its
input contents). Every lane's slot is its own, so there is no race and no atomic.

``compact_hits`` (workgroup [1,1,1]): lane 0 writes ``hit_buffer_live_length[0] =
min(out_cursor[0], max_capacity, buf_len(out_hits) / 4)``.

Example::

    >>> p = emit_hit("rule_id", "file_id", "span_start", "span_len", "out_hits", "out_cursor")
    >>> [b.name for b in p.buffers][4:], p.workgroup_size
    (['out_hits', 'out_cursor', 'hit_buffer_overflow_count'], (64, 1, 1))
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..hash.wrap import check_count
from ..registry import register_case
from ..wire import pack_u32_slice

EMIT_HIT_OP_ID = "vyre-libs::matching::emit_hit"
COMPACT_HITS_OP_ID = "vyre-libs::matching::compact_hits"
#: Observable output buffer carrying the number of dropped hits.
HIT_BUFFER_OVERFLOW_COUNT = "hit_buffer_overflow_count"
#: Observable output buffer carrying the compacted live-hit length.
HIT_BUFFER_LIVE_LENGTH = "hit_buffer_live_length"
DEFAULT_LANES = 4
DEFAULT_MAX_HITS = 4
HIT_WORDS = 4
ULP = None  # u32 results: exact
U32 = DataType.U32
U32_MAX = 0xFFFFFFFF


def emit_hit_with_layout(rule_id: str, file_id: str, span_start: str, span_len: str, out_hits: str,
                         out_cursor: str, lane_count: int, max_hits: int) -> Program:
    """Append one hit per lane (`lane_count` lanes) into room for `max_hits` hits."""
    check_count(EMIT_HIT_OP_ID, "lane_count", lane_count)
    check_count(EMIT_HIT_OP_ID, "max_hits", max_hits)
    lane = Expr.var("lane")
    base = Expr.mul(lane, Expr.u32(HIT_WORDS))
    capacity = Expr.div(Expr.buf_len(out_hits), Expr.u32(HIT_WORDS))
    lanes = Expr.buf_len(rule_id)
    fields = (rule_id, file_id, span_start, span_len)
    body = [
        Node.let_bind("lane", Expr.gid_x()),
        Node.if_then(Expr.lt(lane, lanes), [Node.if_then(Expr.lt(lane, capacity), [
            Node.store(out_hits, base if k == 0 else Expr.add(base, Expr.u32(k)), Expr.load(name, lane))
            for k, name in enumerate(fields)])]),
        Node.if_then(Expr.eq(lane, Expr.u32(0)), [
            Node.store(out_cursor, Expr.u32(0), Expr.min(lanes, capacity)),
            Node.if_then(Expr.lt(capacity, lanes),
                         [Node.store(HIT_BUFFER_OVERFLOW_COUNT, Expr.u32(0), Expr.sub(lanes, capacity))]),
        ]),
    ]
    return Program.wrapped(
        [*(BufferDecl.read(name, k, U32).with_count(lane_count) for k, name in enumerate(fields)),
         BufferDecl.output(out_hits, 4, U32).with_count(min(max_hits * HIT_WORDS, U32_MAX)),
         BufferDecl.read_write(out_cursor, 5, U32).with_count(1),
         BufferDecl.read_write(HIT_BUFFER_OVERFLOW_COUNT, 6, U32).with_count(1)],
        (64, 1, 1), [wrap_anonymous(EMIT_HIT_OP_ID, body)])


def emit_hit(rule_id: str, file_id: str, span_start: str, span_len: str, out_hits: str, out_cursor: str) -> Program:
    """`emit_hit_with_layout` at vyre's harness shape (4 lanes, 4 hits)."""
    return emit_hit_with_layout(rule_id, file_id, span_start, span_len, out_hits, out_cursor, DEFAULT_LANES,
                                DEFAULT_MAX_HITS)


def compact_hits_with_layout(out_hits: str, out_cursor: str, hit_capacity: int, max_capacity: int) -> Program:
    """``live = min(cursor, max_capacity, buf_len(out_hits) / 4)`` over a buffer of `hit_capacity` hits."""
    check_count(COMPACT_HITS_OP_ID, "hit_capacity", hit_capacity)
    check_count(COMPACT_HITS_OP_ID, "max_capacity", max_capacity)
    body = [
        Node.let_bind("lane", Expr.gid_x()),
        Node.if_then(Expr.eq(Expr.var("lane"), Expr.u32(0)), [
            Node.let_bind("cursor", Expr.load(out_cursor, Expr.u32(0))),
            Node.let_bind("buffer_cap", Expr.div(Expr.buf_len(out_hits), Expr.u32(HIT_WORDS))),
            Node.let_bind("live_len", Expr.min(Expr.var("cursor"),
                                               Expr.min(Expr.u32(max_capacity), Expr.var("buffer_cap")))),
            Node.store(HIT_BUFFER_LIVE_LENGTH, Expr.u32(0), Expr.var("live_len")),
        ]),
    ]
    return Program.wrapped(
        [BufferDecl.read(out_hits, 0, U32).with_count(min(hit_capacity * HIT_WORDS, U32_MAX)),
         BufferDecl.read(out_cursor, 1, U32).with_count(1),
         BufferDecl.output(HIT_BUFFER_LIVE_LENGTH, 2, U32).with_count(1)],
        (1, 1, 1), [wrap_anonymous(COMPACT_HITS_OP_ID, body)])


def compact_hits(out_hits: str, out_cursor: str, max_capacity: int) -> Program:
    return compact_hits_with_layout(out_hits, out_cursor, max_capacity, max_capacity)


def _build_emit(lane_count: int = DEFAULT_LANES, max_hits: int = DEFAULT_MAX_HITS) -> Program:
    return emit_hit_with_layout("rule_id", "file_id", "span_start", "span_len", "out_hits", "out_cursor",
                                lane_count, max_hits)


def _build_compact(max_capacity: int = DEFAULT_MAX_HITS) -> Program:
    return compact_hits("out_hits", "out_cursor", max_capacity)


_HITS = [7, 101, 5, 2, 9, 103, 9, 4, 11, 107, 13, 6, 13, 109, 17, 8]
EMIT_HIT = register_case(
    EMIT_HIT_OP_ID, _build_emit,
    [pack_u32_slice(v) for v in ([7, 9, 11, 13], [101, 103, 107, 109], [5, 9, 13, 17], [2, 4, 6, 8], [0], [0])],
    [pack_u32_slice(_HITS), pack_u32_slice([4]), pack_u32_slice([0])],
    category=None, ulp=ULP, bench=dict(lane_count=1 << 16, max_hits=1 << 16))
COMPACT_HITS = register_case(
    COMPACT_HITS_OP_ID, _build_compact, [pack_u32_slice(_HITS), pack_u32_slice([7])],
    [pack_u32_slice([DEFAULT_MAX_HITS])], category=None, ulp=ULP, bench=dict(max_capacity=1 << 16))

__all__ = ["COMPACT_HITS_OP_ID", "EMIT_HIT_OP_ID", "HIT_BUFFER_LIVE_LENGTH", "HIT_BUFFER_OVERFLOW_COUNT",
           "compact_hits", "compact_hits_with_layout", "emit_hit", "emit_hit_with_layout"]
