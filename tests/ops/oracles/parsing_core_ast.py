"""Oracles of vyre_vk/ops/parsing/core_ast.py, exact, written from the rules in its docstring:
binding strengths from a precedence table, the 31-token backward look for if/while, and a plain
Python shunting yard (``shunt``) that also reproduces the scratch stacks and the node slots.

The shunting-yard oracle has one non-empty statement among the 100 (the others' ranges are
empty or reversed): with several, the node slots interleave in the GPU's atomic order (see
tests/ops/parsing/test_core_ast.py, which compares trees instead). Its token buffer is sized by
the data (vyre declares it without a count): 2^18 words, as many as out_ast_nodes and (at 4096
statements) each scratch stack, so the grid (the largest buffer: the program has atomics) stays
the registered one; four cases reach 10x the registered vector.

Example::

    >>> nodes, vals, ops = [0] * 16, [0] * 64, [0] * 64
    >>> shunt([T.TOK_IDENTIFIER, T.TOK_PLUS, T.TOK_INTEGER], 0, 3, 0, nodes, vals, ops, 0)  # a + 1
    (8, 12)
    >>> [w if w != INV else -1 for w in nodes[:12]]  # VAR a, CONST 1, ADD(node 0, node 4)
    [2, -1, -1, 0, 1, -1, -1, 2, 3, 0, 4, -1]
"""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.parsing.c import tokens as T

from .core import U32, oracle, ru32

_P = "vyre-libs::parsing::"
INV = 0xFFFFFFFF
SLOTS = 64
ASSIGNS = (T.TOK_ASSIGN, T.TOK_PLUS_EQ, T.TOK_MINUS_EQ, T.TOK_STAR_EQ, T.TOK_SLASH_EQ)
PREC = {**{t: 1 for t in ASSIGNS}, T.TOK_OR: 2, T.TOK_AND: 3, T.TOK_EQ: 4, T.TOK_NE: 4, T.TOK_LT: 5, T.TOK_GT: 5,
        T.TOK_LE: 5, T.TOK_GE: 5, T.TOK_PLUS: 6, T.TOK_MINUS: 6, T.TOK_STAR: 7, T.TOK_SLASH: 7, T.TOK_PERCENT: 7}
# node.rs opcodes; a token outside the table reduces as ADD (vyre's default)
OPCODE = {**{t: 7 for t in ASSIGNS}, T.TOK_PLUS: 3, T.TOK_MINUS: 4, T.TOK_STAR: 5, T.TOK_SLASH: 6, T.TOK_PERCENT: 13,
          T.TOK_EQ: 14, T.TOK_NE: 15, T.TOK_LT: 16, T.TOK_GT: 17, T.TOK_LE: 18, T.TOK_GE: 19, T.TOK_AND: 20,
          T.TOK_OR: 21}


def shunt(tokens, start: int, end: int, count: int, nodes, vals, ops, base: int) -> tuple[int, int]:
    """One statement's shunting yard over ``tokens[start:end]``, writing nodes at the counter
    `count` (+4 per node, words past ``nodes`` dropped) and its stacks at ``base`` of `vals` /
    `ops` (lists, modified in place): (root or INV, final counter)."""
    st = {"v": 0, "o": 0, "count": count}

    def put(buf, i, x):
        if i < len(buf):
            buf[i] = x

    def get(buf, i):
        return buf[i] if i < len(buf) else 0

    def node(words) -> None:
        idx = st["count"]
        st["count"] = (idx + 4) & INV
        for k, w in enumerate(words):
            put(nodes, idx + k, w)
        put(vals, base + st["v"], idx)
        st["v"] += 1

    def reduce(op_tok) -> None:
        st["v"] -= 1
        right = get(vals, base + st["v"])
        st["v"] -= 1
        left = get(vals, base + st["v"])
        node([OPCODE.get(op_tok, 3), left, right, INV])

    def unwind(stop_at_lparen: bool) -> None:
        for _ in range(SLOTS):
            if st["o"] == 0:
                return
            st["o"] -= 1
            top = get(ops, base + st["o"])
            if top != T.TOK_LPAREN and st["v"] >= 2:
                reduce(top)
            if top == T.TOK_LPAREN and stop_at_lparen:
                return

    for p in range(start, end):
        tok = int(tokens[p]) if p < len(tokens) else 0
        if tok in (T.TOK_INTEGER, T.TOK_IDENTIFIER):
            node([1 if tok == T.TOK_INTEGER else 2, INV, INV, p])
        if tok in PREC:
            for _ in range(SLOTS):  # pop while the top binds tighter (or as tight, left-assoc)
                if st["o"] == 0:
                    break
                top = get(ops, base + st["o"] - 1)
                tp, cur = PREC.get(top, 0), PREC[tok]
                binds = top != T.TOK_LPAREN and tp != 0 and (tp > cur if tok in ASSIGNS else tp >= cur)
                if not (binds and st["v"] >= 2):
                    break
                st["o"] -= 1
                reduce(top)
        if tok in PREC or tok == T.TOK_LPAREN:
            put(ops, base + st["o"], tok)
            st["o"] += 1
        if tok == T.TOK_RPAREN:
            unwind(True)
    unwind(False)
    return (get(vals, base + st["v"] - 1) if st["v"] > 0 else INV), st["count"]


