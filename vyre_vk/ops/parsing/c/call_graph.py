"""`vyre-libs::parsing::c11_build_call_graph`: caller -> callee edges from call records (port of
vyre-libs/src/parsing/c/parse/structure/call_graph.rs).

Invocation ``t < num_calls`` (workgroup [256,1,1]) reads call record ``calls[4t..4t+4]``
(``[caller, callee_token, ..]``), hashes the callee token's text with FNV-1a 32 over
``haystack[start .. start+len]`` (one byte per u32 word; vyre XORs the whole word, so high bits
must be zero) and, at the first ``fn_hashes[f]`` equal to that hash, appends the edge
``[caller, f]`` at ``out_edges[atomic_add(out_counts[0], 2) ..]``. ``out_counts`` is not reset: edges
append after whatever count it holds. As in vyre the match is by hash alone.

Order (vyre's, kept): edges land in the order lanes win the atomic, which only the multiset of
edges pins down. The reference runs lanes in lock-step, so it claims iteration-major (all lanes
matching function 0, then function 1, ..); lavapipe runs a workgroup's SIMD groups one after
another (group-major), and workgroups on other threads interleave. The two agree when every
match is at the same function index within one workgroup (the registered vector and the
oracle's inputs); tests/ops/parsing/test_c11_structure.py compares other runs as sorted edges.

Example::

    >>> [b.count for b in c11_build_call_graph("c", "h", "s", "l", "hay", 2, 1, 6, "e", "n").buffers]
    [8, 1, 6, 6, 32, 8, 1]
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, non_composable, u, v, with_entry_op_id
from .keyword import FNV_OFFSET, FNV_PRIME, fnv1a32

OP_ID = "vyre-libs::parsing::c11_build_call_graph"
ULP = None  # u32 results: exact
U32 = DataType.U32


def call_graph_nodes(calls: str, fn_hashes: str, tok_starts: str, tok_lens: str, haystack: str, num_functions: int,
                     out_edges: str, out_counts: str) -> list[Node]:
    t = Expr.gid_x()
    return [
        Node.let_bind("caller_fn_id", Expr.load(calls, Expr.mul(t, u(4)))),
        Node.let_bind("callee_tok_idx", Expr.load(calls, Expr.add(Expr.mul(t, u(4)), u(1)))),
        Node.let_bind("callee_tok_start", Expr.load(tok_starts, v("callee_tok_idx"))),
        Node.let_bind("callee_tok_len", Expr.load(tok_lens, v("callee_tok_idx"))),
        Node.let_bind("callee_hash", u(FNV_OFFSET)),
        Node.loop_for("b", u(0), v("callee_tok_len"), [
            Node.let_bind("byte", Expr.load(haystack, Expr.add(v("callee_tok_start"), v("b")))),
            Node.assign("callee_hash", Expr.bitxor(v("callee_hash"), v("byte"))),
            Node.assign("callee_hash", Expr.mul(v("callee_hash"), u(FNV_PRIME))),
        ]),
        Node.let_bind("matched_fn", u(0)),
        Node.loop_for("f", u(0), u(num_functions), [
            Node.let_bind("func_hash", Expr.load(fn_hashes, v("f"))),
            Node.if_then(Expr.and_(Expr.eq(v("matched_fn"), u(0)), Expr.eq(v("callee_hash"), v("func_hash"))), [
                Node.let_bind("idx", Expr.atomic_add(out_counts, u(0), u(2))),
                Node.store(out_edges, v("idx"), v("caller_fn_id")),
                Node.store(out_edges, Expr.add(v("idx"), u(1)), v("f")),
                Node.assign("matched_fn", u(1)),
            ]),
        ]),
    ]


def c11_build_call_graph(calls: str, fn_hashes: str, tok_starts: str, tok_lens: str, haystack: str, num_calls: int,
                         num_functions: int, num_tokens: int, out_edges: str, out_counts: str) -> Program:
    """Append ``[caller, callee_function]`` edges for the calls whose callee names a function."""
    for name, value in (("num_calls", num_calls), ("num_functions", num_functions), ("num_tokens", num_tokens)):
        check_len(OP_ID, name, value)
    ro = BufferAccess.ReadOnly
    # vyre sizes haystack as 16 words per call (its vector's shape), not by the source length
    buffers = [BufferDecl.storage(calls, 0, ro, U32).with_count(num_calls * 4),
               BufferDecl.storage(fn_hashes, 1, ro, U32).with_count(num_functions),
               BufferDecl.storage(tok_starts, 2, ro, U32).with_count(num_tokens),
               BufferDecl.storage(tok_lens, 3, ro, U32).with_count(num_tokens),
               BufferDecl.storage(haystack, 4, ro, U32).with_count(num_calls * 16),
               BufferDecl.storage(out_edges, 5, BufferAccess.ReadWrite, U32).with_count(num_calls * 4),
               BufferDecl.storage(out_counts, 6, BufferAccess.ReadWrite, U32).with_count(1)]
    body = call_graph_nodes(calls, fn_hashes, tok_starts, tok_lens, haystack, num_functions, out_edges, out_counts)
    program = Program.wrapped(buffers, (256, 1, 1),
                              [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(Expr.gid_x(), u(num_calls)), body)])])
    return non_composable(with_entry_op_id(program, OP_ID))


def _build(num_calls: int = 1, num_functions: int = 1, num_tokens: int = 6) -> Program:
    return c11_build_call_graph("calls", "fn_hashes", "tok_starts", "tok_lens", "haystack", num_calls, num_functions,
                                num_tokens, "out_edges", "out_counts")


# vyre's vector: call record [0, 5, 6, 7], token 5 spells "foo" (bytes 0..3), function 0 hashes
# "foo": edge [0, 0], count 2.
ENTRY = register_case(
    OP_ID, _build,
    [pack_u32_slice([0, 5, 6, 7]), pack_u32_slice([fnv1a32(b"foo")]), pack_u32_slice([0] * 6),
     pack_u32_slice([0, 0, 0, 0, 0, 3]), pack_u32_slice(list(b"foo") + [0] * 13), bytes(16), pack_u32_slice([0])],
    [pack_u32_slice([0, 0, 0, 0]), pack_u32_slice([2])],
    category="parsing", ulp=ULP, bench=dict(num_calls=1 << 14, num_functions=1 << 10, num_tokens=1 << 16))
