"""`vyre-libs::parsing::opt_propagate_type_specifiers`: each token's nearest visible base type
specifier within its declaration (port of vyre-libs/src/parsing/c/parse/declarations.rs).

Lane t < n scans ``i = t, t-1, .., 0`` (with ``prev``/``prev_prev`` the two types before i, EOF
before the start), considering only tokens at ``tok_depths[i] <= tok_depths[t]``:

- a ``}`` starts skipping a brace body; the matching ``{`` ends it and, unless it opens an
  aggregate body (after struct/union/enum or their tag), blocks the scan;
- outside a skipped body, ``;``, a directive or a non-aggregate ``{`` blocks the scan;
- the first type specifier (int, char, ..., struct/union/enum, C23 and GNU scalar keywords), or an
  identifier in typedef-name position (after a declaration start or prefix, not a tag name; never
  the lane's own token), becomes ``node_out[t]``; 0 if none is found.

Example::

    >>> p = opt_propagate_type_specifiers("tok_types", "tok_depths", "node_out", 8)
    >>> [b.name for b in p.buffers], p.entry[0].body[0].generator
    (['tok_types', 'tok_depths', 'node_out'], 'vyre-primitives::parsing::ssa_dominance_scan')
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..c import tokens as T
from ..common import check_len, child_phase, non_composable, u, v, with_entry_op_id

OP_ID = "vyre-libs::parsing::opt_propagate_type_specifiers"
PHASE_OP_ID = "vyre-primitives::parsing::ssa_dominance_scan"  # vyre's child phase name (kept)
ULP = None  # u32 results: exact

TYPE_SPECIFIERS = (
    T.TOK_INT, T.TOK_CHAR_KW, T.TOK_VOID, T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM, T.TOK_FLOAT_KW, T.TOK_DOUBLE,
    T.TOK_SHORT, T.TOK_LONG, T.TOK_SIGNED, T.TOK_UNSIGNED, T.TOK_BOOL, T.TOK_COMPLEX, T.TOK_IMAGINARY, T.TOK_ATOMIC,
    T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_AUTO_TYPE, T.TOK_GNU_INT128, T.TOK_GNU_BUILTIN_VA_LIST,
    T.TOK_BITINT_KW, T.TOK_FLOAT16_KW, T.TOK_FLOAT32_KW, T.TOK_FLOAT64_KW, T.TOK_FLOAT128_KW, T.TOK_GNU_FLOAT128_KW,
    T.TOK_GNU_BF16_KW, T.TOK_GNU_FP16_KW, T.TOK_DECIMAL32_KW, T.TOK_DECIMAL64_KW, T.TOK_DECIMAL128_KW)
DECLARATION_STARTS = (T.TOK_EOF, T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_LBRACE, T.TOK_RBRACE, T.TOK_LPAREN)
DECLARATION_PREFIXES = (
    T.TOK_TYPEDEF, T.TOK_EXTERN, T.TOK_STATIC, T.TOK_AUTO, T.TOK_REGISTER, T.TOK_INLINE, T.TOK_CONST,
    T.TOK_VOLATILE, T.TOK_RESTRICT, T.TOK_ALIGNAS, T.TOK_NORETURN, T.TOK_THREAD_LOCAL, T.TOK_GNU_EXTENSION,
    T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_AUTO_TYPE, T.TOK_GNU_INT128, T.TOK_GNU_BUILTIN_VA_LIST,
    T.TOK_GNU_ADDRESS_SPACE)
TAG_KEYWORDS = (T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM)


def _any_eq(x: Expr, values) -> Expr:
    # vyre folds from Expr::bool(false); the leading `false ||` changes nothing
    out = Expr.bool(False)
    for val in values:
        out = Expr.or_(out, Expr.eq(x, u(val)))
    return out


def _tag_name(prev: Expr, prev_prev: Expr) -> Expr:
    return Expr.and_(Expr.eq(prev, u(T.TOK_IDENTIFIER)), _any_eq(prev_prev, TAG_KEYWORDS))


def _aggregate_body_open(prev: Expr, prev_prev: Expr) -> Expr:
    return Expr.or_(_any_eq(prev, TAG_KEYWORDS), _tag_name(prev, prev_prev))


def _propagatable(tok: Expr, prev: Expr, prev_prev: Expr, allow_ident: Expr) -> Expr:
    typedef_pos = Expr.and_(Expr.not_(_tag_name(prev, prev_prev)),
                            Expr.or_(_any_eq(prev, DECLARATION_STARTS), _any_eq(prev, DECLARATION_PREFIXES)))
    return Expr.or_(_any_eq(tok, TYPE_SPECIFIERS),
                    Expr.and_(allow_ident, Expr.and_(Expr.eq(tok, u(T.TOK_IDENTIFIER)), typedef_pos)))


def _boundary(tok: Expr, prev: Expr, prev_prev: Expr) -> Expr:
    return Expr.or_(_any_eq(tok, (T.TOK_SEMICOLON, T.TOK_PREPROC)),
                    Expr.and_(Expr.eq(tok, u(T.TOK_LBRACE)), Expr.not_(_aggregate_body_open(prev, prev_prev))))


def _scan_step(tok_types: str, tok_depths: str) -> list[Node]:
    t, i = Expr.gid_x(), v("scan_i")
    tok, prev, pp = v("scan_tok"), v("prev_tok"), v("prev_prev_tok")
    free = Expr.eq(v("blocked"), u(0))
    no_skip = Expr.eq(v("brace_skip_depth"), u(0))
    same = v("same_or_outer_depth")
    return [
        Node.let_bind("scan_i", Expr.sub(t, v("scan_delta"))),
        Node.let_bind("scan_tok", Expr.load(tok_types, i)),
        Node.let_bind("scan_depth", Expr.load(tok_depths, i)),
        Node.let_bind("scan_has_prev", Expr.gt(i, u(0))),
        Node.let_bind("scan_has_prev_prev", Expr.gt(i, u(1))),
        Node.let_bind("prev_tok", Expr.select(v("scan_has_prev"), Expr.load(tok_types, Expr.sub(i, u(1))),
                                              u(T.TOK_EOF))),
        Node.let_bind("prev_prev_tok", Expr.select(v("scan_has_prev_prev"), Expr.load(tok_types, Expr.sub(i, u(2))),
                                                   u(T.TOK_EOF))),
        Node.let_bind("same_or_outer_depth", Expr.le(v("scan_depth"), v("depth"))),
        Node.if_then(Expr.and_(free, Expr.and_(same, Expr.gt(v("brace_skip_depth"), u(0)))), [
            Node.if_then(Expr.eq(tok, u(T.TOK_RBRACE)),
                         [Node.assign("brace_skip_depth", Expr.add(v("brace_skip_depth"), u(1)))]),
            Node.if_then(Expr.eq(tok, u(T.TOK_LBRACE)), [
                Node.assign("brace_skip_depth", Expr.sub(v("brace_skip_depth"), u(1))),
                Node.if_then(Expr.and_(no_skip, Expr.not_(_aggregate_body_open(prev, pp))),
                             [Node.assign("blocked", u(1))]),
            ]),
        ]),
        Node.if_then(Expr.and_(free, Expr.and_(no_skip, Expr.and_(same, Expr.eq(tok, u(T.TOK_RBRACE))))),
                     [Node.assign("brace_skip_depth", u(1))]),
        Node.if_then(Expr.and_(free, Expr.and_(no_skip, Expr.and_(same, _boundary(tok, prev, pp)))),
                     [Node.assign("blocked", u(1))]),
        Node.if_then(Expr.and_(free, Expr.and_(Expr.eq(v("active_type"), u(0)), Expr.and_(
            Expr.and_(no_skip, same), _propagatable(tok, prev, pp, Expr.gt(v("scan_delta"), u(0)))))),
            [Node.assign("active_type", tok)]),
    ]


def opt_propagate_type_specifiers(tok_types: str, tok_depths: str, node_out: str, num_tokens: int) -> Program:
    """Per token, the type specifier its declaration carries (0: none)."""
    n = check_len(OP_ID, "num_tokens", num_tokens)
    t = Expr.gid_x()
    body = [
        Node.let_bind("tok", Expr.load(tok_types, t)),
        Node.let_bind("depth", Expr.load(tok_depths, t)),
        Node.let_bind("active_type", u(0)),
        Node.let_bind("blocked", u(0)),
        Node.let_bind("brace_skip_depth", u(0)),
        Node.loop_for("scan_delta", u(0), Expr.add(t, u(1)), _scan_step(tok_types, tok_depths)),
        Node.store(node_out, t, v("active_type")),
    ]
    program = Program.wrapped(
        [BufferDecl.storage(tok_types, 0, BufferAccess.ReadOnly, DataType.U32).with_count(n),
         BufferDecl.storage(tok_depths, 1, BufferAccess.ReadOnly, DataType.U32).with_count(n),
         BufferDecl.output(node_out, 2, DataType.U32).with_count(n)],
        (256, 1, 1),
        [wrap_anonymous(OP_ID, [child_phase(OP_ID, PHASE_OP_ID, [Node.if_then(Expr.lt(t, u(n)), body)])])])
    return non_composable(with_entry_op_id(program, OP_ID))


def _build(num_tokens: int = 128) -> Program:
    return opt_propagate_type_specifiers("tok_types", "tok_depths", "node_out", num_tokens)


def _vector(n: int) -> tuple[list[bytes], list[bytes]]:
    """vyre's vector: `int a, b; char c;` then EOF tokens (each blocked by the `;` before it)."""
    toks = [T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_COMMA, T.TOK_IDENTIFIER, T.TOK_SEMICOLON, T.TOK_CHAR_KW,
            T.TOK_IDENTIFIER, T.TOK_SEMICOLON]
    want = [T.TOK_INT] * 4 + [0, T.TOK_CHAR_KW, T.TOK_CHAR_KW, 0]
    return ([pack_u32_slice(toks + [0] * (n - 8)), bytes(4 * n), bytes(4 * n)],
            [pack_u32_slice(want + [0] * (n - 8))])


# vyre registers this at 1024 tokens; each lane's scan is O(t), so the reference's cost grows with
# n^2: it is registered at 128 (the same 8 tokens, then EOF tokens each stopped by the `;` before).
ENTRY = register_case(OP_ID, _build, *_vector(128), category="parsing", ulp=ULP,
                      bench=dict(num_tokens=512))  # the backward scans cost n^2: 1024 is over the reference step budget
