"""The per-node rules of the VAST classifier (port of vast/classify/nodes_07.rs and nodes_08.rs):
boolean lets naming what node ``t`` is (function declarator / declaration / definition, call,
cast, compound literal, initializer, pointer / array declarator, field / bit-field / enumerator,
label, statement expression, asm parts), read off the neighbourhood and scan lets before them.

An array declarator ``(*p)[..]`` moves its parent word to the ``*`` (``declarator_parent_override``).

Example::

    >>> [getattr(n, "name", type(n).__name__) for n in declarator_rules("vast", Expr.gid_x())][:3]
    ['type_name_paren', 'is_return_function_suffix', 'is_function_declarator']
"""
from __future__ import annotations

from .....ir import Expr, Node
from ...common import u, v
from .. import tokens as T
from ...sema import vast_kinds as K
from ..structure import flag
from .context import PARENT, SYMBOL, asm_prefix_before_parent, let, row, word
from .predicates import (SENTINEL, all_of, any_token_eq, is_decl_prefix_token_or_gnu_type_hash,
                         is_type_name_identifier, is_type_name_start_token, is_typedef_name_annotation,
                         is_typeof_operator_token, select_chain)


def kind_is(name: str, token: int) -> Expr:
    return Expr.eq(v(name), u(token))


def raw_is(token: int) -> Expr:
    return kind_is("raw_kind", token)


def _initializer_prefix_scan(vast: str, t: Expr) -> list[Node]:
    """For ``=``: the last ``;`` ``{`` ``}`` or declaration-prefix token among its earlier siblings
    was a prefix token (``declaration_initializer_prefix``)."""
    base = v("decl_init_base")
    return [
        let("declaration_initializer_prefix", u(0)),
        Node.if_then(raw_is(T.TOK_ASSIGN), [Node.loop_for("decl_init_scan", u(0), t, [
            let("decl_init_base", row(v("decl_init_scan"))),
            let("decl_init_parent", word(vast, base, PARENT)),
            Node.if_then(Expr.eq(v("decl_init_parent"), v("cur_parent")), [
                let("decl_init_kind", word(vast, base, 0)),
                let("decl_init_symbol_hash", word(vast, base, SYMBOL)),
                Node.if_then(any_token_eq(v("decl_init_kind"), [T.TOK_SEMICOLON, T.TOK_LBRACE, T.TOK_RBRACE]),
                             [Node.assign("declaration_initializer_prefix", u(0))]),
                Node.if_then(is_decl_prefix_token_or_gnu_type_hash(v("decl_init_kind"), v("decl_init_symbol_hash")),
                             [Node.assign("declaration_initializer_prefix", u(1))]),
            ]),
        ])]),
    ]


