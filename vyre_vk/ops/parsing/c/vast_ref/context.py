"""The context questions vyre's classify oracle asks about a VAST node (port of
vyre-libs/src/parsing/c/parse/vast/ref_typedef/{decl_context, expressions, scopes, asm_attributes,
identifiers}.rs): what the earlier siblings under the same parent declare, whether the enclosing
brace is a record/enum body or an initializer list, GNU asm/attribute positions.

vyre answers each by rescanning every earlier node; `ClassifyContext` runs each of those scans
once per parent (a state machine over the sibling list) and answers by bisection, which keeps the
oracle usable on whole headers. The per-scan rules are vyre's, step for step.

Example::

    >>> from vyre_vk.ops.parsing.c.vast import vast_rows
    >>> ctx = ClassifyContext(vast_rows([T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_SEMICOLON], [0, 4, 5], [3, 1, 1]))
    >>> ctx.decl_prefix_before(1, SENTINEL), ctx.decl_prefix_before(0, SENTINEL), ctx.prev_sibling(2, SENTINEL).kind
    (True, False, 1)
"""
from __future__ import annotations

from dataclasses import dataclass

from ...sema import vast_kinds as K
from .. import tokens as T
from .catalog import ATTRIBUTE_HASH_KINDS, GNU_AUTO_TYPE_HASH, TYPEOF_HASHES
from .rows import (C_TYPEDEF_FLAG_ORDINARY_DECLARATOR, C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME, SENTINEL, VastRows)

DECL_PREFIX_TOKENS = frozenset((
    T.TOK_TYPEDEF, T.TOK_EXTERN, T.TOK_STATIC, T.TOK_INLINE, T.TOK_CONST, T.TOK_RESTRICT, T.TOK_VOLATILE,
    T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM, T.TOK_VOID, T.TOK_CHAR_KW, T.TOK_INT, T.TOK_LONG, T.TOK_SHORT,
    T.TOK_SIGNED, T.TOK_UNSIGNED, T.TOK_FLOAT_KW, T.TOK_DOUBLE, T.TOK_BOOL, T.TOK_COMPLEX, T.TOK_IMAGINARY,
    T.TOK_ALIGNAS, T.TOK_ATOMIC, T.TOK_GNU_TYPEOF, T.TOK_GNU_AUTO_TYPE, T.TOK_GNU_EXTENSION, T.TOK_NORETURN,
    T.TOK_STATIC_ASSERT, T.TOK_THREAD_LOCAL, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_INT128,
    T.TOK_GNU_BUILTIN_VA_LIST, T.TOK_GNU_ADDRESS_SPACE))
TYPE_NAME_START_TOKENS = frozenset((
    T.TOK_CONST, T.TOK_VOLATILE, T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM, T.TOK_VOID, T.TOK_CHAR_KW, T.TOK_INT,
    T.TOK_LONG, T.TOK_SHORT, T.TOK_SIGNED, T.TOK_UNSIGNED, T.TOK_FLOAT_KW, T.TOK_DOUBLE, T.TOK_BOOL,
    T.TOK_COMPLEX, T.TOK_IMAGINARY, T.TOK_ATOMIC, T.TOK_RESTRICT, T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL,
    T.TOK_GNU_INT128, T.TOK_GNU_BUILTIN_VA_LIST))
DECL_PREFIX_RESET_TOKENS = frozenset((T.TOK_SEMICOLON, T.TOK_LBRACE, T.TOK_RBRACE, T.TOK_ASSIGN, T.TOK_COLON))
AGGREGATE_TOKENS = frozenset((T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM))
ASSIGNMENT_TOKENS = frozenset((
    T.TOK_ASSIGN, T.TOK_PLUS_EQ, T.TOK_MINUS_EQ, T.TOK_STAR_EQ, T.TOK_SLASH_EQ, T.TOK_PERCENT_EQ, T.TOK_AMP_EQ,
    T.TOK_PIPE_EQ, T.TOK_CARET_EQ, T.TOK_LSHIFT_EQ, T.TOK_RSHIFT_EQ))
