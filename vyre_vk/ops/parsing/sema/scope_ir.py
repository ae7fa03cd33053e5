"""The IR bodies of vyre's C scope analysis (vyre-libs/src/parsing/c/sema/{walk,scan,lookup,
intern,predicates}.rs): brace scopes, function-parameter scopes, declaration kinds and
identifier interning, per token ``node_idx``. scope.py assembles them into c_sema_scope and its
phase programs; the rules are stated there.

Example::

    >>> [type(n).__name__ for n in brace_scope_nodes("tok_types", Expr.gid_x())][:2]
    ['Loop', 'If']
"""
from __future__ import annotations

from typing import Optional

from ....ir import Expr, Node
from ..c import tokens as T
from ..common import is_any, u, v

NONE = 0xFFFFFFFF
DECL_KIND_NONE, DECL_KIND_FUNCTION, DECL_KIND_FUNCTION_DECL, DECL_KIND_VARIABLE = 0, 1, 2, 3
DECL_KIND_LABEL, DECL_KIND_TYPEDEF, DECL_KIND_ENUM_CONSTANT = 4, 5, 6
FNV1A32_OFFSET, FNV1A32_PRIME = 0x811C9DC5, 0x01000193
TAG_KEYWORDS = (T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM)
# predicates.rs declaration_prefix (the GPU list: it has the C23/TS 18661 float keywords and
# __forceinline, which vyre's CPU reference_scope_tree lists lack)
DECLARATION_PREFIX = (
    T.TOK_AUTO, T.TOK_CONST, T.TOK_DOUBLE, T.TOK_ENUM, T.TOK_EXTERN, T.TOK_FLOAT_KW, T.TOK_INLINE, T.TOK_LONG,
    T.TOK_REGISTER, T.TOK_RESTRICT, T.TOK_SHORT, T.TOK_SIGNED, T.TOK_STATIC, T.TOK_STRUCT, T.TOK_THREAD_LOCAL,
    T.TOK_TYPEDEF, T.TOK_UNION, T.TOK_UNSIGNED, T.TOK_VOLATILE, T.TOK_BITINT_KW, T.TOK_FLOAT16_KW, T.TOK_FLOAT32_KW,
    T.TOK_FLOAT64_KW, T.TOK_FLOAT128_KW, T.TOK_GNU_FLOAT128_KW, T.TOK_GNU_BF16_KW, T.TOK_GNU_FP16_KW,
    T.TOK_DECIMAL32_KW, T.TOK_DECIMAL64_KW, T.TOK_DECIMAL128_KW, T.TOK_FORCEINLINE_KW)
FUNCTION_NAME_PREFIX = (T.TOK_CHAR_KW, T.TOK_IDENTIFIER, T.TOK_INT, T.TOK_VOID) + DECLARATION_PREFIX
DECLARATION_CONTEXT = (T.TOK_INT, T.TOK_CHAR_KW, T.TOK_VOID, T.TOK_STRUCT, T.TOK_TYPEDEF, T.TOK_COMMA,
                       T.TOK_SEMICOLON, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_STAR) + DECLARATION_PREFIX


def _is(name: str, tok: int) -> Expr:
    return Expr.eq(v(name), u(tok))


def _guarded(nodes: list[Node], guard: Optional[Expr]) -> list[Node]:
    return [Node.if_then(guard, nodes)] if guard is not None else nodes


def reverse_unmatched_lbrace_scan(tok_types: str, scan: str, idx: str, tok: str, depth: str, out_open: str,
                                  limit: Expr, guard: Optional[Expr] = None) -> list[Node]:
    """``out_open`` = the nearest ``{`` before `limit` not closed before it (``depth`` counts the
    ``}`` seen; it keeps counting after the match, as vyre's does)."""
    loop = Node.loop_for(scan, u(0), limit, [
        Node.let_bind(idx, Expr.sub(Expr.sub(limit, u(1)), v(scan))),
        Node.let_bind(tok, Expr.load(tok_types, v(idx))),
        Node.if_then(_is(tok, T.TOK_RBRACE), [Node.assign(depth, Expr.add(v(depth), u(1)))]),
        Node.if_then(Expr.eq(v(out_open), u(NONE)), [Node.if_then(_is(tok, T.TOK_LBRACE), [
            Node.if_then_else(Expr.eq(v(depth), u(0)), [Node.assign(out_open, v(idx))],
                              [Node.assign(depth, Expr.sub(v(depth), u(1)))])])]),
    ])
    return _guarded([loop], guard)