@oracle(_P + "ast_binding_strength", {"num_tokens": 300}, 0, "depth * 100 + table precedence: exact")
def _():
    def inputs(rng, p):
        n = p["num_tokens"]
        pool = np.asarray([T.TOK_STAR, T.TOK_SLASH, T.TOK_PLUS, T.TOK_MINUS, 0x3D, T.TOK_ASSIGN, T.TOK_IDENTIFIER, 0],
                          U32)
        return {"tok_types": np.where(rng.random(n) < 0.8, pool[rng.integers(0, len(pool), n)], ru32(rng, n)),
                "out_depths": np.where(rng.random(n) < 0.8, rng.integers(0, 50, n), ru32(rng, n)).astype(U32),
                "out_strengths": ru32(rng, n)}

    def numpy(ins, p):
        table = {T.TOK_STAR: 40, T.TOK_SLASH: 40, T.TOK_PLUS: 30, T.TOK_MINUS: 30, 0x3D: 10}
        prec = np.asarray([table.get(int(t), 0) for t in ins["tok_types"]], np.uint64)
        return {"out_strengths": ((ins["out_depths"].astype(np.uint64) * 100 + prec) & INV).astype(U32)}
    return inputs, numpy


@oracle(_P + "ast_cfg_blocks", {"num_statements": 300}, 0, "nearest if/while in the 31 tokens before: exact")
def _():
    def inputs(rng, p):
        n = p["num_statements"]
        pool = np.asarray([T.TOK_IF, T.TOK_WHILE, T.TOK_FOR, T.TOK_IDENTIFIER, T.TOK_SEMICOLON, 0], U32)
        kinds = pool[rng.integers(0, len(pool), 4 * n)]
        starts = np.where(rng.random(n) < 0.9, rng.integers(0, 4 * n + 40, n), ru32(rng, n)).astype(U32)
        return {"tok_types": np.where(rng.random(4 * n) < 0.15, kinds, T.TOK_IDENTIFIER).astype(U32),
                "statements": np.stack([starts, ru32(rng, n)], 1).reshape(-1), "out_block_headers": ru32(rng, n)}

    def numpy(ins, p):
        toks, out = ins["tok_types"], []
        for start in ins["statements"][0::2].astype(int):
            hits = [start - i for i in range(1, 32) if start >= i and start - i < len(toks)
                    and toks[start - i] in (T.TOK_IF, T.TOK_WHILE)]
            out.append(hits[0] if hits else INV)
        return {"out_block_headers": np.asarray(out, U32)}
    return inputs, numpy


_POOL = [T.TOK_IDENTIFIER, T.TOK_INTEGER, T.TOK_IDENTIFIER, T.TOK_INTEGER, *PREC, T.TOK_LPAREN, T.TOK_LPAREN,
         T.TOK_RPAREN, T.TOK_RPAREN, T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_IF]


@oracle(_P + "ast_shunting_yard", {"num_statements": 4096, "token_capacity": 65536, "statement_capacity": 4096}, 0,
        "shunting-yard model with its stacks and node slots: exact", repeats=4)
def _():
    def inputs(rng, p):
        n_tok, cap = 1 << 18, p["statement_capacity"]
        toks = np.asarray(_POOL, U32)[rng.integers(0, len(_POOL), n_tok)]
        live, start = int(rng.integers(0, cap)), int(rng.integers(0, n_tok - 64))
        # empty or reversed ranges for the other statements, near the live one (up to 24 tokens):
        # the reference runs a loop from the lanes' smallest start to their largest end, and its
        # step budget (charged per 4096 lanes of the 2^18-lane grid, for every 64-step operator
        # pop loop) allows about 30 tokens
        a = start + rng.integers(0, 25, cap)
        stm = np.stack([a, a - rng.integers(0, 3, cap)], 1).astype(U32)
        stm[live] = (start, start + rng.integers(1, 25))
        scratch = cap * SLOTS
        return {"tok_types": toks, "statements": stm.reshape(-1), "out_ast_nodes": ru32(rng, 4 * p["token_capacity"]),
                "out_ast_count": np.asarray([4 * rng.integers(0, 1000)], U32), "out_statement_roots": ru32(rng, cap),
                "scratch_val_stack": ru32(rng, scratch), "scratch_op_stack": ru32(rng, scratch)}

    def numpy(ins, p):
        nodes, vals, ops = (ins[k].astype(np.int64).tolist() for k in ("out_ast_nodes", "scratch_val_stack",
                                                                          "scratch_op_stack"))
        roots, count = ins["out_statement_roots"].copy(), int(ins["out_ast_count"][0])
        stm = ins["statements"].reshape(-1, 2)
        for t in range(min(len(stm), p["statement_capacity"])):
            roots[t], count = shunt(ins["tok_types"], int(stm[t, 0]), int(stm[t, 1]), count, nodes, vals, ops,
                                    t * SLOTS)
        return {"out_ast_nodes": np.asarray(nodes, U32), "out_ast_count": np.asarray([count], U32),
                "out_statement_roots": roots, "scratch_val_stack": np.asarray(vals, U32),
                "scratch_op_stack": np.asarray(ops, U32)}
    return inputs, numpy