BINARY_OPERATOR_TOKENS = frozenset((
    T.TOK_PLUS, T.TOK_MINUS, T.TOK_STAR, T.TOK_SLASH, T.TOK_PERCENT, T.TOK_AMP, T.TOK_PIPE, T.TOK_CARET,
    T.TOK_EQ, T.TOK_NE, T.TOK_LE, T.TOK_GE, T.TOK_AND, T.TOK_OR, T.TOK_LSHIFT, T.TOK_RSHIFT, T.TOK_LT, T.TOK_GT))
# A token after which `*`, `&`, `-`, ... are prefix operators (vyre's reference_c_unary_context).
UNARY_CONTEXT_TOKENS = frozenset((
    SENTINEL, T.TOK_LPAREN, T.TOK_LBRACKET, T.TOK_LBRACE, T.TOK_COMMA, *ASSIGNMENT_TOKENS, T.TOK_QUESTION,
    T.TOK_COLON, T.TOK_SEMICOLON, T.TOK_RETURN, T.TOK_CASE, T.TOK_SIZEOF, T.TOK_GNU_TYPEOF,
    T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_ALIGNOF, T.TOK_BANG, T.TOK_TILDE, *BINARY_OPERATOR_TOKENS))
EXPRESSION_END_TOKENS = frozenset((
    T.TOK_IDENTIFIER, T.TOK_INTEGER, T.TOK_FLOAT, T.TOK_STRING, T.TOK_CHAR, T.TOK_RPAREN, T.TOK_RBRACKET,
    T.TOK_INC, T.TOK_DEC))
STATEMENT_KINDS = {
    T.TOK_IF: K.C_AST_KIND_IF_STMT, T.TOK_ELSE: K.C_AST_KIND_ELSE_STMT, T.TOK_SWITCH: K.C_AST_KIND_SWITCH_STMT,
    T.TOK_CASE: K.C_AST_KIND_CASE_STMT, T.TOK_DEFAULT: K.C_AST_KIND_DEFAULT_STMT, T.TOK_FOR: K.C_AST_KIND_FOR_STMT,
    T.TOK_WHILE: K.C_AST_KIND_WHILE_STMT, T.TOK_DO: K.C_AST_KIND_DO_STMT, T.TOK_RETURN: K.C_AST_KIND_RETURN_STMT,
    T.TOK_BREAK: K.C_AST_KIND_BREAK_STMT, T.TOK_CONTINUE: K.C_AST_KIND_CONTINUE_STMT,
    T.TOK_GOTO: K.C_AST_KIND_GOTO_STMT}
BUILTIN_TOKEN_KINDS = {
    T.TOK_BUILTIN_CONSTANT_P: K.C_AST_KIND_BUILTIN_CONSTANT_P_EXPR,
    T.TOK_BUILTIN_CHOOSE_EXPR: K.C_AST_KIND_BUILTIN_CHOOSE_EXPR,
    T.TOK_BUILTIN_TYPES_COMPATIBLE_P: K.C_AST_KIND_BUILTIN_TYPES_COMPATIBLE_P_EXPR,
    T.TOK_GENERIC: K.C_AST_KIND_GENERIC_SELECTION_EXPR, T.TOK_ELLIPSIS: K.C_AST_KIND_RANGE_DESIGNATOR_EXPR}
NONE_AGGREGATE, RECORD, ENUM = 0, 1, 2


def is_typeof_operator(kind: int, symbol: int) -> bool:
    """A typeof keyword, or an identifier spelled typeof/__typeof__/... (by its hash)."""
    return kind in (T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL) or (kind == T.TOK_IDENTIFIER and symbol in TYPEOF_HASHES)


def is_typedef_name(flags: int, fallback_has_prior_typedef: bool) -> bool:
    """vyre's is_reference_typedef_name: the annotator's flag, or the no-annotation fallback."""
    return bool(flags & C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME) or fallback_has_prior_typedef