def forward_matching_paren_scan(tok_types: str, idx: str, start: Expr, end: Expr, tok: str, depth: str,
                                out_match: str, guard: Optional[Expr] = None) -> list[Node]:
    """``out_match`` = the ``)`` closing an already-open ``(`` (depth starts at 1) in [start, end)."""
    loop = Node.loop_for(idx, start, end, [
        Node.let_bind(tok, Expr.load(tok_types, v(idx))),
        Node.if_then(_is(tok, T.TOK_LPAREN), [Node.assign(depth, Expr.add(v(depth), u(1)))]),
        Node.if_then(Expr.and_(Expr.eq(v(out_match), u(NONE)), _is(tok, T.TOK_RPAREN)), [
            Node.if_then_else(Expr.eq(v(depth), u(1)), [Node.assign(out_match, v(idx))],
                              [Node.assign(depth, Expr.sub(v(depth), u(1)))])]),
    ])
    return [Node.let_bind(out_match, u(NONE)), Node.let_bind(depth, u(1))] + _guarded([loop], guard)


def post_paren_boundary_scan(tok_types: str, scan: str, tok: str, active: str, rparen: Expr, end: Expr,
                             out_tok: str, out_idx: str) -> list[Node]:
    """The first ``{`` after the ``)``, or a ``;`` right after it."""
    start = Expr.add(rparen, u(1))
    hit = Expr.and_(Expr.eq(v(active), u(1)), Expr.or_(_is(tok, T.TOK_LBRACE), Expr.and_(
        _is(tok, T.TOK_SEMICOLON), Expr.eq(v(scan), Expr.add(rparen, u(1))))))
    return [
        Node.let_bind(out_tok, u(NONE)), Node.let_bind(out_idx, u(NONE)), Node.let_bind(active, u(1)),
        Node.if_then(Expr.lt(start, end), [Node.loop_for(scan, start, end, [
            Node.let_bind(tok, Expr.load(tok_types, v(scan))),
            Node.if_then(hit, [Node.assign(out_tok, v(tok)), Node.assign(out_idx, v(scan)),
                               Node.assign(active, u(0))])])]),
    ]


def brace_scope_nodes(tok_types: str, node: Expr) -> list[Node]:
    """walk.rs emit_brace_scope_resolution: assigns scope_id / scope_parent_id (declared by the caller)."""
    nodes = reverse_unmatched_lbrace_scan(tok_types, "scope_scan", "scan_idx", "scan_tok", "scope_depth",
                                          "scope_open", node)
    nodes.append(Node.if_then(Expr.ne(v("scope_open"), u(NONE)), [
        Node.assign("scope_id", Expr.add(v("scope_open"), u(1))),
        Node.let_bind("scope_parent_open", u(NONE)),
        Node.let_bind("scope_parent_depth", u(0)),
        Node.if_then(Expr.gt(v("scope_open"), u(0)), reverse_unmatched_lbrace_scan(
            tok_types, "scope_parent_scan", "scope_parent_idx", "scope_parent_tok", "scope_parent_depth",
            "scope_parent_open", v("scope_open"))),
        Node.if_then(Expr.ne(v("scope_parent_open"), u(NONE)),
                     [Node.assign("scope_parent_id", Expr.add(v("scope_parent_open"), u(1)))]),
    ]))
    nodes.append(Node.if_then(Expr.eq(v("scope_open"), u(NONE)),
                              [Node.assign("scope_id", u(0)), Node.assign("scope_parent_id", u(0))]))
    return nodes


def _parameter_scope_boundary(tok_types: str, node: Expr, n: Expr) -> list[Node]:
    nodes = [Node.let_bind("fn_param_scope_open", u(NONE))]
    nodes += post_paren_boundary_scan(tok_types, "fn_param_boundary_scan", "fn_param_boundary_tok",
                                      "fn_param_boundary_active", v("fn_param_rparen"), n,
                                      "fn_param_boundary_found_tok", "fn_param_boundary_found_idx")
    pending = Expr.or_(Expr.or_(Expr.eq(Expr.load(tok_types, node), u(T.TOK_LBRACE)),
                                Expr.eq(v("fn_param_parent_pending_brace"), u(1))),
                       Expr.eq(v("fn_param_parent_pending_close"), u(1)))
    nodes += [
        Node.if_then(Expr.ne(v("fn_param_boundary_found_tok"), u(NONE)), [Node.if_then_else(
            Expr.eq(v("fn_param_boundary_found_tok"), u(T.TOK_LBRACE)),
            [Node.assign("fn_param_scope_open", v("fn_param_boundary_found_idx"))],
            [Node.assign("fn_param_scope_open", v("fn_param_lparen"))])]),
        Node.if_then(Expr.ne(v("fn_param_scope_open"), u(NONE)), [
            Node.let_bind("fn_param_parent_scope_id", v("scope_id")),
            Node.let_bind("fn_param_parent_pending_brace", u(0)),
            Node.let_bind("fn_param_parent_pending_close", u(0)),
            Node.let_bind("fn_param_parent_scan_start", Expr.add(node, u(1))),
            Node.if_then(Expr.lt(v("fn_param_parent_scan_start"), v("fn_param_scope_open")), [Node.loop_for(
                "fn_param_parent_scan", v("fn_param_parent_scan_start"), v("fn_param_scope_open"), [
                    Node.let_bind("fn_param_parent_scan_tok", Expr.load(tok_types, v("fn_param_parent_scan"))),
                    Node.if_then(_is("fn_param_parent_scan_tok", T.TOK_LBRACE),
                                 [Node.assign("fn_param_parent_pending_brace", u(1))]),
                    Node.if_then(_is("fn_param_parent_scan_tok", T.TOK_RBRACE),
                                 [Node.assign("fn_param_parent_pending_close", u(1))])])]),
            Node.if_then(pending, [Node.assign("fn_param_parent_scope_id", v("scope_parent_id"))]),
            Node.assign("scope_id", Expr.add(v("fn_param_scope_open"), u(1))),
            Node.assign("scope_parent_id", v("fn_param_parent_scope_id")),
        ]),
    ]
    return nodes


