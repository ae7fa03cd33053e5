"""The typed kind of a VAST node (port of vast/classify/nodes_09.rs): attribute names, statement
/ expression / builtin kinds, then two priority chains over the rule lets.

``typed_kind`` starts at 0 and each later rule that holds overrides it (so the last listed rule
wins: a function declaration beats a function declarator beats a pointer declarator ...);
``final_typed_kind`` then tries declaration-level kinds first (function definition, aggregate,
typedef, ...) and falls back to ``typed_kind``; an attribute name directly inside
``__attribute__((``..``))`` overrides everything.

Example::

    >>> [getattr(n, "name", type(n).__name__) for n in kind_lets("out", Expr.u32(0))][-3:]
    ['final_typed_kind', 'If', 'Store']
"""
from __future__ import annotations

from .....ir import Expr, Node
from ...common import u, v
from .. import tokens as T
from ...sema import vast_kinds as K
from .context import let
from .predicates import (all_of, any_token_eq, c_attribute_kind_from_hash, c_builtin_expression_kind,
                         c_builtin_identifier_expression_kind, c_expression_operator_kind, c_statement_kind,
                         c_unary_context, is_c_literal_token, is_gnu_auto_type_symbol_hash, select_chain)


def raw_is(token: int) -> Expr:
    return Expr.eq(v("raw_kind"), u(token))


def nonzero(name: str) -> Expr:
    return Expr.ne(v(name), u(0))


def _attribute_name(context: Expr) -> Expr:
    """In `context`: ``const`` is the const attribute, an identifier its kind by hash, else 0."""
    return Expr.select(context, Expr.select(raw_is(T.TOK_CONST), u(K.C_AST_KIND_ATTRIBUTE_CONST),
                                            c_attribute_kind_from_hash(v("current_symbol_hash"))), u(0))


#: typed_kind's rules, lowest priority first: (condition, kind) with a let name meaning "that
#: let's value when nonzero", and a token int meaning "raw_kind is that token".
_TYPED_RULES: tuple[tuple[object, object], ...] = (
    ("@literal", K.LITERAL), (T.TOK_GNU_ATTRIBUTE, K.C_AST_KIND_GNU_ATTRIBUTE),
    (T.TOK_GNU_ASM, K.C_AST_KIND_INLINE_ASM),
    ("expression_kind", None), ("builtin_expression_kind", None), ("attribute_kind", None),
    ("is_asm_goto_label", K.C_AST_KIND_ASM_GOTO_LABELS), ("is_asm_clobbers_list", K.C_AST_KIND_ASM_CLOBBERS_LIST),
    ("is_asm_input_operand", K.C_AST_KIND_ASM_INPUT_OPERAND),
    ("is_asm_output_operand", K.C_AST_KIND_ASM_OUTPUT_OPERAND), ("is_asm_template", K.C_AST_KIND_ASM_TEMPLATE),
    ("is_gnu_label_address_expr", K.C_AST_KIND_GNU_LABEL_ADDRESS_EXPR),
    ("star_after_parenthesized_identifier_expr", K.BINARY), ("statement_kind", None),
    (T.TOK_LBRACE, K.BASIC_BLOCK), ("direct_attribute_kind", None), ("is_call", K.CALL), ("attribute_kind", None),
    ("is_enumerator_decl", K.C_AST_KIND_ENUMERATOR_DECL), ("is_field_decl", K.C_AST_KIND_FIELD_DECL),
    ("is_initializer_list", K.C_AST_KIND_INITIALIZER_LIST),
    ("is_compound_literal", K.C_AST_KIND_COMPOUND_LITERAL_EXPR), ("is_cast_expr", K.C_AST_KIND_CAST_EXPR),
    ("is_array_designator_expr", K.C_AST_KIND_ARRAY_SUBSCRIPT_EXPR), ("is_array_decl", K.C_AST_KIND_ARRAY_DECL),
    ("is_pointer_decl", K.C_AST_KIND_POINTER_DECL), ("is_function_declarator", K.C_AST_KIND_FUNCTION_DECLARATOR),
    ("is_function_decl", K.FUNCTION_DECL),
)


