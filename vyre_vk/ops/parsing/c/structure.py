"""What vyre's C structure extractors share (port of vyre-libs/src/parsing/c/parse/structure/
threaded.rs, predicates.rs, body_scan.rs and caller_lookup.rs): the per-token context lets, the
function-prefix token class, the forward scan for a body's ``{``, the enclosing-function lookup
and the sparse record layout (record ``t`` at ``out[t * words ..]``, zeroed first, and the count
word set to ``num_tokens * words`` whatever matched).

The program shape is vyre's ``threaded_structure_program``: workgroup [256,1,1], lane
``t = workgroup.x * 256 + local.x``, the zeroing prologue, a SeqCst barrier, then the guarded body.

Example::

    >>> sparse_store_order(3), sparse_store_order(4)
    ([0, 2, 1], [0, 1, 2, 3])
"""
from __future__ import annotations

from typing import Sequence

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..common import non_composable, u, v, with_entry_op_id
from . import tokens as T

MATCH_NONE = 0xFFFFFFFF
STRUCTURE_WORKGROUP_SIZE = 256
U32 = DataType.U32

#: predicates.rs function_prefix_token: the kinds that may stand right before a function's name.
FUNCTION_PREFIX_TOKENS: frozenset[int] = frozenset((
    T.TOK_AUTO, T.TOK_ATOMIC, T.TOK_BOOL, T.TOK_CHAR_KW, T.TOK_COMPLEX, T.TOK_CONST, T.TOK_DOUBLE, T.TOK_ENUM,
    T.TOK_EXTERN, T.TOK_FLOAT_KW, T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_IDENTIFIER, T.TOK_IMAGINARY,
    T.TOK_INLINE, T.TOK_INT, T.TOK_GNU_INT128, T.TOK_LONG, T.TOK_REGISTER, T.TOK_RESTRICT, T.TOK_SHORT,
    T.TOK_SIGNED, T.TOK_STATIC, T.TOK_STAR, T.TOK_STRUCT, T.TOK_THREAD_LOCAL, T.TOK_TYPEDEF, T.TOK_UNION,
    T.TOK_UNSIGNED, T.TOK_VOID, T.TOK_VOLATILE, T.TOK_BITINT_KW, T.TOK_FLOAT16_KW, T.TOK_FLOAT32_KW,
    T.TOK_FLOAT64_KW, T.TOK_FLOAT128_KW, T.TOK_GNU_FLOAT128_KW, T.TOK_GNU_BF16_KW, T.TOK_GNU_FP16_KW,
    T.TOK_DECIMAL32_KW, T.TOK_DECIMAL64_KW, T.TOK_DECIMAL128_KW, T.TOK_FORCEINLINE_KW))


