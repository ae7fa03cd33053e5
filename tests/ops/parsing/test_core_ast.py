"""The AST passes of vyre_vk/ops/parsing/core_ast.py on the reference and on Vulkan, on C tokens
from the C lexer model (tests/ops/oracles/parsing_models.py c_lex):

- ast_shunting_yard over many statements at once: the trees (decoded from the roots, so the
  GPU's atomic node numbering does not matter) equal the shunting-yard model's and, for random
  arithmetic, Python's own ``ast`` parse of the same text (same precedence and left
  associativity for + - * / %); hand-checked trees for assignment (right-associative), logical
  and comparison operators; vyre's region shape;
- ast_cfg_blocks: the nearest if/while within 31 tokens, ';' not a boundary (vyre's rule);
- ast_binding_strength: vyre's 0x3D, which is TOK_HASHHASH and not TOK_ASSIGN;
- the builders' parameter checks.
"""
from __future__ import annotations

import ast

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops.parsing import core_ast as A
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.registry import OpParamError

from ..harness import run_equal
from ..oracles.parsing_core_ast import shunt
from ..oracles.parsing_models import c_lex

U32 = np.uint32
INV = A.INVALID_POS
_KEYWORDS = {b"if": T.TOK_IF, b"while": T.TOK_WHILE}
_NAMES = {A.AST_ADD: "+", A.AST_SUB: "-", A.AST_MUL: "*", A.AST_DIV: "/", A.AST_MOD: "%", A.AST_ASSIGN: "=",
          A.AST_EQ: "==", A.AST_NE: "!=", A.AST_LT: "<", A.AST_GT: ">", A.AST_LE: "<=", A.AST_GE: ">=",
          A.AST_LOGICAL_AND: "&&", A.AST_LOGICAL_OR: "||"}


def c_statements(src: bytes) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """Token kinds, [start, end) token ranges of the ';'-ended statements, and the token rows."""
    rows = c_lex(src)
    # the lexer leaves keywords as identifiers (c_keyword promotes them): promote the two used here
    kinds = np.asarray([_KEYWORDS.get(src[s:s + n], k) for k, s, n in rows], U32)
    ranges, start = [], 0
    for i, k in enumerate(kinds):
        if k == T.TOK_SEMICOLON:
            ranges.append((start, i))
            start = i + 1
    return kinds, np.asarray(ranges, U32).reshape(-1), rows


def tree(nodes, root: int, src: bytes, rows) -> object:
    """A node as a nested tuple: leaves by their source text, operators by their spelling."""
    if root == INV:
        return None
    op, left, right, ref = (int(x) for x in nodes[root:root + 4])
    if op in (A.AST_VAR, A.AST_CONST_INT):
        _, s, n = rows[ref]
        return src[s:s + n].decode()
    return (_NAMES[op], tree(nodes, left, src, rows), tree(nodes, right, src, rows))


def shunting(src: bytes, device) -> tuple[list, list]:
    """(reference trees, model trees) of every statement; Vulkan's trees must equal the
    reference's (its node numbering may differ: several statements share the atomic counter)."""
    kinds, stm, rows = c_statements(src)
    n_st = len(stm) // 2
    program = A.ast_shunting_yard_with_capacity("tok", "stm", n_st, "nodes", "count", "roots", "vals", "ops",
                                                4 * len(kinds), n_st)
    ins = {"tok": kinds, "stm": stm, "nodes": np.zeros(16 * len(kinds), U32), "count": np.zeros(1, U32),
           "roots": np.zeros(n_st, U32), "vals": np.zeros(64 * n_st, U32), "ops": np.zeros(64 * n_st, U32)}
    ref = reference.run(program, ins)
    got = device.compile(program).run(ins)
    trees = [tree(ref["nodes"], int(r), src, rows) for r in ref["roots"]]
    assert [tree(got["nodes"], int(r), src, rows) for r in got["roots"]] == trees
    assert int(got["count"][0]) == int(ref["count"][0])
    nodes, vals, ops, count, model = [0] * len(ins["nodes"]), [0] * len(ins["vals"]), [0] * len(ins["ops"]), 0, []
    for t in range(n_st):
        root, count = shunt(kinds, int(stm[2 * t]), int(stm[2 * t + 1]), count, nodes, vals, ops, 64 * t)
        model.append(tree(nodes, root, src, rows))
    assert count == int(ref["count"][0])
    return trees, model


