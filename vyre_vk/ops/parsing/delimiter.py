"""`vyre-libs::parsing::bracket_match` and `vyre-libs::parsing::core_delimiter_match` (port of
vyre-libs/src/parsing/core/delimiter.rs: ``tag_program`` over vyre-primitives
matching/bracket_match.rs and parsing/core_delimiter_match.rs).

bracket_match(kinds, stack, match_pairs, n, max_depth): ``kinds[i]`` is OTHER (0), OPEN_BRACE (1)
or CLOSE_BRACE (2); ``match_pairs[i]`` becomes the index of the brace matched with ``i``, or
MATCH_NONE (0xFFFFFFFF). With ``max_depth >= n`` (the cap cannot bind) each of n invocations
(workgroup [256,1,1]) walks forward (an open) or backward (a close) counting depth; ``stack`` is
left untouched. With ``max_depth < n`` one invocation (workgroup [1,1,1]) runs the bounded stack:
an open past the cap is ignored, a close with an empty stack is unmatched.

core_delimiter_match(tok_types, tok_depths, tok_count, open_tok_id, close_tok_id): invocation t
(workgroup [256,1,1]) writes the inclusive prefix depth ``#open - #close`` over ``tok_types[0..=t]``
(wrapping u32, so an excess close reads as 0xFFFFFFFF). vyre marks it non-composable with itself,
so its outer Region's generator carries ``#self-exclusive``.

Example::

    >>> p = bracket_match("kinds", "stack", "match_pairs", 4, 4)
    >>> p.workgroup_size, p.entry[0].body[0].generator
    ((256, 1, 1), 'vyre-primitives::matching::bracket_match')
    >>> core_delimiter_match("t", "d", 8, 12, 13).entry[0].generator
    'vyre-libs::parsing::core_delimiter_match#self-exclusive'
"""
from __future__ import annotations

from ...ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..registry import register_case
from ..wire import pack_u32_slice
from .common import check_len, non_composable, tag_program, u, v, with_entry_op_id

OP_ID = "vyre-libs::parsing::bracket_match"
CORE_DELIMITER_OP_ID = "vyre-libs::parsing::core_delimiter_match"
PRIMITIVE_OP_ID = "vyre-primitives::matching::bracket_match"
CORE_DELIMITER_PRIMITIVE_OP_ID = "vyre-primitives::parsing::core_delimiter_match"
OTHER, OPEN_BRACE, CLOSE_BRACE = 0, 1, 2
MATCH_NONE = 0xFFFFFFFF
PARALLEL_WORKGROUP = (256, 1, 1)
ULP = None  # u32 results: exact
U32 = DataType.U32


def _bracket_buffers(kinds: str, stack: str, match_pairs: str, n: int, max_depth: int) -> list[BufferDecl]:
    return [BufferDecl.storage(kinds, 0, BufferAccess.ReadOnly, U32).with_count(n),
            BufferDecl.read_write(stack, 1, U32).with_count(max_depth),
            BufferDecl.output(match_pairs, 2, U32).with_count(n)]


def _bounded_stack(kinds: str, stack: str, match_pairs: str, n: int, max_depth: int) -> Program:
    depth = v("depth")
    step = [
        Node.let_bind("k", Expr.load(kinds, v("i"))),
        Node.store(match_pairs, v("i"), u(MATCH_NONE)),
        Node.if_then_else(Expr.eq(v("k"), u(OPEN_BRACE)), [
            # an open past the cap is dropped: its close will pair with the open below it
            Node.if_then(Expr.lt(depth, u(max_depth)), [
                Node.store(stack, depth, v("i")), Node.assign("depth", Expr.add(depth, u(1)))]),
        ], [Node.if_then(Expr.eq(v("k"), u(CLOSE_BRACE)), [
            Node.if_then(Expr.lt(u(0), depth), [
                Node.assign("depth", Expr.sub(depth, u(1))),
                Node.let_bind("open_idx", Expr.load(stack, depth)),
                Node.store(match_pairs, v("open_idx"), v("i")),
                Node.store(match_pairs, v("i"), v("open_idx")),
            ])])]),
    ]
    body = [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
        Node.let_bind("depth", u(0)), Node.loop_for("i", u(0), u(n), step)])]
    return Program.wrapped(_bracket_buffers(kinds, stack, match_pairs, n, max_depth), (1, 1, 1),
                           [wrap_anonymous(PRIMITIVE_OP_ID, body)])


def _walk_step(kinds: str, prefix: str, index: Expr, same: int, other: int, out: str, lane: Expr) -> list[Node]:
    """One step of a lane's depth walk: a brace of its own kind deepens, the other kind closes;
    depth 0 is the partner (the walk then stops through its active flag: the IR has no break)."""
    d, active, kind = f"{prefix}_depth", f"{prefix}_active", f"{prefix}_kind"
    return [
        Node.let_bind(kind, Expr.load(kinds, index)),
        Node.if_then(Expr.eq(v(kind), u(same)), [Node.assign(d, Expr.add(v(d), u(1)))]),
        Node.if_then(Expr.eq(v(kind), u(other)), [
            Node.assign(d, Expr.sub(v(d), u(1))),
            Node.if_then(Expr.eq(v(d), u(0)), [Node.store(out, lane, index), Node.assign(active, u(0))]),
        ]),
    ]


