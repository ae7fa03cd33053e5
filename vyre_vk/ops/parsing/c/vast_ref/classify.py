"""CPU oracle of `vyre-libs::parsing::c11_classify_vast_node_kinds` (port of vyre's
reference_c11_classify_vast_node_kinds, vyre-libs/src/parsing/c/parse/vast/ref_classify.rs, with
ref_typedef/typed_kind.rs deciding each node's kind).

Each node's word 0 becomes its typed kind, decided from its raw token kind, its siblings under
the same parent, its first child and the next raw tokens: declarations (function definition /
declaration / declarator, pointer and array declarators, fields, enumerators, struct/union/enum,
typedef), expressions (cast, compound literal, call, unary/binary/assignment/conditional, member
access, subscripts, sizeof/alignof, GNU builtins), statements, GNU asm/attributes, literals and
variables; 0 for punctuation and specifiers. The first matching rule of `typed_kind` wins, in
vyre's order. An array declarator ``[`` right after a ``(`` whose first child is ``*`` (as in
``int (*p)[4]``) also gets that ``*`` as its parent (word 1). Every other word is copied.

Typedef names: the flags word 7 of an annotated row (c11_annotate_typedef_names) marks visible
typedef names; with no annotations at all vyre falls back to "a typedef appeared earlier and no
ordinary declaration did".

Example (``int main() { return 2; }``)::

    >>> from vyre_vk.ops.parsing.c.vast import vast_rows
    >>> rows = vast_rows([107, 1, 10, 11, 12, 104, 2, 16, 13], [0, 4, 8, 9, 10, 11, 18, 19, 20],
    ...                  [3, 4, 1, 1, 1, 6, 1, 1, 1])
    >>> [hex(k) for k in reference_classify_vast_node_kinds(rows)[0::10]]
    ['0x0', '0xc0115711', '0xc011d003', '0x0', '0x6', '0xc0115709', '0x4', '0x0', '0x0']
"""
from __future__ import annotations

from ...sema import vast_kinds as K
from .. import tokens as T
from .catalog import GNU_AUTO_TYPE_HASH, builtin_identifier_kind
from .context import (AGGREGATE_TOKENS, BUILTIN_TOKEN_KINDS, ENUM, RECORD, STATEMENT_KINDS, TYPE_NAME_START_TOKENS,
                      UNARY_CONTEXT_TOKENS, ClassifyContext, expression_operator_kind, is_typedef_name,
                      is_typeof_operator)
from .rows import SENTINEL, VAST_NODE_STRIDE_U32, check_vast_words

# What may follow `(T)` for it to be a cast or compound literal of a typedef name T.
CAST_OPERAND_STARTS = frozenset((
    T.TOK_LBRACE, T.TOK_LPAREN, T.TOK_IDENTIFIER, T.TOK_INTEGER, T.TOK_FLOAT, T.TOK_STRING, T.TOK_CHAR, T.TOK_STAR,
    T.TOK_AMP, T.TOK_PLUS, T.TOK_MINUS, T.TOK_BANG, T.TOK_TILDE, T.TOK_INC, T.TOK_DEC))
COMPOUND_LITERAL_TYPE_STARTS = frozenset((
    T.TOK_VOID, T.TOK_BOOL, T.TOK_CHAR_KW, T.TOK_SHORT, T.TOK_INT, T.TOK_LONG, T.TOK_FLOAT_KW, T.TOK_DOUBLE,
    T.TOK_SIGNED, T.TOK_UNSIGNED, T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM, T.TOK_CONST, T.TOK_RESTRICT,
    T.TOK_VOLATILE, T.TOK_ATOMIC))
AGGREGATE_KINDS = {T.TOK_STRUCT: K.C_AST_KIND_STRUCT_DECL, T.TOK_UNION: K.C_AST_KIND_UNION_DECL,
                   T.TOK_ENUM: K.C_AST_KIND_ENUM_DECL}