def test_shunting_yard_hand_checked_trees(vk_device):
    src = b"x = a + b * c; y = (a + b) * c; z = a - b - c; w = a = b = 1; r = a && b || c == d < e; q += 4 % 2; ;"
    trees, model = shunting(src, vk_device)
    assert trees == model == [
        ("=", "x", ("+", "a", ("*", "b", "c"))),
        ("=", "y", ("*", ("+", "a", "b"), "c")),
        ("=", "z", ("-", ("-", "a", "b"), "c")),
        ("=", "w", ("=", "a", ("=", "b", "1"))),
        ("=", "r", ("||", ("&&", "a", "b"), ("==", "c", ("<", "d", "e")))),
        ("=", "q", ("%", "4", "2")),  # += is AST_ASSIGN as well

        None,
    ]


def random_expr(rng, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.3:
        return str(rng.integers(0, 99)) if rng.random() < 0.4 else "abcdefgh"[rng.integers(8)]
    left, right = random_expr(rng, depth + 1), random_expr(rng, depth + 1)
    text = f"{left} {'+-*/%'[rng.integers(5)]} {right}"
    return f"({text})" if rng.random() < 0.4 else text


def py_tree(node) -> object:
    if isinstance(node, ast.BinOp):
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}[type(node.op)]
        return (op, py_tree(node.left), py_tree(node.right))
    return str(node.value) if isinstance(node, ast.Constant) else node.id


def test_shunting_yard_random_arithmetic_is_pythons_parse(vk_device):
    """+ - * / % group as in Python (and C): 24 random statements in one dispatch."""
    rng = np.random.default_rng(7)
    exprs = [random_expr(rng) for _ in range(24)]
    trees, model = shunting("".join(f"{e};" for e in exprs).encode(), vk_device)
    assert trees == model == [py_tree(ast.parse(e, mode="eval").body) for e in exprs]
    assert sum(isinstance(t, tuple) for t in trees) > 12


def test_shunting_yard_phase_region_sits_under_the_statement_guard():
    outer = A.ast_shunting_yard("t", "s", 4, "n", "c", "r", "v", "o").entry[0]
    phase = outer.body[0].then[0]
    assert (outer.generator, phase.generator, phase.source_region) == (
        A.SHUNTING_OP_ID, A.STATEMENT_PASS_OP_ID, A.SHUNTING_OP_ID)
    # without capacities: vyre's 65536-token node stream and roots sized by the data
    assert [b.count for b in A.ast_shunting_yard("t", "s", 4, "n", "c", "r", "v", "o").buffers] == \
        [0, 0, 4 * 65536, 1, 0, 65536 * 64, 65536 * 64]


def test_cfg_blocks_nearest_if_or_while_within_31_tokens(vk_device):
    src = b"if (x) y = 1; z = 2; while (k) m;" + b" n;" * 20 + b" p;"
    kinds, stm, _ = c_statements(src)
    n = len(stm) // 2
    tok = np.zeros(4 * n, U32)
    tok[:len(kinds)] = kinds
    starts = stm.reshape(-1, 2)[:, 0].tolist()
    _, out = run_equal(A.ast_cfg_blocks("tok", "parents", "stm", n, "headers"), vk_device,
                       {"tok": tok, "stm": stm, "headers": np.full(n, 7, U32)})
    # tokens: if 0 .. ';' 7, z 8 .. ';' 11, while 12 .. m 16 ';' 17, then n;/p; from 18. The
    # first statement starts at the 'if' itself (not looked at); z and the while statement look
    # back past ';' to the if; later statements find the while while it is <= 31 tokens back.
    assert starts[:4] == [0, 8, 12, 18]
    want = [INV, 0, 0] + [12 if s - 12 <= 31 else INV for s in starts[3:]]
    assert [int(h) for h in out["headers"]] == want
    assert want[-1] == INV and want.count(12) == 13


def test_binding_strength_uses_vyres_0x3d_not_tok_assign(vk_device):
    toks = np.asarray([T.TOK_ASSIGN, T.TOK_HASHHASH, T.TOK_SLASH, T.TOK_MINUS, T.TOK_IDENTIFIER], U32)
    depths = np.asarray([0, 2, 3, 0xFFFFFFFF, 1], U32)
    _, out = run_equal(A.ast_binding_strength("t", "d", "s", 5), vk_device,
                       {"t": toks, "d": depths, "s": np.zeros(5, U32)})
    assert T.TOK_HASHHASH == 0x3D
    assert out["s"].tolist() == [0, 210, 340, (0xFFFFFFFF * 100 + 30) & 0xFFFFFFFF, 100]


@pytest.mark.parametrize("build", [lambda: A.ast_binding_strength("t", "d", "s", 0),
                                   lambda: A.ast_cfg_blocks("t", "p", "s", -1, "h"),
                                   lambda: A.ast_shunting_yard_with_capacity("t", "s", 1, "n", "c", "r", "v", "o",
                                                                             "many", 4)])
def test_builders_reject_bad_counts(build):
    with pytest.raises(OpParamError, match="Fix:"):
        build()