def _typed_kind() -> Expr:
    # an identifier is a variable unless it spells __auto_type
    kind = Expr.select(Expr.and_(raw_is(T.TOK_IDENTIFIER), Expr.not_(is_gnu_auto_type_symbol_hash(
        v("current_symbol_hash")))), u(K.VARIABLE), u(0))
    for cond, value in _TYPED_RULES:
        if cond == "@literal":
            kind = Expr.select(is_c_literal_token(v("raw_kind")), u(value), kind)
        elif isinstance(cond, int):
            kind = Expr.select(raw_is(cond), u(value), kind)
        elif value is None:
            kind = Expr.select(nonzero(cond), v(cond), kind)
        else:
            kind = Expr.select(v(cond), u(value), kind)
    return kind


def kind_lets(out: str, base: Expr) -> list[Node]:
    """nodes_09.rs: the kind lets and the store of word 0."""
    call_args = Expr.and_(any_token_eq(v("raw_kind"), [T.TOK_IDENTIFIER, T.TOK_CONST]),
                          Expr.eq(v("cur_parent_kind"), u(T.TOK_LPAREN)))
    outer_lparen = Expr.eq(v("cur_parent_parent_kind"), u(T.TOK_LPAREN))
    token_builtin = c_builtin_expression_kind(v("raw_kind"))
    final = select_chain([
        (v("is_function_definition"), u(K.C_AST_KIND_FUNCTION_DEFINITION)),
        (nonzero("aggregate_decl_kind"), v("aggregate_decl_kind")),
        (v("is_typedef_decl"), u(K.C_AST_KIND_TYPEDEF_DECL)),
        (v("is_static_assert_decl"), u(K.C_AST_KIND_STATIC_ASSERT_DECL)),
        (raw_is(T.TOK_GNU_LABEL), u(K.C_AST_KIND_GNU_LOCAL_LABEL_DECL)),
        (Expr.or_(v("is_bit_field_decl"), v("is_anonymous_bit_field_decl")), u(K.C_AST_KIND_BIT_FIELD_DECL)),
        (v("is_label_stmt"), u(K.C_AST_KIND_LABEL_STMT)),
        (v("is_gnu_statement_expr"), u(K.C_AST_KIND_GNU_STATEMENT_EXPR)),
        (Expr.or_(v("is_asm_goto_qualifier"), v("is_asm_volatile_qualifier")), u(K.C_AST_KIND_ASM_QUALIFIER)),
        (nonzero("builtin_expression_kind"), v("builtin_expression_kind")),
    ], v("typed_kind"))
    return [
        # `__attribute__((name ..))`: the grandparent `(` follows __attribute__ as a sibling or row
        let("attribute_name_context", Expr.and_(call_args, Expr.and_(outer_lparen, Expr.or_(
            Expr.eq(v("cur_grandparent_prev_sibling_kind"), u(T.TOK_GNU_ATTRIBUTE)),
            Expr.eq(v("cur_parent_parent_prev_adjacent_kind"), u(T.TOK_GNU_ATTRIBUTE)))))),
        let("attribute_kind", _attribute_name(v("attribute_name_context"))),
        let("direct_attribute_kind", _attribute_name(Expr.and_(call_args, Expr.and_(
            outer_lparen, Expr.eq(v("cur_parent_parent_prev_adjacent_kind"), u(T.TOK_GNU_ATTRIBUTE)))))),
        let("statement_kind", Expr.select(v("is_asm_goto_qualifier"), u(0), c_statement_kind(v("raw_kind")))),
        let("expression_kind", Expr.select(v("is_declaration_initializer_assign"), u(0), c_expression_operator_kind(
            v("raw_kind"), v("prev_sibling_kind"), v("prev_prev_sibling_kind")))),
        let("builtin_expression_kind", Expr.select(Expr.ne(token_builtin, u(0)), token_builtin,
                                                   c_builtin_identifier_expression_kind(
                                                       v("raw_kind"), v("current_symbol_hash"), v("next_kind")))),
        # `&&label`
        let("is_gnu_label_address_expr", all_of(raw_is(T.TOK_AND), c_unary_context(v("prev_sibling_kind")),
                                                Expr.eq(v("next_kind"), u(T.TOK_IDENTIFIER)))),
        let("typed_kind", _typed_kind()),
        let("final_typed_kind", final),
        Node.if_then(nonzero("direct_attribute_kind"), [Node.assign("final_typed_kind", v("direct_attribute_kind"))]),
        Node.store(out, base, v("final_typed_kind")),
    ]