def merged_ranges(values: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted distinct `values` as inclusive runs of consecutive integers."""
    ranges: list[tuple[int, int]] = []
    for value in sorted(set(values)):
        if ranges and ranges[-1][1] + 1 == value:
            ranges[-1] = (ranges[-1][0], value)
        else:
            ranges.append((value, value))
    return ranges


def expr_is_any(token: Expr, candidates: Sequence[int]) -> Expr:
    """``token`` in `candidates`, as an OR of equalities and ``lo <= token <= hi`` runs (vyre's
    shape: fewer comparisons than one equality per kind)."""
    terms = [Expr.eq(token, u(lo)) if lo == hi else Expr.and_(Expr.ge(token, u(lo)), Expr.le(token, u(hi)))
             for lo, hi in merged_ranges(candidates)]
    if not terms:
        return u(0)
    out = terms[0]
    for term in terms[1:]:
        out = Expr.or_(out, term)
    return out


def function_prefix_token(token: Expr) -> Expr:
    return expr_is_any(token, sorted(FUNCTION_PREFIX_TOKENS))


def _load_if(cond: Expr, name: str, buffer: str, index: Expr) -> Node:
    return Node.if_then(cond, [Node.assign(name, Expr.load(buffer, index))])


def token_context(tok_types: str, paren_pairs: str, n: Expr, t: Expr, *, prev_prev: bool = False,
                  next2: bool = False, before_wrapper: bool = False, wrapper_rparen: bool = False,
                  after_wrapper: bool = False) -> list[Node]:
    """threaded.rs ``emit_token_context``: the lets each extractor reads around token `t`
    (missing neighbours read as 0 / TOK_EOF / MATCH_NONE, as vyre binds them)."""
    nodes = [
        Node.let_bind("tok_type", Expr.load(tok_types, t)),
        Node.let_bind("prev_type", u(0)),
        _load_if(Expr.gt(t, u(0)), "prev_type", tok_types, Expr.sub(t, u(1))),
        Node.let_bind("next_type", Expr.load(tok_types, Expr.add(t, u(1)))),
        Node.let_bind("matching_rparen", Expr.load(paren_pairs, Expr.add(t, u(1)))),
    ]
    t2 = Expr.add(t, u(2))
    if prev_prev:
        nodes += [Node.let_bind("prev_prev_type", u(0)),
                  _load_if(Expr.gt(t, u(1)), "prev_prev_type", tok_types, Expr.sub(t, u(2)))]
    if next2:
        nodes += [Node.let_bind("next2_type", u(0)), Node.let_bind("numeric_suffix_rparen", u(MATCH_NONE)),
                  Node.if_then(Expr.lt(t2, n), [Node.assign("next2_type", Expr.load(tok_types, t2)),
                                                Node.assign("numeric_suffix_rparen", Expr.load(paren_pairs, t2))])]
    if before_wrapper:
        nodes += [Node.let_bind("before_wrapper_type", u(T.TOK_EOF)),
                  _load_if(Expr.gt(t, u(1)), "before_wrapper_type", tok_types, Expr.sub(t, u(2)))]
    if wrapper_rparen:
        nodes += [Node.let_bind("parenthesized_wrapper_rparen", u(MATCH_NONE)),
                  _load_if(Expr.gt(t, u(0)), "parenthesized_wrapper_rparen", paren_pairs, Expr.sub(t, u(1)))]
    if after_wrapper:
        nodes += [Node.let_bind("after_wrapper_type", u(T.TOK_EOF)),
                  Node.let_bind("after_wrapper_rparen", u(MATCH_NONE)),
                  Node.if_then(Expr.lt(t2, n), [Node.assign("after_wrapper_type", Expr.load(tok_types, t2)),
                                                Node.assign("after_wrapper_rparen", Expr.load(paren_pairs, t2))])]
    return nodes


def body_open_scan(tok_types: str, start: Expr, n: Expr, out_var: str) -> list[Node]:
    """body_scan.rs: `out_var` = the first ``{`` at paren and bracket depth 0 in
    ``tok_types[start..n]`` before a depth-0 ``;`` (else MATCH_NONE). The loop always runs to `n`;
    an ``active`` flag stops it from looking further once it has an answer."""
    tok, active = v("body_open_tok"), flag("body_open_scan_active")
    pd, bd = v("body_open_paren_depth"), v("body_open_bracket_depth")
    at_top = Expr.and_(active, Expr.and_(Expr.eq(pd, u(0)), Expr.eq(bd, u(0))))

    def step(var: str, by: int) -> Node:
        op = Expr.add if by > 0 else Expr.sub
        return Node.assign(var, op(v(var), u(1)))
    body = [
        Node.let_bind("body_open_tok", Expr.load(tok_types, v("body_open_scan"))),
        Node.if_then(Expr.and_(at_top, Expr.eq(tok, u(T.TOK_LBRACE))), [
            Node.assign(out_var, v("body_open_scan")), Node.assign("body_open_scan_active", u(0))]),
        Node.if_then(Expr.and_(at_top, Expr.eq(tok, u(T.TOK_SEMICOLON))), [Node.assign("body_open_scan_active", u(0))]),
        Node.if_then(Expr.and_(active, Expr.eq(tok, u(T.TOK_LPAREN))), [step("body_open_paren_depth", 1)]),
        Node.if_then(Expr.and_(active, Expr.and_(Expr.gt(pd, u(0)), Expr.eq(tok, u(T.TOK_RPAREN)))),
                     [step("body_open_paren_depth", -1)]),
        Node.if_then(Expr.and_(active, Expr.eq(tok, u(T.TOK_LBRACKET))), [step("body_open_bracket_depth", 1)]),
        Node.if_then(Expr.and_(active, Expr.and_(Expr.gt(bd, u(0)), Expr.eq(tok, u(T.TOK_RBRACKET)))),
                     [step("body_open_bracket_depth", -1)]),
    ]
    return [
        Node.let_bind(out_var, u(MATCH_NONE)),
        Node.let_bind("body_open_start", start),
        Node.let_bind("body_open_scan_active", u(1)),
        Node.let_bind("body_open_paren_depth", u(0)),
        Node.let_bind("body_open_bracket_depth", u(0)),
        Node.if_then(Expr.lt(v("body_open_start"), n),
                     [Node.loop_for("body_open_scan", v("body_open_start"), n, body)]),
    ]


def flag(name: str) -> Expr:
    return Expr.eq(v(name), u(1))


def enclosing_function_lookup(functions: str, num_functions: Expr, t: Expr) -> list[Node]:
    """caller_lookup.rs: ``caller_id`` = the first function record whose body span
    ``[body_open, body_close]`` holds `t` (end loaded before start, as vyre does to keep a GPU
    backend from fusing the two into a misaligned vector load)."""
    base = v("fn_rec_base")
    return [
        Node.let_bind("caller_id", u(MATCH_NONE)),
        Node.loop_for("caller_fn_scan", u(0), num_functions, [
            Node.let_bind("fn_rec_base", Expr.mul(v("caller_fn_scan"), u(3))),
            Node.let_bind("fn_body_end", Expr.load(functions, Expr.add(base, u(2)))),
            Node.let_bind("fn_body_start", Expr.load(functions, Expr.add(base, u(1)))),
            Node.if_then(Expr.and_(Expr.eq(v("caller_id"), u(MATCH_NONE)), Expr.and_(
                Expr.ge(t, v("fn_body_start")), Expr.le(t, v("fn_body_end")))),
                [Node.assign("caller_id", v("caller_fn_scan"))]),
        ]),
    ]


def sparse_store_order(words: int) -> list[int]:
    """threaded.rs: odd record widths store even fields then odd ones (so no two adjacent stores
    fuse into a vector store the record stride cannot align); even widths store in order."""
    if words <= 2 or words % 2 == 0:
        return list(range(words))
    return list(range(0, words, 2)) + list(range(1, words, 2))


def _record_index(base: str, k: int) -> Expr:
    return v(base) if k == 0 else Expr.add(v(base), u(k))


def sparse_record_write(out: str, t: Expr, words: int, fields: Sequence[Expr]) -> list[Node]:
    base = "sparse_record_write_base"
    return [Node.let_bind(base, Expr.mul(t, u(words)))] + [
        Node.store(out, _record_index(base, k), fields[k]) for k in sparse_store_order(words) if k < len(fields)]


def sparse_output_init(out: str, counts: str, t: Expr, n: Expr, words: int) -> list[Node]:
    """Lane 0 sets ``counts[0] = n * words``; lane t < n zeroes record t; then a barrier."""
    base = "sparse_record_zero_base"
    return [
        Node.if_then(Expr.eq(t, u(0)), [Node.store(counts, u(0), Expr.mul(n, u(words)))]),
        Node.let_bind(base, Expr.mul(t, u(words))),
        Node.if_then(Expr.lt(t, n), [Node.store(out, _record_index(base, k), u(0)) for k in sparse_store_order(words)]),
        Node.barrier(),
    ]


def record_buffers(tok_types: str, paren_pairs: str, third: BufferDecl, out: str, words: int, tok_count: int,
                   counts: str) -> list[BufferDecl]:
    """Bindings 0..4: token kinds, paren pairs, the op's third input, the record output
    (``words * tok_count`` words, at least one record) and the count word."""
    return [BufferDecl.storage(tok_types, 0, BufferAccess.ReadOnly, U32).with_count(tok_count),
            BufferDecl.storage(paren_pairs, 1, BufferAccess.ReadOnly, U32).with_count(tok_count),
            third,
            BufferDecl.output(out, 3, U32).with_count(max(words * tok_count, words)),
            BufferDecl.storage(counts, 4, BufferAccess.ReadWrite, U32).with_count(1)]


def threaded_structure_program(op_id: str, buffers: list[BufferDecl], prologue: list[Node], guard: Expr,
                               body: list[Node]) -> Program:
    lane_body = [
        Node.let_bind("lane", Expr.local_x()),
        Node.let_bind("block", Expr.workgroup_x()),
        Node.let_bind("t", Expr.add(Expr.mul(v("block"), u(STRUCTURE_WORKGROUP_SIZE)), v("lane"))),
        *prologue,
        Node.if_then(guard, body),
    ]
    program = Program.wrapped(buffers, (STRUCTURE_WORKGROUP_SIZE, 1, 1), [wrap_anonymous(op_id, lane_body)])
    return non_composable(with_entry_op_id(program, op_id))
