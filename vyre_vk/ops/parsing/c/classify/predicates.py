"""Token-class predicates and kind tables of the VAST classifier (ports of
vyre-libs/src/parsing/c/parse/vast/helpers: tokens.rs, decl.rs, gnu.rs and the parts of expr.rs
the classifier uses). Each returns an IR expression over kind / flag / hash expressions.

Set membership is vyre's shape: the sorted distinct values merged into inclusive runs, one
``==`` or ``lo <= x <= hi`` per run, OR-ed as a balanced tree (so SENTINEL in a set is one more
equality and never widens a run).

Example::

    >>> any_token_eq(Expr.var("k"), [12, 10, 11, 0xFFFFFFFF]).op.name
    'Or'
    >>> len(_catalog_groups()), _catalog_groups()[0][1][:1] == [fnv1a32(b"__builtin_constant_p")]
    (25, True)
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .....ir import Expr
from ...common import u
from ...sema import vast_kinds as K
from .. import tokens as T
from ..keyword import fnv1a32
from ..structure import merged_ranges
from .catalog import ATTRIBUTE_HASHES, AUTO_TYPE_HASH, BUILTIN_CATALOG, LEGACY_BUILTINS, TYPEOF_HASHES

SENTINEL = 0xFFFFFFFF
C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME = 1


def balanced_or(exprs: Sequence[Expr]) -> Expr:
    """Pairwise OR, level by level (false for no terms)."""
    level = list(exprs)
    if not level:
        return Expr.bool(False)
    while len(level) > 1:
        level = [Expr.or_(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return level[0]


def all_of(*exprs: Expr) -> Expr:
    """Left-nested AND of the terms (shorthand; a conjunction's value does not depend on shape)."""
    out = exprs[0]
    for e in exprs[1:]:
        out = Expr.and_(out, e)
    return out


def any_of(*exprs: Expr) -> Expr:
    out = exprs[0]
    for e in exprs[1:]:
        out = Expr.or_(out, e)
    return out


def any_token_eq(token: Expr, values: Sequence[int]) -> Expr:
    return balanced_or([Expr.eq(token, u(lo)) if lo == hi else Expr.and_(Expr.ge(token, u(lo)), Expr.le(token, u(hi)))
                        for lo, hi in merged_ranges(values)])


def select_chain(cases: Sequence[tuple[Expr, Expr]], fallback: Expr) -> Expr:
    """``select(c0, v0, select(c1, v1, ... fallback))``: the first true case wins."""
    out = fallback
    for cond, value in reversed(cases):
        out = Expr.select(cond, value, out)
    return out


def is_c_literal_token(token: Expr) -> Expr:
    return any_token_eq(token, [T.TOK_INTEGER, T.TOK_FLOAT, T.TOK_STRING, T.TOK_CHAR])


_STATEMENTS = ((T.TOK_IF, K.C_AST_KIND_IF_STMT), (T.TOK_ELSE, K.C_AST_KIND_ELSE_STMT),
               (T.TOK_SWITCH, K.C_AST_KIND_SWITCH_STMT), (T.TOK_CASE, K.C_AST_KIND_CASE_STMT),
               (T.TOK_DEFAULT, K.C_AST_KIND_DEFAULT_STMT), (T.TOK_FOR, K.C_AST_KIND_FOR_STMT),
               (T.TOK_WHILE, K.C_AST_KIND_WHILE_STMT), (T.TOK_DO, K.C_AST_KIND_DO_STMT),
               (T.TOK_RETURN, K.C_AST_KIND_RETURN_STMT), (T.TOK_BREAK, K.C_AST_KIND_BREAK_STMT),
               (T.TOK_CONTINUE, K.C_AST_KIND_CONTINUE_STMT), (T.TOK_GOTO, K.C_AST_KIND_GOTO_STMT))


def c_statement_kind(token: Expr) -> Expr:
    """The statement kind of a statement keyword, else 0."""
    return select_chain([(Expr.eq(token, u(tok)), u(kind)) for tok, kind in _STATEMENTS], u(0))


# ---------------------------------------------------------------- declarations (decl.rs)
_FLOAT_EXT_KW = [T.TOK_BITINT_KW, T.TOK_FLOAT16_KW, T.TOK_FLOAT32_KW, T.TOK_FLOAT64_KW, T.TOK_FLOAT128_KW,
                 T.TOK_GNU_FLOAT128_KW, T.TOK_GNU_BF16_KW, T.TOK_GNU_FP16_KW, T.TOK_DECIMAL32_KW,
                 T.TOK_DECIMAL64_KW, T.TOK_DECIMAL128_KW]
_SCALAR_KW = [T.TOK_CONST, T.TOK_RESTRICT, T.TOK_VOLATILE, T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM, T.TOK_VOID,
              T.TOK_CHAR_KW, T.TOK_INT, T.TOK_LONG, T.TOK_SHORT, T.TOK_SIGNED, T.TOK_UNSIGNED, T.TOK_FLOAT_KW,
              T.TOK_DOUBLE, T.TOK_BOOL, T.TOK_COMPLEX, T.TOK_IMAGINARY]
#: Kinds that may begin a type name (casts, compound literals, sizeof operands).
TYPE_NAME_START_TOKENS = _SCALAR_KW + [T.TOK_ATOMIC, T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_INT128,
                                       T.TOK_GNU_BUILTIN_VA_LIST] + _FLOAT_EXT_KW
#: Kinds that make the tokens after them (up to a reset) a declaration's declarators.
DECL_PREFIX_TOKENS = ([T.TOK_TYPEDEF, T.TOK_EXTERN, T.TOK_STATIC, T.TOK_INLINE] + _SCALAR_KW
                      + [T.TOK_ALIGNAS, T.TOK_ATOMIC, T.TOK_NORETURN, T.TOK_STATIC_ASSERT, T.TOK_THREAD_LOCAL,
                         T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_AUTO_TYPE, T.TOK_GNU_INT128,
                         T.TOK_GNU_BUILTIN_VA_LIST, T.TOK_GNU_ADDRESS_SPACE, T.TOK_GNU_EXTENSION]
                      + _FLOAT_EXT_KW + [T.TOK_FORCEINLINE_KW])
DECL_PREFIX_RESET_TOKENS = [T.TOK_SEMICOLON, T.TOK_LBRACE, T.TOK_RBRACE, T.TOK_ASSIGN, T.TOK_COLON]
AGGREGATE_TOKENS = [T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM]


def is_type_name_start_token(token: Expr) -> Expr:
    return any_token_eq(token, TYPE_NAME_START_TOKENS)


def is_decl_prefix_token(token: Expr) -> Expr:
    return any_token_eq(token, DECL_PREFIX_TOKENS)


def is_decl_prefix_token_or_gnu_type_hash(token: Expr, symbol_hash: Expr) -> Expr:
    """A declaration-prefix keyword, a ``typeof`` spelled as an identifier, or ``__auto_type``."""
    return Expr.or_(is_decl_prefix_token(token), Expr.or_(
        is_typeof_operator_token(token, symbol_hash),
        Expr.and_(Expr.eq(token, u(T.TOK_IDENTIFIER)), is_gnu_auto_type_symbol_hash(symbol_hash))))


def is_decl_prefix_reset_token(token: Expr) -> Expr:
    return any_token_eq(token, DECL_PREFIX_RESET_TOKENS)


def is_typedef_name_annotation(flags: Expr) -> Expr:
    return Expr.ne(Expr.bitand(flags, u(C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME)), u(0))


def is_type_name_identifier(flags: Expr, fallback_has_prior_typedef: Expr) -> Expr:
    return Expr.or_(is_typedef_name_annotation(flags), fallback_has_prior_typedef)


def is_aggregate_specifier_body_open(open_kind: Expr, prev_kind: Expr, prev_prev_kind: Expr) -> Expr:
    """``{`` right after ``struct``/``union``/``enum`` or after their tag name."""
    return Expr.and_(Expr.eq(open_kind, u(T.TOK_LBRACE)), Expr.or_(
        any_token_eq(prev_kind, AGGREGATE_TOKENS),
        Expr.and_(Expr.eq(prev_kind, u(T.TOK_IDENTIFIER)), any_token_eq(prev_prev_kind, AGGREGATE_TOKENS))))


# ---------------------------------------------------------------- GNU spellings by hash (gnu.rs)
def is_gnu_typeof_symbol_hash(symbol_hash: Expr) -> Expr:
    return balanced_or([Expr.eq(symbol_hash, u(h)) for h in TYPEOF_HASHES])


def is_typeof_operator_token(token: Expr, symbol_hash: Expr) -> Expr:
    return Expr.or_(Expr.or_(Expr.eq(token, u(T.TOK_GNU_TYPEOF)), Expr.eq(token, u(T.TOK_GNU_TYPEOF_UNQUAL))),
                    Expr.and_(Expr.eq(token, u(T.TOK_IDENTIFIER)), is_gnu_typeof_symbol_hash(symbol_hash)))


def is_gnu_auto_type_symbol_hash(symbol_hash: Expr) -> Expr:
    return Expr.eq(symbol_hash, u(AUTO_TYPE_HASH))


def _attribute_kind(symbol_hash: Expr, entries: Sequence[tuple[int, int]]) -> Expr:
    """Binary split of the table: select(hash in left half, left lookup, right lookup)."""
    if not entries:
        return u(0)
    if len(entries) == 1:
        (h, kind), = entries
        return Expr.select(Expr.eq(symbol_hash, u(h)), u(kind), u(0))
    left, right = entries[:len(entries) // 2], entries[len(entries) // 2:]
    return Expr.select(balanced_or([Expr.eq(symbol_hash, u(h)) for h, _ in left]),
                       _attribute_kind(symbol_hash, left), _attribute_kind(symbol_hash, right))


def c_attribute_kind_from_hash(symbol_hash: Expr) -> Expr:
    """The attribute kind of a GNU attribute name's hash, else 0."""
    return _attribute_kind(symbol_hash, ATTRIBUTE_HASHES)


# ---------------------------------------------------------------- expressions (expr.rs)
_ASSIGN_OPS = [T.TOK_ASSIGN, T.TOK_PLUS_EQ, T.TOK_MINUS_EQ, T.TOK_STAR_EQ, T.TOK_SLASH_EQ, T.TOK_PERCENT_EQ,
               T.TOK_AMP_EQ, T.TOK_PIPE_EQ, T.TOK_CARET_EQ, T.TOK_LSHIFT_EQ, T.TOK_RSHIFT_EQ]
_BINARY_OPS = [T.TOK_PLUS, T.TOK_MINUS, T.TOK_STAR, T.TOK_SLASH, T.TOK_PERCENT, T.TOK_AMP, T.TOK_PIPE, T.TOK_CARET,
               T.TOK_EQ, T.TOK_NE, T.TOK_LE, T.TOK_GE, T.TOK_AND, T.TOK_OR, T.TOK_LSHIFT, T.TOK_RSHIFT, T.TOK_LT,
               T.TOK_GT]
_UNARY_OPS = [T.TOK_STAR, T.TOK_AMP, T.TOK_PLUS, T.TOK_MINUS, T.TOK_BANG, T.TOK_TILDE, T.TOK_GNU_REAL,
              T.TOK_GNU_IMAG]
#: Kinds after which an operator is prefix (unary): openers, separators, operators, return/case.
UNARY_CONTEXT_TOKENS = ([T.TOK_LPAREN, T.TOK_LBRACKET, T.TOK_LBRACE, T.TOK_SEMICOLON, T.TOK_COMMA] + _ASSIGN_OPS
                        + [T.TOK_QUESTION, T.TOK_COLON, T.TOK_RETURN, T.TOK_CASE, T.TOK_SIZEOF, T.TOK_GNU_TYPEOF,
                           T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_ALIGNOF, T.TOK_PLUS, T.TOK_MINUS, T.TOK_STAR,
                           T.TOK_SLASH, T.TOK_PERCENT, T.TOK_AMP, T.TOK_PIPE, T.TOK_CARET, T.TOK_BANG, T.TOK_TILDE,
                           T.TOK_EQ, T.TOK_NE, T.TOK_LE, T.TOK_GE, T.TOK_AND, T.TOK_OR, T.TOK_LSHIFT,
                           T.TOK_RSHIFT, T.TOK_LT, T.TOK_GT])


def c_unary_context(prev_kind: Expr) -> Expr:
    """No previous sibling (SENTINEL) or one after which an operator is prefix."""
    return Expr.or_(Expr.eq(prev_kind, u(SENTINEL)), any_token_eq(prev_kind, UNARY_CONTEXT_TOKENS))


def c_can_end_expression(prev_kind: Expr) -> Expr:
    return Expr.or_(Expr.or_(Expr.eq(prev_kind, u(T.TOK_IDENTIFIER)), is_c_literal_token(prev_kind)),
                    any_token_eq(prev_kind, [T.TOK_RPAREN, T.TOK_RBRACKET, T.TOK_INC, T.TOK_DEC]))


def c_effective_expression_prev_kind(prev_kind: Expr, prev_prev_kind: Expr) -> Expr:
    """A ``(`` after sizeof/alignof/typeof counts as a ``)`` (a finished operand)."""
    operand = Expr.and_(Expr.eq(prev_kind, u(T.TOK_LPAREN)), any_token_eq(
        prev_prev_kind, [T.TOK_SIZEOF, T.TOK_ALIGNOF, T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL]))
    return Expr.select(operand, u(T.TOK_RPAREN), prev_kind)


def c_expression_operator_kind(token: Expr, prev_kind: Expr, prev_prev_kind: Expr) -> Expr:
    """Assign / member access / subscript / sizeof / alignof / conditional / unary / binary kind of
    an operator token by its previous siblings, else 0."""
    prev = c_effective_expression_prev_kind(prev_kind, prev_prev_kind)
    unary = c_unary_context(prev)
    is_unary = Expr.or_(Expr.and_(unary, Expr.or_(Expr.eq(token, u(T.TOK_INC)), Expr.eq(token, u(T.TOK_DEC)))),
                        Expr.and_(unary, any_token_eq(token, _UNARY_OPS)))
    return select_chain([
        (any_token_eq(token, _ASSIGN_OPS), u(K.C_AST_KIND_ASSIGN_EXPR)),
        (Expr.or_(Expr.eq(token, u(T.TOK_DOT)), Expr.eq(token, u(T.TOK_ARROW))), u(K.C_AST_KIND_MEMBER_ACCESS_EXPR)),
        (Expr.and_(Expr.eq(token, u(T.TOK_LBRACKET)), c_can_end_expression(prev)),
         u(K.C_AST_KIND_ARRAY_SUBSCRIPT_EXPR)),
        (Expr.or_(Expr.eq(token, u(T.TOK_SIZEOF)), Expr.or_(Expr.eq(token, u(T.TOK_GNU_TYPEOF)),
                                                            Expr.eq(token, u(T.TOK_GNU_TYPEOF_UNQUAL)))),
         u(K.C_AST_KIND_SIZEOF_EXPR)),
        (Expr.eq(token, u(T.TOK_ALIGNOF)), u(K.C_AST_KIND_ALIGNOF_EXPR)),
        (Expr.eq(token, u(T.TOK_QUESTION)), u(K.C_AST_KIND_CONDITIONAL_EXPR)),
        (is_unary, u(K.C_AST_KIND_UNARY_EXPR)),
        (Expr.and_(Expr.not_(unary), any_token_eq(token, _BINARY_OPS)), u(K.BINARY)),
    ], u(0))


_BUILTIN_TOKENS = ((T.TOK_BUILTIN_CONSTANT_P, K.C_AST_KIND_BUILTIN_CONSTANT_P_EXPR),
                   (T.TOK_BUILTIN_CHOOSE_EXPR, K.C_AST_KIND_BUILTIN_CHOOSE_EXPR),
                   (T.TOK_BUILTIN_TYPES_COMPATIBLE_P, K.C_AST_KIND_BUILTIN_TYPES_COMPATIBLE_P_EXPR),
                   (T.TOK_GENERIC, K.C_AST_KIND_GENERIC_SELECTION_EXPR),
                   (T.TOK_ELLIPSIS, K.C_AST_KIND_RANGE_DESIGNATOR_EXPR))


def c_builtin_expression_kind(token: Expr) -> Expr:
    """The kind of a builtin keyword token (``_Generic``, ``...`` as a range designator), else 0."""
    return select_chain([(Expr.eq(token, u(tok)), u(kind)) for tok, kind in _BUILTIN_TOKENS], u(0))


@lru_cache(maxsize=1)
def _catalog_groups() -> tuple[tuple[int, list[int]], ...]:
    return tuple((kind, [fnv1a32(n.encode()) for n in names]) for kind, names in BUILTIN_CATALOG)


def c_gnu_builtin_catalog_kind_from_hash(symbol_hash: Expr, fallback: Expr) -> Expr:
    """The catalog kind of a builtin name's hash (kinds tried in catalog order), else `fallback`."""
    return select_chain([(balanced_or([Expr.eq(symbol_hash, u(h)) for h in hashes]), u(kind))
                         for kind, hashes in _catalog_groups()], fallback)


def c_builtin_identifier_expression_kind(raw_kind: Expr, symbol_hash: Expr, next_kind: Expr) -> Expr:
    """For an identifier followed by ``(``: sizeof for a ``typeof`` spelling, else its catalog kind,
    else its legacy builtin kind, else 0."""
    legacy = select_chain([(Expr.eq(symbol_hash, u(fnv1a32(n.encode()))), u(kind)) for n, kind in LEGACY_BUILTINS],
                          u(0))
    return Expr.select(
        Expr.and_(Expr.eq(raw_kind, u(T.TOK_IDENTIFIER)), Expr.eq(next_kind, u(T.TOK_LPAREN))),
        Expr.select(is_gnu_typeof_symbol_hash(symbol_hash), u(K.C_AST_KIND_SIZEOF_EXPR),
                    c_gnu_builtin_catalog_kind_from_hash(symbol_hash, legacy)),
        u(0))
