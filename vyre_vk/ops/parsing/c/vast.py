"""`vyre-libs::parsing::c11_build_vast_nodes_v2`: the raw VAST tree of a C token stream, one
10-word row per token (port of vyre-libs/src/parsing/c/parse/vast/build/structural_builder.rs).

Row ``i``: ``[kind, parent, first_child, next_sibling, previous_sibling, start, len, 0, 0, 0]``
(MATCH_NONE for a missing link; the typedef flag/scope/symbol words 7..9 start at 0). A token's
parent is the innermost open ``(``, ``{`` or ``[`` before it; a close token is the last child of
the opener it closes, and pops it only if it matches the top (a stray close is a plain child).

Lane ``t < num_tokens`` writes its row's kind, start, len, and the zero words 7, 8 (the same values
lane 0 writes later: a benign race); lane 0 then walks every token serially with an open-token
stack and each parent's last child in workgroup memory (``__vast_stack``, ``__vast_last_child``,
``num_tokens`` words each) and sets ``out_count[0] = num_tokens``. Workgroup [1,1,1]. Above
VAST_LAST_CHILD_WORKGROUP_MAX_U32 tokens the two scratch arrays become storage buffers
(bindings 5, 6) excluded from the results, as in vyre.

Example::

    >>> p = c11_build_vast_nodes_v2("ty", "st", "ln", 9, "vast", "n")
    >>> [(b.name, b.is_workgroup) for b in p.buffers][-2:], p.workgroup_size
    ([('__vast_last_child', True), ('__vast_stack', True)], (1, 1, 1))
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, child_phase, u, v, with_entry_op_id
from . import tokens as T

OP_ID = "vyre-libs::parsing::c11_build_vast_nodes_v2"
PHASE_OP_ID = "vyre-primitives::parsing::ast_cse_structural_hash"  # vyre's phase name, kept
ULP = None  # u32 results: exact
U32 = DataType.U32
SENTINEL = 0xFFFFFFFF
VAST_NODE_STRIDE_U32 = 10
VAST_PREVIOUS_SIBLING_FIELD = 4
VAST_TYPEDEF_FLAGS_FIELD, VAST_TYPEDEF_SCOPE_FIELD, VAST_TYPEDEF_SYMBOL_FIELD = 7, 8, 9
VAST_LAST_CHILD_WORKGROUP_MAX_U32 = 12_288
LAST_CHILD, STACK = "__vast_last_child", "__vast_stack"


def uses_global_scratch(num_tokens: int) -> bool:
    """vyre's c11_build_vast_nodes_uses_global_last_child."""
    return max(num_tokens, 1) > VAST_LAST_CHILD_WORKGROUP_MAX_U32


def is_open_token(tok: Expr) -> Expr:
    return Expr.or_(Expr.or_(Expr.eq(tok, u(T.TOK_LPAREN)), Expr.eq(tok, u(T.TOK_LBRACE))),
                    Expr.eq(tok, u(T.TOK_LBRACKET)))


def is_matching_close(opener: Expr, tok: Expr) -> Expr:
    terms = [Expr.and_(Expr.eq(opener, u(o)), Expr.eq(tok, u(c))) for o, c in
             ((T.TOK_LPAREN, T.TOK_RPAREN), (T.TOK_LBRACE, T.TOK_RBRACE), (T.TOK_LBRACKET, T.TOK_RBRACKET))]
    return Expr.or_(Expr.or_(terms[0], terms[1]), terms[2])


def _field(row: str, k: int) -> Expr:
    return v(row) if k == 0 else Expr.add(v(row), u(k))


