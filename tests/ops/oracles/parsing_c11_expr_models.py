"""Random inputs and the oracle of `c11_build_expression_shape_nodes` (vyre_vk/ops/parsing/c/
expr_shape.py): C expression statements as token kinds (binary operators of every precedence,
assignments, ``?:``, parentheses, calls, subscripts, member access, unary operators, casts, comma
lists), their raw VAST rows (vast_rows) and typed rows (vyre's classify oracle, ported in
vyre_vk/ops/parsing/c/vast_ref); expected rows from vyre's expression-shape CPU oracle (ported
there too, separately from the GPU builder). Registered with the C11 oracles at the end of
parsing_c.py.

The GPU builder and vyre's oracle differ on two shapes (pinned in
tests/ops/parsing/test_c11_expr_shape.py), which these streams leave out: a ``?`` with no ``:``,
and an assignment followed by a ``?`` after another ``?``/``:`` at the same parenthesis level
(`statement` allows one ``?`` per level when there is an assignment, none nested unparenthesised).

Example::

    >>> toks = expression_stream(np.random.default_rng(0), 40)
    >>> len(toks), toks.count(T.TOK_QUESTION) == toks.count(T.TOK_COLON)
    (40, True)
"""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.vast import vast_rows
from vyre_vk.ops.parsing.c.vast_ref.classify import reference_classify_vast_node_kinds
from vyre_vk.ops.parsing.c.vast_ref.expr_shape import reference_build_expression_shape_nodes

from .core import U32
from .parsing_c11_models import oracle

BINARY = [T.TOK_PLUS, T.TOK_MINUS, T.TOK_STAR, T.TOK_SLASH, T.TOK_PERCENT, T.TOK_LSHIFT, T.TOK_RSHIFT, T.TOK_LT,
          T.TOK_GT, T.TOK_LE, T.TOK_GE, T.TOK_EQ, T.TOK_NE, T.TOK_AMP, T.TOK_CARET, T.TOK_PIPE, T.TOK_AND, T.TOK_OR]
ASSIGN = [T.TOK_ASSIGN, T.TOK_PLUS_EQ, T.TOK_MINUS_EQ, T.TOK_STAR_EQ, T.TOK_LSHIFT_EQ, T.TOK_PIPE_EQ]
UNARY = [T.TOK_MINUS, T.TOK_BANG, T.TOK_TILDE, T.TOK_STAR, T.TOK_AMP, T.TOK_INC]
ID, NUM, LP, RP = T.TOK_IDENTIFIER, T.TOK_INTEGER, T.TOK_LPAREN, T.TOK_RPAREN


def _primary(rng, depth: int) -> list[int]:
    r = rng.random()
    if depth > 2 or r < 0.45:
        return [ID] if rng.random() < 0.7 else [NUM]
    if r < 0.55:
        return [int(rng.choice(UNARY))] + _primary(rng, depth + 1)
    if r < 0.65:
        return [ID, LP] + _expr(rng, depth + 1, True) + [T.TOK_COMMA] + _expr(rng, depth + 1, True) + [RP]
    if r < 0.72:
        return [ID, T.TOK_LBRACKET] + _expr(rng, depth + 1, True) + [T.TOK_RBRACKET]
    if r < 0.78:
        return [ID, int(rng.choice([T.TOK_DOT, T.TOK_ARROW])), ID]
    if r < 0.84:
        return [LP, T.TOK_INT, RP, ID]  # cast
    return [LP] + _expr(rng, depth + 1, True) + [RP]


def _expr(rng, depth: int, ternary_chain: bool) -> list[int]:
    """Operands joined by binary operators; then maybe ``? x : y`` (a chain of them when allowed)."""
    out = _primary(rng, depth)
    for _ in range(int(rng.integers(0, 4))):
        out += [int(rng.choice(BINARY))] + _primary(rng, depth)
    chains = int(rng.integers(0, 3)) if ternary_chain else int(rng.random() < 0.4)
    for _ in range(chains):
        out += [T.TOK_QUESTION] + _primary(rng, depth) + [T.TOK_COLON] + _primary(rng, depth)
    return out


def statement(rng) -> list[int]:
    """``e;``, ``x op= e;`` or ``e, e;`` (ternary chains only where no assignment precedes them)."""
    if rng.random() < 0.4:
        return [ID, int(rng.choice(ASSIGN))] + _expr(rng, 0, False) + [T.TOK_SEMICOLON]
    body = _expr(rng, 0, True)
    if rng.random() < 0.3:
        body += [T.TOK_COMMA] + _expr(rng, 0, True)
    return body + [T.TOK_SEMICOLON]


def expression_stream(rng, n: int) -> list[int]:
    """Whole statements up to `n` tokens, padded with ``;`` (a cut statement could leave a ``?``
    without its ``:``)."""
    out: list[int] = []
    while True:
        s = statement(rng)
        if len(out) + len(s) > n:
            return out + [T.TOK_SEMICOLON] * (n - len(out))
        out += s


def shape_inputs(types: list[int]) -> dict:
    raw = vast_rows(types, list(range(len(types))), [1] * len(types))
    return {"raw_vast_nodes": np.asarray(raw, U32),
            "typed_vast_nodes": np.asarray(reference_classify_vast_node_kinds(raw), U32)}


@oracle("vyre-libs::parsing::c11_build_expression_shape_nodes", {"num_nodes": 192}, 0,
        "vyre's CPU oracle (ported separately) on well-formed expression statements: exact")
def _():
    def inputs(rng, p):
        return shape_inputs(expression_stream(rng, p["num_nodes"]))

    def numpy(ins, p):
        rows = reference_build_expression_shape_nodes(ins["raw_vast_nodes"].tolist(), ins["typed_vast_nodes"].tolist())
        return {"out_expr_shape_nodes": np.asarray(rows, U32)}
    return inputs, numpy