def expression_operator_kind(token: int, prev_kind: int, prev_prev_kind: int) -> int | None:
    """vyre's reference_c_expression_operator_kind: the operator kinds by token and what precedes it
    (a ``(`` right after sizeof/alignof/typeof counts as a closed operand)."""
    if prev_kind == T.TOK_LPAREN and prev_prev_kind in (T.TOK_SIZEOF, T.TOK_ALIGNOF, T.TOK_GNU_TYPEOF,
                                                        T.TOK_GNU_TYPEOF_UNQUAL):
        prev_kind = T.TOK_RPAREN
    unary = prev_kind in UNARY_CONTEXT_TOKENS
    if token in ASSIGNMENT_TOKENS:
        return K.C_AST_KIND_ASSIGN_EXPR
    if token in (T.TOK_DOT, T.TOK_ARROW):
        return K.C_AST_KIND_MEMBER_ACCESS_EXPR
    if token == T.TOK_LBRACKET and prev_kind in EXPRESSION_END_TOKENS:
        return K.C_AST_KIND_ARRAY_SUBSCRIPT_EXPR
    if token in (T.TOK_SIZEOF, T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL):
        return K.C_AST_KIND_SIZEOF_EXPR
    if token == T.TOK_ALIGNOF:
        return K.C_AST_KIND_ALIGNOF_EXPR
    if token == T.TOK_QUESTION:
        return K.C_AST_KIND_CONDITIONAL_EXPR
    if unary and token in (T.TOK_INC, T.TOK_DEC, T.TOK_STAR, T.TOK_AMP, T.TOK_PLUS, T.TOK_MINUS, T.TOK_BANG,
                           T.TOK_TILDE, T.TOK_GNU_REAL, T.TOK_GNU_IMAG):
        return K.C_AST_KIND_UNARY_EXPR
    if not unary and token in BINARY_OPERATOR_TOKENS:
        return K.BINARY
    return None


@dataclass(frozen=True)
class Sibling:
    """The last earlier node under the same parent (vyre's SiblingContext); SENTINEL when none."""
    idx: int = SENTINEL
    kind: int = SENTINEL
    prev_kind: int = SENTINEL
    flags: int = 0
    symbol: int = 0


