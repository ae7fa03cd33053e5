"""`vyre-libs::parsing::c11_lex_digraphs`: rewrite C digraph token pairs (port of
vyre-libs/src/parsing/c/lex/lexer/digraphs.rs).

Invocation t < tok_count (workgroup [256,1,1]) looks at ``tok_types[t..t+4]`` (EOF past the end)
and the two types before it: ``<:`` -> ``[``, ``:>`` -> ``]``, ``<%`` -> ``{``, ``%>`` -> ``}``,
``%:`` -> ``#`` and ``%:%:`` -> ``##``; the rewritten pair's later tokens become TOK_COMMENT (to be
stripped). ``%:`` right after a ``%:`` (the tail of ``%:%:``) is left alone. ``tok_starts`` and
``tok_lens`` are bound but not touched.

Race (vyre's, kept): lane t reads types t-2..t+3 and writes t..t+3, so two rewrites whose windows
overlap (``<%>``, ``%:%:%:``) depend on the order lanes run in. The result is defined when the
rewritten pairs are separated by at least one other token; the tests keep to such streams.

Example::

    >>> c11_lex_digraphs("types", "starts", "lens", 8).entry[0].body[0].generator
    'vyre-primitives::text::utf8_validate'
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, child_phase, non_composable, u, v, with_entry_op_id
from . import tokens as T

OP_ID = "vyre-libs::parsing::c11_lex_digraphs"
# vyre names the phase after the utf8_validate primitive (kept as upstream)
PHASE_OP_ID = "vyre-primitives::text::utf8_validate"
ULP = None  # u32 results: exact
U32 = DataType.U32


def _is(var: str, tok: int) -> Expr:
    return Expr.eq(v(var), u(tok))


def _pair(first: int, second: int) -> Expr:
    return Expr.and_(_is("t1_type", first), _is("t2_type", second))


def _rewrite(types: str, t: Expr, cond: Expr, tok: int, erased: int) -> Node:
    """``if cond { types[t] = tok; types[t+1..=t+erased] = COMMENT }``."""
    return Node.if_then(cond, [Node.store(types, t, u(tok))] +
                        [Node.store(types, Expr.add(t, u(k)), u(T.TOK_COMMENT)) for k in range(1, erased + 1)])


def digraph_nodes(types: str, tok_count: int) -> list[Node]:
    """The per-lane body (lane ``t = gid.x``), guarded by ``t < tok_count``."""
    t, n = Expr.gid_x(), u(tok_count)

    def ahead(k: int) -> Expr:
        return Expr.select(Expr.lt(Expr.add(t, u(k)), n), Expr.load(types, Expr.add(t, u(k))), u(T.TOK_EOF))

    pcpc = v("is_percent_colon_percent_colon")
    tail = v("inside_percent_colon_percent_colon_tail")
    window = [
        Node.let_bind("t2_type", Expr.load(types, Expr.add(t, u(1)))),
        Node.let_bind("t3_type", ahead(2)),
        Node.let_bind("t4_type", ahead(3)),
        Node.let_bind("is_percent_colon_percent_colon", Expr.and_(
            _pair(T.TOK_PERCENT, T.TOK_COLON), Expr.and_(_is("t3_type", T.TOK_PERCENT), _is("t4_type", T.TOK_COLON)))),
        Node.let_bind("inside_percent_colon_percent_colon_tail", Expr.and_(v("has_prev2"), Expr.and_(
            _is("prev2_type", T.TOK_PERCENT), _is("prev1_type", T.TOK_COLON)))),
        _rewrite(types, t, pcpc, T.TOK_HASHHASH, 3),
        _rewrite(types, t, _pair(T.TOK_LT, T.TOK_COLON), T.TOK_LBRACKET, 1),
        _rewrite(types, t, _pair(T.TOK_COLON, T.TOK_GT), T.TOK_RBRACKET, 1),
        _rewrite(types, t, _pair(T.TOK_LT, T.TOK_PERCENT), T.TOK_LBRACE, 1),
        _rewrite(types, t, _pair(T.TOK_PERCENT, T.TOK_GT), T.TOK_RBRACE, 1),
        _rewrite(types, t, Expr.and_(_pair(T.TOK_PERCENT, T.TOK_COLON), Expr.and_(Expr.not_(pcpc), Expr.not_(tail))),
                 T.TOK_HASH, 1),
    ]
    body = [
        Node.let_bind("t1_type", Expr.load(types, t)),
        Node.let_bind("has_prev2", Expr.gt(t, u(1))),
        Node.let_bind("prev2_type", Expr.select(v("has_prev2"), Expr.load(types, Expr.saturating_sub(t, u(2))),
                                                u(T.TOK_EOF))),
        Node.let_bind("prev1_type", Expr.select(Expr.gt(t, u(0)), Expr.load(types, Expr.saturating_sub(t, u(1))),
                                                u(T.TOK_EOF))),
        Node.if_then(Expr.lt(Expr.add(t, u(1)), n), window),
    ]
    return [Node.if_then(Expr.lt(t, n), body)]


def c11_lex_digraphs(tok_types: str, tok_starts: str, tok_lens: str, tok_count: int) -> Program:
    """Rewrite the digraph pairs of ``tok_types[0..tok_count]`` in place."""
    check_len(OP_ID, "tok_count", tok_count)
    n = max(tok_count, 1)
    program = Program.wrapped(
        [BufferDecl.storage(name, b, BufferAccess.ReadWrite, U32).with_count(n)
         for b, name in enumerate((tok_types, tok_starts, tok_lens))],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, [child_phase(OP_ID, PHASE_OP_ID, digraph_nodes(tok_types, tok_count))])])
    return non_composable(with_entry_op_id(program, OP_ID))


def _build(tok_count: int = 4096) -> Program:
    return c11_lex_digraphs("tok_types", "tok_starts", "tok_lens", tok_count)


def _types(head: list[int]) -> bytes:
    return pack_u32_slice(head + [0] * (4096 - len(head)))


# vyre's vector: <: <% %> %: -> [ { } # with the second halves erased.
ENTRY = register_case(
    OP_ID, _build,
    [_types([T.TOK_LT, T.TOK_COLON, T.TOK_LT, T.TOK_PERCENT, T.TOK_PERCENT, T.TOK_GT, T.TOK_PERCENT, T.TOK_COLON]),
     bytes(4 * 4096), bytes(4 * 4096)],
    [_types([T.TOK_LBRACKET, T.TOK_COMMENT, T.TOK_LBRACE, T.TOK_COMMENT, T.TOK_RBRACE, T.TOK_COMMENT, T.TOK_HASH,
             T.TOK_COMMENT]), bytes(4 * 4096), bytes(4 * 4096)],
    category="parsing", ulp=ULP, bench=dict(tok_count=1 << 18))