def declarator_rules(vast: str, t: Expr) -> list[Node]:
    """nodes_07.rs."""
    decl = flag("effective_has_decl_prefix")
    prev = "prev_sibling_kind"
    typed_child = Expr.or_(is_type_name_start_token(v("first_child_kind")),
                           is_typeof_operator_token(v("first_child_kind"), v("first_child_symbol_hash")))
    return [
        # `( type-name )`: not the operand of sizeof/_Alignof/_Atomic/typeof
        let("type_name_paren", Expr.and_(
            Expr.and_(v("raw_lparen"), Expr.not_(Expr.or_(
                any_token_eq(v(prev), [T.TOK_SIZEOF, T.TOK_ALIGNOF, T.TOK_ATOMIC]),
                is_typeof_operator_token(v(prev), v("prev_sibling_symbol_hash"))))),
            Expr.or_(typed_child, Expr.and_(
                Expr.or_(is_type_name_identifier(v("first_child_typedef_flags"), v("fallback_has_prior_typedef")),
                         v("flat_identifier_type_name_paren")),
                Expr.or_(v("identifier_type_name_paren"), v("flat_identifier_type_name_paren")))))),
        let("is_return_function_suffix", all_of(
            v("raw_lparen"), v("type_name_paren"), v("function_boundary"), decl, kind_is(prev, T.TOK_LPAREN))),
        let("is_function_declarator", Expr.or_(Expr.or_(
            all_of(v("raw_lparen"), v("function_boundary"), decl,
                   any_token_eq(v(prev), [T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN])),
            all_of(v("raw_lparen"), Expr.or_(v("type_name_paren"), is_type_name_start_token(v("first_child_kind"))),
                   any_token_eq(v(prev), [T.TOK_LPAREN, T.TOK_RPAREN]))),
            v("is_return_function_suffix"))),
        let("prev_sibling_is_attribute_lparen", Expr.and_(kind_is(prev, T.TOK_LPAREN),
                                                          kind_is("prev_prev_sibling_kind", T.TOK_GNU_ATTRIBUTE))),
        let("is_function_decl", all_of(
            v("identifier_then_paren"), v("function_boundary"), decl,
            Expr.or_(Expr.ne(v(prev), u(T.TOK_LPAREN)), v("prev_sibling_is_attribute_lparen")))),
        let("is_function_definition", Expr.and_(v("is_function_decl"),
                                                kind_is("suffix_boundary_kind", T.TOK_LBRACE))),
        let("aggregate_decl_kind", select_chain([(raw_is(T.TOK_STRUCT), u(K.C_AST_KIND_STRUCT_DECL)),
                                                 (raw_is(T.TOK_UNION), u(K.C_AST_KIND_UNION_DECL)),
                                                 (raw_is(T.TOK_ENUM), u(K.C_AST_KIND_ENUM_DECL))], u(0))),
        let("is_typedef_decl", raw_is(T.TOK_TYPEDEF)),
        let("is_static_assert_decl", raw_is(T.TOK_STATIC_ASSERT)),
        let("is_call", Expr.and_(v("identifier_then_paren"), Expr.not_(v("is_function_decl")))),
        let("inside_gnu_statement_expr_body", Expr.and_(kind_is("cur_parent_kind", T.TOK_LBRACE),
                                                        kind_is("cur_parent_parent_kind", T.TOK_LPAREN))),
        let("c99_for_init_statement_assign", all_of(
            raw_is(T.TOK_ASSIGN), kind_is("cur_parent_kind", T.TOK_LPAREN), decl,
            Expr.or_(kind_is("cur_parent_prev_sibling_kind", T.TOK_FOR),
                     kind_is("cur_parent_parent_kind", T.TOK_FOR)))),
        *_initializer_prefix_scan(vast, t),
        let("parent_is_initializer_list_context", Expr.and_(kind_is("cur_parent_kind", T.TOK_LBRACE), Expr.or_(
            any_token_eq(v("cur_parent_prev_sibling_kind"), [T.TOK_ASSIGN, T.TOK_COMMA]),
            all_of(kind_is("cur_parent_prev_sibling_kind", T.TOK_LBRACE),
                   kind_is("cur_parent_parent_kind", T.TOK_LBRACE),
                   any_token_eq(v("cur_grandparent_prev_sibling_kind"), [T.TOK_ASSIGN, T.TOK_COMMA, T.TOK_LBRACE]))))),
        # `char s[] = "..."` at declaration level keeps `=` an assignment expression (vyre's rule)
        let("is_array_declaration_initializer_assign", all_of(
            raw_is(T.TOK_ASSIGN), kind_is(prev, T.TOK_LBRACKET), decl,
            Expr.not_(v("parent_is_initializer_list_context")), kind_is("next_kind", T.TOK_STRING))),
        let("is_declaration_initializer_assign", all_of(
            raw_is(T.TOK_ASSIGN),
            Expr.or_(flag("declaration_initializer_prefix"), Expr.or_(decl, v("c99_for_init_statement_assign"))),
            Expr.not_(v("inside_gnu_statement_expr_body")), Expr.not_(v("is_array_declaration_initializer_assign")))),
        # `*` in a declaration, or `T * x` after a type-name identifier at a statement start
        let("is_pointer_decl", Expr.and_(raw_is(T.TOK_STAR), Expr.or_(decl, all_of(
            is_type_name_identifier(v("prev_sibling_typedef_flags"), v("fallback_has_prior_typedef")),
            kind_is(prev, T.TOK_IDENTIFIER), kind_is("next_kind", T.TOK_IDENTIFIER),
            any_token_eq(v("prev_prev_sibling_kind"),
                         [SENTINEL, T.TOK_LBRACE, T.TOK_LPAREN, T.TOK_SEMICOLON, T.TOK_COMMA]))))),
        let("is_array_decl", all_of(
            raw_is(T.TOK_LBRACKET),
            Expr.or_(kind_is(prev, T.TOK_IDENTIFIER), Expr.and_(kind_is(prev, T.TOK_LPAREN), any_token_eq(
                v("prev_sibling_first_child_kind"), [T.TOK_STAR, T.TOK_IDENTIFIER, T.TOK_LPAREN]))),
            decl)),
        let("is_array_designator_expr", Expr.and_(raw_is(T.TOK_LBRACKET), kind_is("next_kind", T.TOK_ASSIGN))),
        let("declarator_parent_override", v("cur_parent")),
    ]


