"""Byte-class predicates and the ``set_token`` step of vyre's serial C lexer
(vyre-libs/src/parsing/c/lex/lexer/helpers.rs and lexer/sections.rs).

The lexer keeps ``emit`` (0 until a rule fires), ``tok_type`` and ``tok_len`` per position; each
rule is ``if emit == 0 && cond { emit = 1; tok_type = ..; tok_len = .. }``, so the first rule
that matches wins, in the order the lexer lists them.

Example::

    >>> set_token(byte_eq(v("byte"), ";"), 16, u(1)).then[1]
    Assign(name='tok_type', value=LitU32(value=16))
"""
from __future__ import annotations

from ....ir import Expr, Node
from ..common import between, byte_eq, byte_load, is_alpha, is_digit, u, v
from .tokens import ONE_BYTE_OPS, THREE_BYTE_OPS, TOK_ELLIPSIS, TWO_BYTE_OPS

# C's simple escapes plus the line-splice bytes (vyre accepts "\\\n" inside a literal).
SIMPLE_ESCAPES = "'\"?\\abefnrtv\n\r"


def byte_at_or_zero(haystack: str, index: Expr, haystack_len: int) -> Expr:
    """The byte at `index`, or 0 past the op's static `haystack_len` (not the bound length)."""
    return Expr.select(Expr.lt(index, u(haystack_len)), byte_load(haystack, index), u(0))


def is_ident_start(value: Expr) -> Expr:
    return Expr.or_(is_alpha(value), byte_eq(value, "_"))


def is_ident_continue(value: Expr) -> Expr:
    return Expr.or_(is_ident_start(value), is_digit(value))


def is_hex_digit(value: Expr) -> Expr:
    return Expr.or_(is_digit(value), Expr.or_(between(value, "a", "f"), between(value, "A", "F")))


def has_hex_digits_after(haystack: str, escape_pos: Expr, digits: int, haystack_len: int) -> Expr:
    expr = Expr.bool(True)
    for offset in range(1, digits + 1):
        expr = Expr.and_(expr, is_hex_digit(byte_at_or_zero(haystack, Expr.add(escape_pos, u(offset)), haystack_len)))
    return expr


def is_valid_escape_byte(haystack: str, escape_pos: Expr, escaped: Expr, haystack_len: int) -> Expr:
    """The byte after a backslash starts a valid escape: a simple one, an octal digit, ``x`` with one
    hex digit after it, ``u`` with four, ``U`` with eight (lookahead bounded by `haystack_len`)."""
    simple = Expr.bool(False)
    for ch in SIMPLE_ESCAPES:
        simple = Expr.or_(simple, byte_eq(escaped, ch))
    hex_x = Expr.and_(Expr.or_(byte_eq(escaped, "x"), byte_eq(escaped, "X")),
                      has_hex_digits_after(haystack, escape_pos, 1, haystack_len))
    hex_u = Expr.and_(byte_eq(escaped, "u"), has_hex_digits_after(haystack, escape_pos, 4, haystack_len))
    hex_big_u = Expr.and_(byte_eq(escaped, "U"), has_hex_digits_after(haystack, escape_pos, 8, haystack_len))
    return Expr.or_(simple, Expr.or_(between(escaped, "0", "7"), Expr.or_(hex_x, Expr.or_(hex_u, hex_big_u))))


def set_token(condition: Expr, token: int, length: Expr) -> Node:
    return Node.if_then(Expr.and_(Expr.eq(v("emit"), u(0)), condition), [
        Node.assign("emit", u(1)), Node.assign("tok_type", u(token)), Node.assign("tok_len", length)])


def operator_punct_nodes() -> list[Node]:
    """Longest operators first: ``<<=``/``>>=``, the two-byte table, ``...``, then single bytes."""
    b, n1, n2 = v("byte"), v("next_byte"), v("next2_byte")
    nodes = [set_token(Expr.and_(Expr.and_(byte_eq(b, s[0]), byte_eq(n1, s[1])), byte_eq(n2, s[2])), tok, u(3))
             for tok, s in THREE_BYTE_OPS]
    nodes += [set_token(Expr.and_(byte_eq(b, s[0]), byte_eq(n1, s[1])), tok, u(2)) for tok, s in TWO_BYTE_OPS]
    nodes.append(set_token(Expr.and_(Expr.and_(byte_eq(b, "."), byte_eq(n1, ".")), byte_eq(n2, ".")),
                           TOK_ELLIPSIS, u(3)))
    nodes += [set_token(byte_eq(b, s), tok, u(1)) for tok, s in ONE_BYTE_OPS]
    return nodes