def function_parameter_scope_nodes(tok_types: str, node: Expr, n: Expr) -> list[Node]:
    """walk.rs emit_function_parameter_scope: a token inside ``name(...)`` of a function
    declarator gets the parameter scope (the body's ``{``, or the ``(`` of a prototype)."""
    left = Node.loop_for("fn_param_left_scan", u(0), node, [
        Node.let_bind("fn_param_left_idx", Expr.sub(Expr.sub(node, u(1)), v("fn_param_left_scan"))),
        Node.let_bind("fn_param_left_tok", Expr.load(tok_types, v("fn_param_left_idx"))),
        Node.if_then(_is("fn_param_left_tok", T.TOK_RPAREN),
                     [Node.assign("fn_param_depth", Expr.add(v("fn_param_depth"), u(1)))]),
        Node.if_then(Expr.eq(v("fn_param_lparen"), u(NONE)), [Node.if_then(_is("fn_param_left_tok", T.TOK_LPAREN), [
            Node.if_then_else(Expr.eq(v("fn_param_depth"), u(0)), [Node.assign("fn_param_lparen", v("fn_param_left_idx"))],
                              [Node.assign("fn_param_depth", Expr.sub(v("fn_param_depth"), u(1)))])])]),
    ])
    after = forward_matching_paren_scan(tok_types, "fn_param_right_scan", Expr.add(v("fn_param_lparen"), u(1)), n,
                                        "fn_param_right_tok", "fn_param_right_depth", "fn_param_rparen")
    after.append(Node.if_then(Expr.and_(Expr.ne(v("fn_param_rparen"), u(NONE)), Expr.lt(node, v("fn_param_rparen"))),
                              _parameter_scope_boundary(tok_types, node, n)))
    # `fn_param_lparen > 0` also holds when none was found (u32::MAX): the name load is then out
    # of bounds (0, not an identifier), as in vyre
    return [
        Node.let_bind("fn_param_lparen", u(NONE)), Node.let_bind("fn_param_depth", u(0)), left,
        Node.if_then(Expr.gt(v("fn_param_lparen"), u(0)), [
            Node.let_bind("fn_param_name_idx", Expr.sub(v("fn_param_lparen"), u(1))),
            Node.let_bind("fn_param_name_tok", Expr.load(tok_types, v("fn_param_name_idx"))),
            Node.let_bind("fn_param_prefix_tok", u(0)),
            Node.if_then(Expr.gt(v("fn_param_name_idx"), u(0)), [
                Node.assign("fn_param_prefix_tok", Expr.load(tok_types, Expr.sub(v("fn_param_name_idx"), u(1))))]),
            Node.if_then(Expr.and_(_is("fn_param_name_tok", T.TOK_IDENTIFIER),
                                   is_any(v("fn_param_prefix_tok"), FUNCTION_NAME_PREFIX)), after),
        ]),
    ]


def identifier_intern_nodes(tok_starts: str, tok_lens: str, haystack: str, node: Expr) -> list[Node]:
    """intern.rs: FNV-1a 32 of an identifier's source bytes (each haystack u32 taken whole, as
    vyre's unpacked load_source_byte does, then its low byte by the FNV update)."""
    return [
        Node.let_bind("identifier_intern_id", u(0)),
        Node.if_then(Expr.and_(_is("tok_type", T.TOK_IDENTIFIER), Expr.gt(Expr.load(tok_lens, node), u(0))), [
            Node.let_bind("start", Expr.load(tok_starts, node)),
            Node.let_bind("len", Expr.load(tok_lens, node)),
            Node.let_bind("hash", u(FNV1A32_OFFSET)),
            Node.loop_for("intern_scan", u(0), v("len"), [
                Node.let_bind("byte", Expr.load(haystack, Expr.add(v("start"), v("intern_scan")))),
                Node.assign("hash", Expr.mul(Expr.bitxor(v("hash"), Expr.bitand(v("byte"), u(0xFF))),
                                             u(FNV1A32_PRIME)))]),
            Node.assign("identifier_intern_id", v("hash")),
        ]),
    ]