def _asm_rules() -> list[Node]:
    """nodes_08.rs: asm qualifiers and the parts of an asm ``( .. )`` by colon count."""
    colons = v("colon_count_before")
    in_asm = lambda tok: Expr.and_(raw_is(tok), v("asm_paren_context"))  # noqa: E731
    return [
        let("asm_prefix_before_current", Expr.or_(kind_is("prev_sibling_kind", T.TOK_GNU_ASM), Expr.and_(
            any_token_eq(v("prev_sibling_kind"), [T.TOK_VOLATILE, T.TOK_GOTO]),
            kind_is("prev_prev_sibling_kind", T.TOK_GNU_ASM)))),
        let("asm_prefix_before_parent", asm_prefix_before_parent()),
        let("is_asm_goto_qualifier", Expr.and_(raw_is(T.TOK_GOTO), v("asm_prefix_before_current"))),
        let("is_asm_volatile_qualifier", Expr.and_(raw_is(T.TOK_VOLATILE), v("asm_prefix_before_current"))),
        let("asm_paren_context", Expr.and_(kind_is("cur_parent_kind", T.TOK_LPAREN), v("asm_prefix_before_parent"))),
        let("is_asm_template", Expr.and_(in_asm(T.TOK_STRING), Expr.eq(colons, u(0)))),
        let("is_asm_output_operand", Expr.and_(in_asm(T.TOK_LPAREN), Expr.and_(
            kind_is("prev_sibling_kind", T.TOK_STRING), Expr.eq(colons, u(1))))),
        let("is_asm_input_operand", Expr.and_(in_asm(T.TOK_LPAREN), Expr.and_(
            kind_is("prev_sibling_kind", T.TOK_STRING), Expr.eq(colons, u(2))))),
        let("is_asm_clobbers_list", Expr.and_(in_asm(T.TOK_STRING), Expr.ge(colons, u(3)))),
        let("is_asm_goto_label", Expr.and_(in_asm(T.TOK_IDENTIFIER), Expr.and_(Expr.ge(colons, u(4)), Expr.or_(
            kind_is("cur_parent_prev_sibling_kind", T.TOK_GOTO),
            kind_is("cur_parent_prev_prev_sibling_kind", T.TOK_GOTO))))),
    ]


