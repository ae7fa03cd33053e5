"""`vyre-libs::parsing::c_sema_scope` and its phase programs: a 4-word record per token,
``(scope_id, scope_parent_id, decl_kind, identifier_intern_id)`` (port of
vyre-libs/src/parsing/c/sema/registry.rs over walk.rs, scan.rs, lookup.rs and intern.rs).

Lane t < n (workgroup [256,1,1]) computes, by serial scans over the token types:

- brace scope (phase ``.scope.brace``): ``scope_id`` = 1 + the nearest ``{`` before t still open
  at t (0: file scope); ``scope_parent_id`` = 1 + the ``{`` enclosing that one (0: none);
- function parameters (``.scope.function_parameters``): when t lies inside ``name( ... )``
  (``name`` an identifier after a type/specifier token), the scope is the function's: 1 + the
  first ``{`` after the ``)`` (a definition), or 1 + the ``(`` when a ``;`` follows it (a
  prototype); the parent is the brace scope, or the brace parent when a brace lies between t and
  that scope's opener. ``.scope`` runs both, in that order;
- ``.decl``: label (``x:`` not after case/goto), none for tag names and struct/union members,
  enum constant, function definition / prototype / typedef (``name(...)``), typedef (after a
  ``typedef`` in the same declaration), variable (after a type, specifier or ``, ; ( ) *``);
- ``.identifier_intern``: FNV-1a 32 of the identifier's bytes ``haystack[start..start+len]``.

The phase programs run one phase alone and leave the other words 0 (function_parameters alone
starts from scope 0/0, not from the brace scope: vyre's standalone program, kept). Each lane's
scans are O(n), so the whole is O(n^2) steps.

Example::

    >>> p = c_sema_scope("tok_types", "tok_starts", "tok_lens", "haystack", 16, 14, "out_scope_tree")
    >>> [r.generator for r in p.entry[0].body[0].then]
    ['vyre-libs::parsing::c_sema_scope.scope', 'vyre-libs::parsing::c_sema_scope.decl', 'vyre-libs::parsing::c_sema_scope.identifier_intern']
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import OpParamError, register_case
from ...wire import pack_u32_slice
from ..c import tokens as T
from ..c.keyword import fnv1a32
from ..common import check_len, child_phase, non_composable, u, v, with_entry_op_id
from .decl_ir import declaration_lookup_nodes
from .scope_ir import (DECL_KIND_FUNCTION, DECL_KIND_LABEL, DECL_KIND_VARIABLE, NONE, brace_scope_nodes,
                       function_parameter_scope_nodes, identifier_intern_nodes)

OP_ID = "vyre-libs::parsing::c_sema_scope"
SCOPE = OP_ID + ".scope"
BRACE = OP_ID + ".scope.brace"
FN_PARAMS = OP_ID + ".scope.function_parameters"
DECL = OP_ID + ".decl"
INTERN = OP_ID + ".identifier_intern"
PHASES = (SCOPE, BRACE, FN_PARAMS, DECL, INTERN)
ULP = None  # u32 results: exact


def _scope_lets(full: bool) -> list[Node]:
    lets = [Node.let_bind("scope_id", u(0)), Node.let_bind("scope_parent_id", u(0))]
    return lets + ([Node.let_bind("scope_open", u(NONE)), Node.let_bind("scope_depth", u(0))] if full else [])


def _stores(out: str, t: Expr) -> list[Node]:
    return [Node.store(out, Expr.mul(t, u(4)), v("scope_id")),
            Node.store(out, Expr.add(Expr.mul(t, u(4)), u(1)), v("scope_parent_id"))]


def phase_body(phase: str, tok_types: str, tok_starts: str, tok_lens: str, haystack: str, n: Expr,
               out: str) -> list[Node]:
    """registry.rs c_sema_scope_phase_body: what `phase` runs for lane ``gid.x``."""
    t = Expr.gid_x()
    if phase == SCOPE:
        return ([Node.let_bind("tok_type", Expr.load(tok_types, t))] + _scope_lets(True)
                + [child_phase(SCOPE, BRACE, phase_body(BRACE, tok_types, tok_starts, tok_lens, haystack, n, out)),
                   child_phase(SCOPE, FN_PARAMS,
                               phase_body(FN_PARAMS, tok_types, tok_starts, tok_lens, haystack, n, out))]
                + _stores(out, t))
    if phase == BRACE:
        return brace_scope_nodes(tok_types, t)
    if phase == FN_PARAMS:
        return function_parameter_scope_nodes(tok_types, t, n)
    if phase == DECL:
        return ([Node.let_bind("tok_type", Expr.load(tok_types, t))] + declaration_lookup_nodes(t, n)
                + [Node.store(out, Expr.add(Expr.mul(t, u(4)), u(2)), v("decl_kind"))])
    return ([Node.let_bind("tok_type", Expr.load(tok_types, t))] + identifier_intern_nodes(tok_starts, tok_lens, haystack, t)
            + [Node.store(out, Expr.add(Expr.mul(t, u(4)), u(3)), v("identifier_intern_id"))])


def _buffers(tok_types: str, tok_starts: str, tok_lens: str, haystack: str, out: str, n: int,
             haystack_len: int) -> list[BufferDecl]:
    m = max(n, 1)
    return [BufferDecl.storage(tok_types, 0, BufferAccess.ReadOnly, DataType.U32).with_count(m),
            BufferDecl.storage(tok_starts, 1, BufferAccess.ReadOnly, DataType.U32).with_count(m),
            BufferDecl.storage(tok_lens, 2, BufferAccess.ReadOnly, DataType.U32).with_count(m),
            BufferDecl.storage(haystack, 3, BufferAccess.ReadOnly, DataType.U32).with_count(max(haystack_len, 1)),
            BufferDecl.output(out, 4, DataType.U32).with_count(max(4 * n, 1))]


def c_sema_scope(tok_types: str, tok_starts: str, tok_lens: str, haystack: str, haystack_len: int, num_tokens: int,
                 out_scope_tree: str) -> Program:
    """Scope (brace then function parameters), declaration kind and intern id of every token."""
    n = check_len(OP_ID, "num_tokens", num_tokens)
    hl = check_len(OP_ID, "haystack_len", haystack_len)
    args = (tok_types, tok_starts, tok_lens, haystack, u(n), out_scope_tree)
    phases = [child_phase(OP_ID, p, phase_body(p, *args)) for p in (SCOPE, DECL, INTERN)]
    program = Program.wrapped(_buffers(tok_types, tok_starts, tok_lens, haystack, out_scope_tree, n, hl), (256, 1, 1),
                              [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(Expr.gid_x(), u(n)), phases)])])
    return non_composable(with_entry_op_id(program, OP_ID))


def c_sema_scope_phase(phase: str, tok_types: str, tok_starts: str, tok_lens: str, haystack: str, haystack_len: int,
                       num_tokens: int, out_scope_tree: str) -> Program:
    """One phase alone (registry.rs c_sema_scope_phase); its Region is the phase's id."""
    if phase not in PHASES:
        raise OpParamError(f"c_sema_scope_phase: unknown phase {phase!r}. Fix: pass one of {', '.join(PHASES)}.")
    n = check_len(phase, "num_tokens", num_tokens)
    hl = check_len(phase, "haystack_len", haystack_len)
    t = Expr.gid_x()
    body = phase_body(phase, tok_types, tok_starts, tok_lens, haystack, u(n), out_scope_tree)
    if phase in (BRACE, FN_PARAMS):  # standalone: bind and store the scope words itself
        body = _scope_lets(phase == BRACE) + body + _stores(out_scope_tree, t)
    program = Program.wrapped(
        _buffers(tok_types, tok_starts, tok_lens, haystack, out_scope_tree, n, hl), (256, 1, 1),
        [wrap_anonymous(phase, [Node.if_then(Expr.lt(t, u(n)), [child_phase(phase, f"anonymous::{phase}.body", body)])])])
    return non_composable(with_entry_op_id(program, phase))