def typed_kind(c: ClassifyContext, i: int) -> int:
    """vyre's reference_typed_kind for node `i` (see the module doc)."""
    n, raw = c.n, c.kinds[i]
    parent, symbol = c.parents[i], c.symbols[i]
    first_child_kind, first_child_flags = c.child_kind(i), c.child_flags(i)
    raw_next = c.kinds[i + 1] if i + 1 < n else 0
    raw_next_flags = c.flags_col[i + 1] if i + 1 < n else 0
    raw_after_next = c.kinds[i + 2] if i + 2 < n else 0
    raw_after_after = c.kinds[i + 3] if i + 3 < n else 0
    nxt = c.next_siblings[i]
    next_valid = nxt < n
    next_kind = c.kinds[nxt] if next_valid else 0
    after_param = c.next_siblings[nxt] if next_valid else SENTINEL
    has_decl_prefix = c.decl_prefix_before(i, parent)
    prev = c.prev_sibling(i, parent)
    prior_typedef, annotated = c.prior_typedef(i), c.has_annotations
    prior_paren_ident_stmt = c.prior_paren_ident_stmt(i)
    raw_lparen = raw == T.TOK_LPAREN
    ambiguous_paren_multiply = raw_lparen and next_kind == T.TOK_STAR and prior_paren_ident_stmt
    fallback = (not annotated and prior_typedef and not c.prior_ordinary_decl(i)
                and not c.prior_raw_ordinary_decl(i) and not ambiguous_paren_multiply)
    boundary = c.suffix_function_boundary(nxt if raw_lparen else after_param)
    function_boundary = boundary != SENTINEL

    ident_type_name_paren = raw_lparen and first_child_kind == T.TOK_IDENTIFIER and next_kind in CAST_OPERAND_STARTS
    flat_ident_type_name_paren = (raw_lparen and raw_next == T.TOK_IDENTIFIER
                                  and is_typedef_name(raw_next_flags, fallback) and raw_after_next == T.TOK_RPAREN
                                  and raw_after_after in CAST_OPERAND_STARTS)
    type_name_paren = (raw_lparen and prev.kind not in (T.TOK_SIZEOF, T.TOK_ALIGNOF, T.TOK_ATOMIC)
                       and not is_typeof_operator(prev.kind, prev.symbol)
                       and (first_child_kind in TYPE_NAME_START_TOKENS
                            or is_typeof_operator(first_child_kind, c.child_symbol(i))
                            or (is_typedef_name(first_child_flags, fallback) and ident_type_name_paren)
                            or flat_ident_type_name_paren))
    aggregate = c.parent_context(parent)
    effective_decl = has_decl_prefix or c.parenthesized_declarator(parent)

    ident_then_paren = raw == T.TOK_IDENTIFIER and next_valid and next_kind == T.TOK_LPAREN
    function_declarator = (raw_lparen and (function_boundary or (
        (type_name_paren or first_child_kind in TYPE_NAME_START_TOKENS) and prev.kind in (T.TOK_LPAREN, T.TOK_RPAREN)))
        and prev.kind in (T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN)
        and (effective_decl or prev.kind == T.TOK_RPAREN))
    return_function_suffix = (raw_lparen and type_name_paren and function_boundary and effective_decl
                              and prev.kind == T.TOK_LPAREN)
    typedef_pointer = (raw == T.TOK_STAR and is_typedef_name(prev.flags, fallback) and prev.kind == T.TOK_IDENTIFIER
                       and next_kind == T.TOK_IDENTIFIER
                       and prev.prev_kind in (SENTINEL, T.TOK_LBRACE, T.TOK_LPAREN, T.TOK_SEMICOLON, T.TOK_COMMA))
    pointer_decl = raw == T.TOK_STAR and (effective_decl or typedef_pointer)
    prev_child = c.child_kind(prev.idx)  # read only where prev.kind is `(`, so prev.idx is a node
    paren_declarator_suffix = prev.kind == T.TOK_LPAREN and prev_child in (T.TOK_STAR, T.TOK_IDENTIFIER, T.TOK_LPAREN)
    array_decl = (raw == T.TOK_LBRACKET and (prev.kind == T.TOK_IDENTIFIER or paren_declarator_suffix)
                  and effective_decl)
    array_designator = raw == T.TOK_LBRACKET and next_kind == T.TOK_ASSIGN
    array_decl_init_assign = (raw == T.TOK_ASSIGN and prev.kind == T.TOK_LBRACKET and effective_decl
                              and not c.brace_is_initializer_list(parent) and next_kind == T.TOK_STRING)
    compound_literal = raw_lparen and type_name_paren and next_kind == T.TOK_LBRACE
    cast = raw_lparen and type_name_paren and not function_declarator and not compound_literal
    brace_after_literal_type = prev.kind == T.TOK_LPAREN and (
        prev_child in COMPOUND_LITERAL_TYPE_STARTS
        or (prev_child == T.TOK_IDENTIFIER and is_typedef_name(c.child_flags(prev.idx), fallback))
        or is_typeof_operator(prev_child, c.child_symbol(prev.idx))) and prev.prev_kind in (
        T.TOK_ASSIGN, T.TOK_RETURN, T.TOK_COMMA, T.TOK_LPAREN)
    initializer_list = raw == T.TOK_LBRACE and (
        prev.kind == T.TOK_ASSIGN or brace_after_literal_type
        or (prev.kind in (SENTINEL, T.TOK_LBRACE, T.TOK_COMMA) and c.brace_is_initializer_list(parent)))
    field_decl = (raw == T.TOK_IDENTIFIER and aggregate == RECORD and has_decl_prefix
                  and next_kind in (T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_LBRACKET, T.TOK_COLON))
    anonymous_bit_field = (raw == T.TOK_COLON and aggregate == RECORD and has_decl_prefix
                           and prev.kind != T.TOK_IDENTIFIER)
    enumerator = (raw == T.TOK_IDENTIFIER and aggregate == ENUM and prev.kind in (SENTINEL, T.TOK_COMMA)
                  and next_kind in (T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_RBRACE))
    label = raw == T.TOK_IDENTIFIER and next_kind == T.TOK_COLON and aggregate not in (RECORD, ENUM)
    statement_expr = raw_lparen and first_child_kind == T.TOK_LBRACE
    label_address = raw == T.TOK_AND and prev.kind in UNARY_CONTEXT_TOKENS and next_kind == T.TOK_IDENTIFIER
    asm_qualifier = raw in (T.TOK_GOTO, T.TOK_VOLATILE) and c.asm_prefix_before(i, parent)
    asm_kind = c.asm_context_kind(i, raw, parent)
    attribute = c.attribute_kind(i, raw, parent)
    grand_kind = c.kinds[c.parents[parent]] if parent < n and c.parents[parent] < n else 0
    in_statement_expr = parent < n and c.kinds[parent] == T.TOK_LBRACE and grand_kind == T.TOK_LPAREN
    builtin = BUILTIN_TOKEN_KINDS.get(raw)
    if builtin is None and raw == T.TOK_IDENTIFIER and next_kind == T.TOK_LPAREN:
        builtin = builtin_identifier_kind(symbol)
    decl_init_assign = (raw == T.TOK_ASSIGN and (effective_decl or c.init_prefix_before(i, parent)
                                                 or c.c99_for_init_assign(raw, parent, effective_decl))
                        and not in_statement_expr and not array_decl_init_assign)
    expression = None if decl_init_assign else expression_operator_kind(raw, prev.kind, prev.prev_kind)
    if annotated:
        paren_ident_is_value = not is_typedef_name(c.child_flags(prev.idx), False)
    else:
        paren_ident_is_value = (not prior_typedef or c.prior_ordinary_decl(i) or c.prior_raw_ordinary_decl(i)
                                or prior_paren_ident_stmt)
    star_after_paren_ident = (raw == T.TOK_STAR and prev.kind == T.TOK_LPAREN and prev_child == T.TOK_IDENTIFIER
                              and paren_ident_is_value)

    if ident_then_paren and function_boundary and effective_decl and prev.kind != T.TOK_LPAREN \
            and boundary == T.TOK_LBRACE:
        return K.C_AST_KIND_FUNCTION_DEFINITION
    if raw in AGGREGATE_TOKENS:
        return AGGREGATE_KINDS[raw]
    if raw == T.TOK_TYPEDEF:
        return K.C_AST_KIND_TYPEDEF_DECL
    if raw == T.TOK_STATIC_ASSERT:
        return K.C_AST_KIND_STATIC_ASSERT_DECL
    if raw == T.TOK_GNU_LABEL:
        return K.C_AST_KIND_GNU_LOCAL_LABEL_DECL
    if attribute is not None:
        return attribute
    if (field_decl and next_kind == T.TOK_COLON) or anonymous_bit_field:
        return K.C_AST_KIND_BIT_FIELD_DECL
    if builtin is not None:
        return builtin
    if is_typeof_operator(raw, symbol):
        return K.C_AST_KIND_SIZEOF_EXPR
    if ident_then_paren and function_boundary and effective_decl and prev.kind != T.TOK_LPAREN:
        return K.FUNCTION_DECL
    for rule, kind in ((function_declarator or return_function_suffix, K.C_AST_KIND_FUNCTION_DECLARATOR),
                       (pointer_decl, K.C_AST_KIND_POINTER_DECL), (array_decl, K.C_AST_KIND_ARRAY_DECL),
                       (array_designator, K.C_AST_KIND_ARRAY_SUBSCRIPT_EXPR), (cast, K.C_AST_KIND_CAST_EXPR),
                       (compound_literal, K.C_AST_KIND_COMPOUND_LITERAL_EXPR),
                       (initializer_list, K.C_AST_KIND_INITIALIZER_LIST), (field_decl, K.C_AST_KIND_FIELD_DECL),
                       (enumerator, K.C_AST_KIND_ENUMERATOR_DECL), (label, K.C_AST_KIND_LABEL_STMT),
                       (statement_expr, K.C_AST_KIND_GNU_STATEMENT_EXPR), (ident_then_paren, K.CALL),
                       (raw == T.TOK_LBRACE, K.BASIC_BLOCK), (asm_qualifier, K.C_AST_KIND_ASM_QUALIFIER)):
        if rule:
            return kind
    if raw in STATEMENT_KINDS:
        return STATEMENT_KINDS[raw]
    if star_after_paren_ident:
        return K.BINARY
    if label_address:
        return K.C_AST_KIND_GNU_LABEL_ADDRESS_EXPR
    if asm_kind is not None:
        return asm_kind
    if expression is not None:
        return expression
    if raw == T.TOK_GNU_ASM:
        return K.C_AST_KIND_INLINE_ASM
    if raw == T.TOK_GNU_ATTRIBUTE:
        return K.C_AST_KIND_GNU_ATTRIBUTE
    if raw in (T.TOK_INTEGER, T.TOK_FLOAT, T.TOK_STRING, T.TOK_CHAR):
        return K.LITERAL
    if raw == T.TOK_IDENTIFIER and symbol != GNU_AUTO_TYPE_HASH:
        return K.VARIABLE
    return 0