class ClassifyContext(VastRows):
    """VAST rows plus vyre's per-parent scans, precomputed (see the module doc)."""

    def __init__(self, words: list[int]) -> None:
        super().__init__(words)
        self._parent_contexts: dict[int, int] = {}
        self.decl_prefix_after: dict[int, list[bool]] = {}     # decl_context_before, per sibling list
        self.init_prefix_after: dict[int, list[bool]] = {}     # declaration_initializer_prefix_before
        self.aggregate_after: dict[int, list[int]] = {}        # aggregate_prefix_before_open
        self.colons_after: dict[int, list[int]] = {}           # sibling_colons_before
        for parent, group in self.siblings.items():
            self._scan_group(parent, group)
        kinds, n = self.kinds, self.n
        self.has_annotations = any(self.flags_col)
        self.first_typedef = next((i for i, k in enumerate(kinds) if k == T.TOK_TYPEDEF), n)
        self.first_ordinary_flag = next(
            (i for i, f in enumerate(self.flags_col) if f & C_TYPEDEF_FLAG_ORDINARY_DECLARATOR), n)
        self.first_raw_ordinary = next((i for i in range(n) if self._raw_ordinary_decl(i)), n)
        # `( identifier ) x x ;`: vyre's prior_parenthesized_identifier_statement_seen pattern
        self.first_paren_ident_stmt = next(
            (i for i in range(max(n - 5, 0)) if kinds[i] == T.TOK_LPAREN and kinds[i + 1] == T.TOK_IDENTIFIER
             and kinds[i + 2] == T.TOK_RPAREN and kinds[i + 5] == T.TOK_SEMICOLON), n)

    def _scan_group(self, parent: int, group: list[int]) -> None:
        has_decl = has_init = False
        aggregate, colons, last, prev = NONE_AGGREGATE, 0, SENTINEL, SENTINEL
        decl, init, agg, col = [], [], [], []
        for i in group:
            k = self.kinds[i]
            body_open = k == T.TOK_LBRACE and (last in AGGREGATE_TOKENS or (
                last == T.TOK_IDENTIFIER and prev in AGGREGATE_TOKENS))
            if k in DECL_PREFIX_RESET_TOKENS:
                has_decl = False
            prefix = self.is_decl_prefix_at(i)
            visible_typedef = k == T.TOK_IDENTIFIER and self.flags_col[i] & C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME
            if prefix or body_open or visible_typedef:
                has_decl = True
            if k in (T.TOK_SEMICOLON, T.TOK_LBRACE, T.TOK_RBRACE):
                has_init = False
            if prefix:
                has_init = True
            if k in (T.TOK_STRUCT, T.TOK_UNION):
                aggregate = RECORD
            elif k == T.TOK_ENUM:
                aggregate = ENUM
            elif k in (T.TOK_SEMICOLON, T.TOK_ASSIGN, T.TOK_COMMA):
                aggregate = NONE_AGGREGATE
            colons += k == T.TOK_COLON
            decl.append(has_decl), init.append(has_init), agg.append(aggregate), col.append(colons)
            prev, last = last, k
        self.decl_prefix_after[parent], self.init_prefix_after[parent] = decl, init
        self.aggregate_after[parent], self.colons_after[parent] = agg, col

    def _state_before(self, table: dict, parent: int, idx: int, default):
        k = self.before(parent, idx)
        return table[parent][k - 1] if k else default

    # ---- identifiers (identifiers.rs)
    def is_decl_prefix_at(self, idx: int) -> bool:
        k, sym = self.kind(idx), self.symbol(idx)
        return (k in DECL_PREFIX_TOKENS or is_typeof_operator(k, sym)
                or (k == T.TOK_IDENTIFIER and sym == GNU_AUTO_TYPE_HASH))

    # ---- sibling scans (decl_context.rs, expressions.rs, asm_attributes.rs)
    def prev_sibling(self, idx: int, parent: int) -> Sibling:
        """The last node before `idx` whose parent word is `parent`, and the kind of the one before it."""
        k = self.before(parent, idx)
        if not k:
            return Sibling()
        group = self.siblings[parent]
        p = group[k - 1]
        return Sibling(p, self.kinds[p], self.kinds[group[k - 2]] if k >= 2 else SENTINEL, self.flags_col[p],
                       self.symbols[p])

    def decl_prefix_before(self, idx: int, parent: int) -> bool:
        """vyre's decl_context_before: a declaration specifier since the last ``; { } = :`` sibling."""
        return self._state_before(self.decl_prefix_after, parent, idx, False)

    def init_prefix_before(self, idx: int, parent: int) -> bool:
        """vyre's declaration_initializer_prefix_before (reset only by ``; { }``)."""
        return self._state_before(self.init_prefix_after, parent, idx, False)

    def colons_before(self, idx: int, parent: int) -> int:
        return self._state_before(self.colons_after, parent, idx, 0)

    def aggregate_before_open(self, open_idx: int, open_parent: int) -> int:
        return self._state_before(self.aggregate_after, open_parent, open_idx, NONE_AGGREGATE)

    def parent_context(self, parent: int) -> int:
        """RECORD / ENUM when `parent` is a ``{`` opened after struct/union or enum, else NONE_AGGREGATE."""
        if parent not in self._parent_contexts:
            ctx = NONE_AGGREGATE
            if parent < self.n and self.kinds[parent] == T.TOK_LBRACE:
                ctx = self.aggregate_before_open(parent, self.parents[parent])
            self._parent_contexts[parent] = ctx
        return self._parent_contexts[parent]

    def parenthesized_declarator(self, parent: int) -> bool:
        """vyre's parenthesized_declarator_context: up to 8 nested ``(`` whose outermost follows a
        declaration specifier (or a typeof)."""
        for _ in range(8):
            if parent >= self.n or self.kinds[parent] != T.TOK_LPAREN:
                return False
            grand = self.parents[parent]
            if self.decl_prefix_before(parent, grand):
                return True
            if grand < self.n and is_typeof_operator(self.kinds[grand], self.symbols[grand]):
                return True
            if grand >= self.n or self.kinds[grand] != T.TOK_LPAREN:
                return False
            parent = grand
        return False

    def suffix_function_boundary(self, start: int, max_steps: int = 16) -> int:
        """vyre's suffix_function_boundary_kind: walking next siblings from `start`, the first
        ``{``/``;``, or what follows the ``)`` that closes the walk's parent (or its parent's
        parent) when that is ``( [ ;``; SENTINEL when none within `max_steps`."""
        scan = start
        for _ in range(max_steps):
            if scan >= self.n:
                return SENTINEL
            k = self.kinds[scan]
            if k in (T.TOK_LBRACE, T.TOK_SEMICOLON):
                return k
            if k == T.TOK_RPAREN:
                after = self.next_sibling(self.parents[scan])
                if after < self.n:
                    after_kind = self.kinds[after]
                    if after_kind in (T.TOK_LPAREN, T.TOK_LBRACKET, T.TOK_SEMICOLON):
                        return after_kind
                    if after_kind == T.TOK_RPAREN:
                        outer = self.next_sibling(self.parents[after])
                        if outer < self.n and self.kinds[outer] in (T.TOK_LPAREN, T.TOK_LBRACKET, T.TOK_SEMICOLON):
                            return self.kinds[outer]
            scan = self.next_siblings[scan]
        return SENTINEL

    def brace_is_initializer_list(self, parent: int) -> bool:
        """vyre's enclosing_brace_is_initializer_list: a ``{`` after ``=`` or ``,``, or the first
        ``{`` inside such a brace."""
        if parent >= self.n or self.kinds[parent] != T.TOK_LBRACE:
            return False
        grand = self.parents[parent]
        prev = self.prev_sibling(parent, grand).kind
        if prev in (T.TOK_ASSIGN, T.TOK_COMMA):
            return True
        if prev != T.TOK_LBRACE or grand >= self.n or self.kinds[grand] != T.TOK_LBRACE:
            return False
        return self.prev_sibling(grand, self.parents[grand]).kind in (T.TOK_ASSIGN, T.TOK_COMMA, T.TOK_LBRACE)

    # ---- whole-stream facts before a node (expressions.rs)
    def prior_typedef(self, idx: int) -> bool:
        return self.first_typedef < idx

    def prior_ordinary_decl(self, idx: int) -> bool:
        return self.first_ordinary_flag < idx

    def prior_raw_ordinary_decl(self, idx: int) -> bool:
        return self.first_raw_ordinary < idx

    def prior_paren_ident_stmt(self, idx: int) -> bool:
        return self.first_paren_ident_stmt + 5 < idx

    def _raw_ordinary_decl(self, i: int) -> bool:
        """An identifier right after a non-typedef specifier and before ``; , = [``, outside
        record/enum bodies, in a declaration with no typedef (vyre's prior_raw_ordinary_decl_seen)."""
        if self.kinds[i] != T.TOK_IDENTIFIER or self.parent_context(self.parents[i]) != NONE_AGGREGATE:
            return False
        prev = self.kinds[i - 1] if i else SENTINEL
        nxt = self.kinds[i + 1] if i + 1 < self.n else SENTINEL
        return (prev in DECL_PREFIX_TOKENS and prev != T.TOK_TYPEDEF and not self._prefix_has_typedef(i)
                and nxt in (T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_LBRACKET))

    def _prefix_has_typedef(self, idx: int) -> bool:
        for i in range(idx - 1, -1, -1):
            k = self.kinds[i]
            if k == T.TOK_TYPEDEF:
                return True
            if k in DECL_PREFIX_RESET_TOKENS:
                return False
        return False

    # ---- for-init (scopes.rs)
    def c99_for_init_assign(self, raw_kind: int, parent: int, has_decl_prefix: bool) -> bool:
        """``=`` of a declaration inside ``for (`` (the ``(`` a child of ``for``, or after it in a block)."""
        if raw_kind != T.TOK_ASSIGN or not has_decl_prefix:
            return False
        if parent >= self.n or self.kinds[parent] != T.TOK_LPAREN:
            return False
        control_parent = self.parents[parent]
        if control_parent >= self.n:
            return False
        if self.kinds[control_parent] == T.TOK_FOR:
            return True
        return (self.kinds[control_parent] == T.TOK_LBRACE
                and self.prev_sibling(parent, control_parent).kind == T.TOK_FOR)

    # ---- GNU asm and attributes (asm_attributes.rs)
    def asm_prefix_before(self, idx: int, parent: int) -> bool:
        """The nearest earlier sibling that is not volatile/goto is ``asm``."""
        group = self.group(parent)
        for k in range(self.before(parent, idx) - 1, -1, -1):
            kind = self.kinds[group[k]]
            if kind == T.TOK_GNU_ASM:
                return True
            if kind not in (T.TOK_VOLATILE, T.TOK_GOTO):
                return False
        return False

    def asm_has_goto_before(self, idx: int, parent: int) -> bool:
        group, saw_goto = self.group(parent), False
        for k in range(self.before(parent, idx) - 1, -1, -1):
            kind = self.kinds[group[k]]
            if kind == T.TOK_GOTO:
                saw_goto = True
            elif kind == T.TOK_GNU_ASM:
                return saw_goto
            elif kind != T.TOK_VOLATILE:
                return False
        return False

    def asm_context_kind(self, idx: int, raw_kind: int, parent: int) -> int | None:
        """Template / operands / clobbers / goto labels of ``asm (...)`` by the colons before the node."""
        if parent >= self.n or self.kinds[parent] != T.TOK_LPAREN:
            return None
        grand = self.parents[parent]
        if not self.asm_prefix_before(parent, grand):
            return None
        colons = self.colons_before(idx, parent)
        prev = self.prev_sibling(idx, parent).kind
        if raw_kind == T.TOK_STRING and colons == 0:
            return K.C_AST_KIND_ASM_TEMPLATE
        if raw_kind == T.TOK_STRING and colons >= 3:
            return K.C_AST_KIND_ASM_CLOBBERS_LIST
        if raw_kind == T.TOK_LPAREN and prev == T.TOK_STRING and colons == 1:
            return K.C_AST_KIND_ASM_OUTPUT_OPERAND
        if raw_kind == T.TOK_LPAREN and prev == T.TOK_STRING and colons == 2:
            return K.C_AST_KIND_ASM_INPUT_OPERAND
        if raw_kind == T.TOK_IDENTIFIER and colons >= 4 and self.asm_has_goto_before(parent, grand):
            return K.C_AST_KIND_ASM_GOTO_LABELS
        return None

    def attribute_kind(self, idx: int, raw_kind: int, parent: int) -> int | None:
        """An identifier (or ``const``) inside ``__attribute__((...))``: its attribute kind
        (vyre's reference_c_attribute_kind, then reference_c_direct_attribute_kind)."""
        if raw_kind not in (T.TOK_IDENTIFIER, T.TOK_CONST):
            return None
        if parent >= self.n or self.kinds[parent] != T.TOK_LPAREN:
            return None
        outer = self.parents[parent]
        if outer >= self.n or self.kinds[outer] != T.TOK_LPAREN:
            return None
        adjacent = outer > 0 and self.kinds[outer - 1] == T.TOK_GNU_ATTRIBUTE
        if self.prev_sibling(outer, self.parents[outer]).kind != T.TOK_GNU_ATTRIBUTE and not adjacent:
            return None  # the direct form needs `adjacent` too, so it adds nothing here
        if raw_kind == T.TOK_CONST:
            return K.C_AST_KIND_ATTRIBUTE_CONST
        return ATTRIBUTE_HASH_KINDS.get(self.symbols[idx])