def _parallel(kinds: str, stack: str, match_pairs: str, n: int, max_depth: int) -> Program:
    lane = Expr.gid_x()
    lane_body = [
        Node.store(match_pairs, lane, u(MATCH_NONE)),
        Node.let_bind("kind_self", Expr.load(kinds, lane)),
        Node.if_then(Expr.eq(v("kind_self"), u(OPEN_BRACE)), [
            Node.let_bind("forward_depth", u(1)), Node.let_bind("forward_active", u(1)),
            Node.loop_for("j", Expr.add(lane, u(1)), u(n), [Node.if_then(Expr.eq(v("forward_active"), u(1)),
                _walk_step(kinds, "forward", v("j"), OPEN_BRACE, CLOSE_BRACE, match_pairs, lane))]),
        ]),
        Node.if_then(Expr.eq(v("kind_self"), u(CLOSE_BRACE)), [
            Node.let_bind("backward_depth", u(1)), Node.let_bind("backward_active", u(1)),
            Node.loop_for("offset", u(1), Expr.add(lane, u(1)), [Node.if_then(Expr.eq(v("backward_active"), u(1)), [
                Node.let_bind("backward_j", Expr.sub(lane, v("offset"))),
                *_walk_step(kinds, "backward", v("backward_j"), CLOSE_BRACE, OPEN_BRACE, match_pairs, lane),
            ])]),
        ]),
    ]
    return Program.wrapped(_bracket_buffers(kinds, stack, match_pairs, n, max_depth), PARALLEL_WORKGROUP,
                           [wrap_anonymous(PRIMITIVE_OP_ID, [Node.if_then(Expr.lt(lane, u(n)), lane_body)])])


def bracket_match(kinds: str, stack: str, match_pairs: str, n: int, max_depth: int) -> Program:
    """Pair the braces of ``kinds[0..n]`` into ``match_pairs`` (see the module doc); `stack` is
    the bounded path's scratch of `max_depth` words."""
    check_len(OP_ID, "n", n, 1)
    check_len(OP_ID, "max_depth", max_depth)
    build = _parallel if max_depth >= n else _bounded_stack
    return tag_program(OP_ID, build(kinds, stack, match_pairs, n, max_depth))


def core_delimiter_match(tok_types: str, tok_depths: str, tok_count: int, open_tok_id: int,
                         close_tok_id: int) -> Program:
    """``tok_depths[t]`` = inclusive prefix depth of `open_tok_id` minus `close_tok_id` tokens."""
    check_len(CORE_DELIMITER_OP_ID, "tok_count", tok_count, 1)
    check_len(CORE_DELIMITER_OP_ID, "open_tok_id", open_tok_id)
    check_len(CORE_DELIMITER_OP_ID, "close_tok_id", close_tok_id)
    t = Expr.gid_x()
    scan = [
        Node.let_bind("running_depth", u(0)),
        Node.loop_for("k", u(0), Expr.add(t, u(1)), [
            Node.let_bind("kth_tok", Expr.load(tok_types, v("k"))),
            Node.if_then(Expr.eq(v("kth_tok"), u(open_tok_id)),
                         [Node.assign("running_depth", Expr.add(v("running_depth"), u(1)))]),
            Node.if_then(Expr.eq(v("kth_tok"), u(close_tok_id)),
                         [Node.assign("running_depth", Expr.sub(v("running_depth"), u(1)))]),
        ]),
        Node.store(tok_depths, t, v("running_depth")),
    ]
    primitive = Program.wrapped(
        [BufferDecl.storage(tok_types, 0, BufferAccess.ReadOnly, U32).with_count(tok_count),
         BufferDecl.storage(tok_depths, 1, BufferAccess.ReadWrite, U32).with_count(tok_count)],
        PARALLEL_WORKGROUP,
        [wrap_anonymous(CORE_DELIMITER_PRIMITIVE_OP_ID, [Node.if_then(Expr.lt(t, u(tok_count)), scan)])])
    primitive = non_composable(with_entry_op_id(primitive, CORE_DELIMITER_PRIMITIVE_OP_ID))
    return tag_program(CORE_DELIMITER_OP_ID, primitive)


def _build_bracket(n: int = 4, max_depth: int = 4) -> Program:
    return bracket_match("kinds", "stack", "match_pairs", n, max_depth)


def _build_core(tok_count: int = 8, open_tok_id: int = 12, close_tok_id: int = 13) -> Program:
    return core_delimiter_match("tok_types", "tok_depths", tok_count, open_tok_id, close_tok_id)


# vyre's vectors: "{{}}" through the parallel path (stack scratch untouched), and depths of
# "{{...}}" with tokens 12/13.
BRACKET_ENTRY = register_case(
    OP_ID, _build_bracket,
    [pack_u32_slice([OPEN_BRACE, OPEN_BRACE, CLOSE_BRACE, CLOSE_BRACE]), pack_u32_slice([0] * 4)],
    [pack_u32_slice([0, 0, 0, 0]), pack_u32_slice([3, 2, 1, 0])],
    category="parsing", ulp=ULP, bench=dict(n=1 << 14, max_depth=1 << 14))
CORE_ENTRY = register_case(
    CORE_DELIMITER_OP_ID, _build_core,
    [pack_u32_slice([12, 12, 0, 0, 0, 13, 13, 0]), pack_u32_slice([0] * 8)],
    [pack_u32_slice([1, 2, 2, 2, 2, 1, 0, 0])],
    category="parsing", ulp=ULP, bench=dict(tok_count=1 << 14))