def _previous_sibling(c: ClassifyContext, i: int) -> int | None:
    """The previous-sibling word when it points backwards, else the nearest earlier node with the
    same parent word (vyre's previous_sibling_idx)."""
    direct = c.prev_siblings[i]
    if direct < i:
        return direct
    k = c.before(c.parents[i], i)
    return c.siblings[c.parents[i]][k - 1] if k else None


def declarator_parent_override(c: ClassifyContext, i: int, kind: int) -> int | None:
    """An ARRAY_DECL ``[`` right after ``(`` whose first child is ``*`` is reparented to that ``*``."""
    if kind != K.C_AST_KIND_ARRAY_DECL:
        return None
    prev = _previous_sibling(c, i)
    if prev is None or c.kinds[prev] != T.TOK_LPAREN:
        return None
    child = c.first_children[prev]
    return child if child < c.n and c.kinds[child] == T.TOK_STAR else None


def reference_classify_vast_node_kinds(words: list[int]) -> list[int]:
    """Typed VAST words of raw (or typedef-annotated) VAST words: see the module doc. Raises
    InputError when `words` is not whole 10-word rows of u32s.

    >>> from vyre_vk.ops.parsing.c.vast import vast_rows
    >>> typed = reference_classify_vast_node_kinds(vast_rows([1, 20, 1, 16], [0, 2, 4, 5], [1, 1, 1, 1]))
    >>> typed[0::10], typed[1::10] == vast_rows([1, 20, 1, 16], [0, 2, 4, 5], [1, 1, 1, 1])[1::10]
    ([1, 7, 1, 0], True)
    """
    words = check_vast_words(words)
    c = ClassifyContext(words)
    out = list(words)
    for i in range(c.n):
        kind = typed_kind(c, i)
        out[i * VAST_NODE_STRIDE_U32] = kind
        parent = declarator_parent_override(c, i, kind)
        if parent is not None:
            out[i * VAST_NODE_STRIDE_U32 + 1] = parent
    return out


__all__ = ["reference_classify_vast_node_kinds", "typed_kind", "declarator_parent_override"]