# vyre's witness: `int main() { int x; } label: goto label;` (14 tokens), names in a 16-byte haystack.
WITNESS_TOKENS = [T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_INT, T.TOK_IDENTIFIER,
                  T.TOK_SEMICOLON, T.TOK_RBRACE, T.TOK_IDENTIFIER, T.TOK_COLON, T.TOK_GOTO, T.TOK_IDENTIFIER,
                  T.TOK_SEMICOLON]
WITNESS_STARTS = [0, 0, 0, 0, 0, 4, 4, 0, 0, 5, 0, 0, 10, 0]
WITNESS_LENS = [0, 4, 0, 0, 0, 0, 1, 0, 0, 5, 0, 0, 5, 0]
WITNESS_HAYSTACK = list(b"mainxlabellabel") + [0]


def _witness_rows() -> list[list[int]]:
    """By hand from the rules: the body tokens 5..8 sit in the scope of the `{` at 4 (id 5);
    main is a function definition, x a variable, the first `label` a label; the goto's target
    is not a declaration."""
    scope = [0] * 5 + [5] * 4 + [0] * 5
    decl = {1: DECL_KIND_FUNCTION, 6: DECL_KIND_VARIABLE, 9: DECL_KIND_LABEL}
    rows = []
    for i in range(14):
        ident = WITNESS_TOKENS[i] == T.TOK_IDENTIFIER
        s, ln = WITNESS_STARTS[i], WITNESS_LENS[i]
        rows.append([scope[i], 0, decl.get(i, 0), fnv1a32(bytes(WITNESS_HAYSTACK[s:s + ln])) if ident and ln else 0])
    return rows


def witness_expected(columns: tuple[int, ...]) -> bytes:
    return pack_u32_slice([w if c in columns else 0 for row in _witness_rows() for c, w in enumerate(row)])


WITNESS_INPUTS = [pack_u32_slice(WITNESS_TOKENS), pack_u32_slice(WITNESS_STARTS), pack_u32_slice(WITNESS_LENS),
                  pack_u32_slice(WITNESS_HAYSTACK), bytes(14 * 16)]


WITNESS_NAMES = ("tok_types", "tok_starts", "tok_lens", "haystack", "out_scope_tree")


def _full(num_tokens: int = 14, haystack_len: int = 16) -> Program:
    return c_sema_scope(*WITNESS_NAMES[:4], haystack_len, num_tokens, WITNESS_NAMES[4])


def _phase_builder(phase: str):
    def build(num_tokens: int = 14, haystack_len: int = 16) -> Program:
        return c_sema_scope_phase(phase, "tok_types", "tok_starts", "tok_lens", "haystack", haystack_len, num_tokens,
                                  "out_scope_tree")
    build.__qualname__ = f"build[{phase}]"
    return build


_BENCH = dict(num_tokens=4096, haystack_len=1 << 15)
ENTRY = register_case(OP_ID, _full, WITNESS_INPUTS, [witness_expected((0, 1, 2, 3))], category="parsing", ulp=ULP,
                      bench=_BENCH)
PHASE_ENTRIES = {
    phase: register_case(phase, _phase_builder(phase), WITNESS_INPUTS, [witness_expected(cols)], category="parsing",
                         ulp=ULP, bench=_BENCH)
    for phase, cols in ((SCOPE, (0, 1)), (BRACE, (0, 1)), (FN_PARAMS, ()), (DECL, (2,)), (INTERN, (3,)))}