def _build_loop(tok_types: str, tok_starts: str, tok_lens: str, out: str, n: Expr) -> list[Node]:
    i, depth = v("build_i"), v("stack_depth")
    top_slot = Expr.select(Expr.gt(depth, u(0)), Expr.sub(depth, u(1)), u(0))
    in_range = lambda name: Expr.lt(v(name), n)  # noqa: E731
    return [
        Node.let_bind("row", Expr.mul(i, u(VAST_NODE_STRIDE_U32))),
        Node.let_bind("tok", Expr.load(tok_types, i)),
        Node.store(out, _field("row", 0), v("tok")),
        Node.store(out, _field("row", 5), Expr.load(tok_starts, i)),
        Node.store(out, _field("row", 6), Expr.load(tok_lens, i)),
        *[Node.store(out, _field("row", k), u(0)) for k in
          (VAST_TYPEDEF_FLAGS_FIELD, VAST_TYPEDEF_SCOPE_FIELD, VAST_TYPEDEF_SYMBOL_FIELD)],
        Node.let_bind("parent_idx", Expr.select(Expr.gt(depth, u(0)), Expr.load(STACK, top_slot), u(SENTINEL))),
        Node.store(out, _field("row", 1), v("parent_idx")),
        *[Node.store(out, _field("row", k), u(SENTINEL)) for k in (2, 3, 4)],
        # clamped so the speculative load of a select arm never indexes with SENTINEL
        Node.let_bind("safe_parent_idx", Expr.select(in_range("parent_idx"), v("parent_idx"), u(0))),
        Node.let_bind("safe_parent_row", Expr.mul(v("safe_parent_idx"), u(VAST_NODE_STRIDE_U32))),
        Node.let_bind("previous_sibling", Expr.select(
            in_range("parent_idx"), Expr.load(LAST_CHILD, v("safe_parent_idx")), v("root_last_child"))),
        Node.store(out, _field("row", VAST_PREVIOUS_SIBLING_FIELD), v("previous_sibling")),
        Node.if_then_else(in_range("previous_sibling"), [
            Node.store(out, Expr.add(Expr.mul(v("previous_sibling"), u(VAST_NODE_STRIDE_U32)), u(3)), i)], [
            Node.if_then(in_range("parent_idx"), [
                Node.store(out, Expr.add(Expr.mul(v("parent_idx"), u(VAST_NODE_STRIDE_U32)), u(2)), i)])]),
        Node.if_then_else(in_range("parent_idx"), [Node.store(LAST_CHILD, v("safe_parent_idx"), i)],
                          [Node.assign("root_last_child", i)]),
        Node.if_then(is_open_token(v("tok")), [Node.store(STACK, depth, i),
                                               Node.assign("stack_depth", Expr.add(depth, u(1)))]),
        Node.let_bind("top_idx", Expr.select(Expr.gt(depth, u(0)), Expr.load(STACK, top_slot), u(SENTINEL))),
        Node.let_bind("safe_top_idx", Expr.select(in_range("top_idx"), v("top_idx"), u(0))),
        Node.let_bind("top_kind", Expr.select(in_range("top_idx"), Expr.load(
            tok_types, Expr.select(in_range("top_idx"), v("safe_top_idx"), u(0))), u(0))),
        Node.if_then(Expr.and_(Expr.gt(depth, u(0)), is_matching_close(v("top_kind"), v("tok"))),
                     [Node.assign("stack_depth", Expr.sub(depth, u(1)))]),
    ]


