"""`vyre-libs::matching::aho_corasick`: multi-pattern scan over a pre-built DFA (port of
vyre-libs/src/scan/dfa/aho_corasick.rs; tables from :mod:`.dfa_compile`).

Workgroup [64,1,1], one invocation per haystack byte ``i < buf_len(haystack)``: start at the root,
step ``state = transitions[state * 256 + haystack[step]]`` over the suffix window
``step in [max(0, i + 1 - max_pattern_len), i]``, then ``matches[i] = accept[state]`` (pattern id
+ 1, 0 for no match). A match ending at ``i`` is at most ``max_pattern_len`` bytes long, so the
window reaches the same automaton state as a scan of the whole prefix would (exact Aho-Corasick
semantics, no cross-lane carry). ``aho_corasick`` (no bound) replays the whole prefix.
Each u32 haystack element holds one byte; a value >= 256 indexes past its row (vyre does not
mask it either).

Example::

    >>> p = aho_corasick_bounded("haystack", "transitions", "accept", "matches", 11, 5, 4)
    >>> [(b.name, b.count) for b in p.buffers], p.workgroup_size
    ([('haystack', 11), ('transitions', 1280), ('accept', 5), ('matches', 11)], (64, 1, 1))
"""
from __future__ import annotations

from ...ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..hash.wrap import check_count
from ..registry import register_case
from ..wire import pack_u32_slice
from .dfa_compile import ALPHABET_SIZE, dfa_compile

OP_ID = "vyre-libs::matching::aho_corasick"
ULP = None  # u32 results: exact
U32 = DataType.U32
U32_MAX = 0xFFFFFFFF


def aho_corasick_bounded(haystack: str, transitions: str, accept: str, matches: str, haystack_len: int,
                         state_count: int, max_pattern_len: int) -> Program:
    """``matches[i] = accept[state after the last max_pattern_len bytes ending at i]``."""
    for name, value in (("haystack_len", haystack_len), ("state_count", state_count),
                        ("max_pattern_len", max_pattern_len)):
        check_count(OP_ID, name, value)
    window = max(max_pattern_len, 1)
    i = Expr.var("i")
    end = Expr.add(i, Expr.u32(1))
    # max(0, i + 1 - window) without wrapping: lanes i < window - 1 start at byte 0.
    start = Expr.select(Expr.lt(i, Expr.u32(window - 1)), Expr.u32(0), Expr.sub(end, Expr.u32(window)))
    step = Node.assign("state", Expr.load(transitions, Expr.add(
        Expr.mul(Expr.var("state"), Expr.u32(ALPHABET_SIZE)), Expr.load(haystack, Expr.var("step")))))
    body = [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.buf_len(haystack)), [
            Node.let_bind("state", Expr.u32(0)),
            Node.let_bind("scan_start", start),
            Node.loop_for("step", Expr.var("scan_start"), end, [step]),
            Node.store(matches, i, Expr.load(accept, Expr.var("state"))),
        ]),
    ]
    return Program.wrapped(
        [BufferDecl.read(haystack, 0, U32).with_count(haystack_len),
         BufferDecl.read(transitions, 1, U32).with_count(min(state_count * ALPHABET_SIZE, U32_MAX)),
         BufferDecl.read(accept, 2, U32).with_count(state_count),
         BufferDecl.output(matches, 3, U32).with_count(haystack_len)],
        (64, 1, 1), [wrap_anonymous(OP_ID, body)])


def aho_corasick(haystack: str, transitions: str, accept: str, matches: str, haystack_len: int,
                 state_count: int) -> Program:
    """Unbounded form: every lane replays the whole prefix (window = ``max(haystack_len, 1)``)."""
    return aho_corasick_bounded(haystack, transitions, accept, matches, haystack_len, state_count,
                                max(haystack_len, 1))


def _build(haystack_len: int = 11, state_count: int = 5, max_pattern_len: int = 4) -> Program:
    return aho_corasick_bounded("haystack", "transitions", "accept", "matches", haystack_len, state_count,
                                max_pattern_len)


_ABRA = dfa_compile([b"abra"])  # 5 states, max_pattern_len 4: the registered size
ENTRY = register_case(
    OP_ID, _build,
    [pack_u32_slice(b"abracadabra"), pack_u32_slice(_ABRA.transitions), pack_u32_slice(_ABRA.accept)],
    [pack_u32_slice([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1])],
    category="scan", ulp=ULP, bench=dict(haystack_len=1 << 16))

__all__ = ["OP_ID", "aho_corasick", "aho_corasick_bounded"]