def expression_rules() -> list[Node]:
    """nodes_08.rs."""
    prev, child = "prev_sibling_kind", "prev_sibling_first_child_kind"
    decl = flag("has_decl_prefix")
    no_annotations_fallback = Expr.and_(Expr.eq(v("has_typedef_annotations"), u(0)), Expr.or_(
        Expr.eq(v("has_prior_typedef"), u(0)), Expr.or_(
            flag("has_prior_ordinary_decl"), flag("has_prior_parenthesized_identifier_statement"))))
    return [
        Node.if_then(all_of(v("is_array_decl"), kind_is(prev, T.TOK_LPAREN), kind_is(child, T.TOK_STAR)),
                     [Node.assign("declarator_parent_override", v("prev_sibling_first_child_idx"))]),
        let("is_compound_literal", all_of(v("raw_lparen"), v("type_name_paren"), kind_is("next_kind", T.TOK_LBRACE))),
        let("is_cast_expr", all_of(v("raw_lparen"), v("type_name_paren"), Expr.not_(v("is_function_declarator")),
                                   Expr.not_(v("is_compound_literal")))),
        # `(a) * b` with `a` not a type name: a multiplication
        let("star_after_parenthesized_identifier_expr", all_of(
            raw_is(T.TOK_STAR), kind_is(prev, T.TOK_LPAREN), kind_is(child, T.TOK_IDENTIFIER), Expr.or_(
                Expr.and_(flag("has_typedef_annotations"),
                          Expr.not_(is_typedef_name_annotation(v("prev_sibling_first_child_typedef_flags")))),
                no_annotations_fallback))),
        let("brace_after_compound_literal_type", Expr.and_(Expr.and_(kind_is(prev, T.TOK_LPAREN), Expr.or_(
            Expr.or_(is_type_name_start_token(v(child)),
                     is_typeof_operator_token(v(child), v("prev_sibling_first_child_symbol_hash"))),
            Expr.and_(kind_is(child, T.TOK_IDENTIFIER), is_type_name_identifier(
                v("prev_sibling_first_child_typedef_flags"), v("fallback_has_prior_typedef"))))),
            any_token_eq(v("prev_prev_sibling_kind"), [T.TOK_ASSIGN, T.TOK_RETURN, T.TOK_COMMA, T.TOK_LPAREN]))),
        let("is_initializer_list", Expr.and_(raw_is(T.TOK_LBRACE), Expr.or_(kind_is(prev, T.TOK_ASSIGN), Expr.or_(
            v("brace_after_compound_literal_type"),
            Expr.and_(any_token_eq(v(prev), [SENTINEL, T.TOK_LBRACE, T.TOK_COMMA]),
                      v("parent_is_initializer_list_context")))))),
        let("field_decl_follower", any_token_eq(
            v("next_kind"), [T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_LBRACKET, T.TOK_COLON])),
        let("is_field_decl", all_of(raw_is(T.TOK_IDENTIFIER), v("parent_is_record_body"), decl,
                                    v("field_decl_follower"))),
        let("is_bit_field_decl", Expr.and_(v("is_field_decl"), kind_is("next_kind", T.TOK_COLON))),
        let("is_anonymous_bit_field_decl", all_of(raw_is(T.TOK_COLON), v("parent_is_record_body"), decl,
                                                  Expr.ne(v(prev), u(T.TOK_IDENTIFIER)))),
        let("enumerator_decl_follower", any_token_eq(v("next_kind"), [T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_RBRACE])),
        let("is_enumerator_decl", all_of(
            raw_is(T.TOK_IDENTIFIER), v("parent_is_enum_body"),
            Expr.or_(Expr.eq(v(prev), u(SENTINEL)), kind_is(prev, T.TOK_COMMA)), v("enumerator_decl_follower"))),
        let("is_label_stmt", all_of(raw_is(T.TOK_IDENTIFIER), kind_is("next_kind", T.TOK_COLON),
                                    Expr.not_(v("parent_is_record_body")), Expr.not_(v("parent_is_enum_body")))),
        let("is_gnu_statement_expr", Expr.and_(raw_is(T.TOK_LPAREN), kind_is("first_child_kind", T.TOK_LBRACE))),
        *_asm_rules(),
    ]