def c11_build_vast_nodes_v2(tok_types: str, tok_starts: str, tok_lens: str, num_tokens: int, out_vast_nodes: str,
                            out_count: str) -> Program:
    """VAST rows of ``tok_*[0..num_tokens]`` (see the module doc)."""
    check_len(OP_ID, "num_tokens", num_tokens)
    n_lit, t = u(num_tokens), Expr.gid_x()
    n = max(num_tokens, 1)
    parallel_rows = [
        Node.let_bind("parallel_row", Expr.mul(t, u(VAST_NODE_STRIDE_U32))),
        Node.store(out_vast_nodes, _field("parallel_row", 0), Expr.load(tok_types, t)),
        Node.store(out_vast_nodes, _field("parallel_row", 5), Expr.load(tok_starts, t)),
        Node.store(out_vast_nodes, _field("parallel_row", 6), Expr.load(tok_lens, t)),
        Node.store(out_vast_nodes, _field("parallel_row", 7), u(0)),
        Node.store(out_vast_nodes, _field("parallel_row", 8), u(0)),
    ]
    serial = [
        Node.store(out_count, u(0), n_lit),
        Node.let_bind("stack_depth", u(0)),
        Node.let_bind("root_last_child", u(SENTINEL)),
        Node.loop_for("last_child_init", u(0), n_lit, [Node.store(LAST_CHILD, v("last_child_init"), u(SENTINEL)),
                                                        Node.store(STACK, v("last_child_init"), u(SENTINEL))]),
        Node.loop_for("build_i", u(0), n_lit, _build_loop(tok_types, tok_starts, tok_lens, out_vast_nodes, n_lit)),
    ]
    body = [Node.if_then(Expr.lt(t, n_lit), parallel_rows), Node.if_then(Expr.eq(t, u(0)), serial)]
    if uses_global_scratch(n):
        scratch = [BufferDecl.storage(name, b, BufferAccess.ReadWrite, U32).with_count(n).with_output_byte_range(0, 0)
                   for b, name in ((5, LAST_CHILD), (6, STACK))]
    else:
        scratch = [BufferDecl.workgroup(LAST_CHILD, n, U32), BufferDecl.workgroup(STACK, n, U32)]
    out_count_decl = BufferDecl.storage(out_count, 4, BufferAccess.ReadWrite, U32).with_count(1)
    buffers = [BufferDecl.storage(name, b, BufferAccess.ReadOnly, U32).with_count(n)
               for b, name in enumerate((tok_types, tok_starts, tok_lens))]
    buffers += [BufferDecl.output(out_vast_nodes, 3, U32).with_count(n * VAST_NODE_STRIDE_U32),
                out_count_decl.with_pipeline_live_out(True), *scratch]
    program = Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous(OP_ID, [child_phase(OP_ID, PHASE_OP_ID, body)])])
    return with_entry_op_id(program, OP_ID)


def vast_rows(types: list[int], starts: list[int], lens: list[int]) -> list[int]:
    """Host construction of the rows (the registered vector's expected bytes)."""
    n = len(types)
    parent, first, nxt, prev = [SENTINEL] * n, [SENTINEL] * n, [SENTINEL] * n, [SENTINEL] * n
    last: dict[int, int] = {}
    stack: list[int] = []
    closes = {T.TOK_RPAREN: T.TOK_LPAREN, T.TOK_RBRACE: T.TOK_LBRACE, T.TOK_RBRACKET: T.TOK_LBRACKET}
    for i, k in enumerate(types):
        p = stack[-1] if stack else SENTINEL
        parent[i] = p
        if p in last:
            prev[i] = last[p]
            nxt[last[p]] = i
        elif p != SENTINEL:
            first[p] = i
        last[p] = i
        if k in (T.TOK_LPAREN, T.TOK_LBRACE, T.TOK_LBRACKET):
            stack.append(i)
        elif k in closes and stack and types[stack[-1]] == closes[k]:
            stack.pop()
    return [w for i in range(n) for w in (types[i], parent[i], first[i], nxt[i], prev[i], starts[i], lens[i], 0, 0, 0)]


def _build(num_tokens: int = 9) -> Program:
    return c11_build_vast_nodes_v2("tok_types", "tok_starts", "tok_lens", num_tokens, "out_vast_nodes", "out_count")


# vyre's witness: `int main() { return 2; }` as kinds [107, 1, 10, 11, 12, 104, 2, 16, 13].
_TYPES = [107, 1, 10, 11, 12, 104, 2, 16, 13]
_STARTS, _LENS = [0, 4, 8, 9, 10, 11, 18, 19, 20], [3, 4, 1, 1, 1, 6, 1, 1, 1]
ENTRY = register_case(
    OP_ID, _build, [pack_u32_slice(_TYPES), pack_u32_slice(_STARTS), pack_u32_slice(_LENS), bytes(9 * 40), bytes(4)],
    [pack_u32_slice(vast_rows(_TYPES, _STARTS, _LENS)), pack_u32_slice([9])],
    category="parsing", ulp=ULP, bench=dict(num_tokens=4096))  # 2 x 4 B x n of workgroup memory: <= 48 KiB
