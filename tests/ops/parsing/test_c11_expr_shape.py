"""`vyre-libs::parsing::c11_build_expression_shape_nodes` (vyre_vk/ops/parsing/c/expr_shape.py):
vyre's registered witness on the reference and Vulkan, expressions with known precedence whose
rows are written out from the C grammar (and the one place vyre's rows leave it, pinned), the GPU
program on the reference equal to vyre's CPU oracle (vast_ref/expr_shape.py) on expression code
from real headers (inline functions of linux/cec-funcs.h, the function-like macro bodies
of bits/byteswap.h, bits/waitstatus.h and bits/sysmacros.h), one header on Vulkan, and the two
shapes where vyre's GPU builder and its oracle differ.

Inputs: raw VAST rows (vast_rows of the C lexer model's tokens, keywords promoted) and the typed
rows vyre's classify oracle makes of them.
"""
import doctest
import functools
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import ops, reference
from vyre_vk.errors import InputError
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.expr_shape import (WITNESS_RAW, WITNESS_TYPED, c11_build_expression_shape_nodes,
                                              c11_build_expression_shape_nodes_no_conditional)
from vyre_vk.ops.parsing.c.vast_ref import reference_classify_vast_node_kinds as classify
from vyre_vk.ops.parsing.c.vast_ref.expr_shape import reference_build_expression_shape_nodes as oracle
from vyre_vk.ops.registry import OpParamError
from vyre_vk.testing.vectors import expected_arrays

from ..oracles.parsing_models import c_lex
from .test_c11_vast_ref import c_rows

S = 0xFFFFFFFF
U32 = np.uint32
OP_ID = "vyre-libs::parsing::c11_build_expression_shape_nodes"
LEFT, RIGHT = 1, 2
MODULES = ["vyre_vk.ops.parsing.c.expr_shape", "vyre_vk.ops.parsing.c.expr_shape_scan",
           "tests.ops.oracles.parsing_c11_expr_models"]


def binary(i, tok, prec, assoc, lhs, rhs):
    return i, [1, i, tok, prec, assoc, lhs, rhs, S]


def conditional(i, cond, then, other):
    return i, [2, i, T.TOK_QUESTION, 3, RIGHT, cond, then, other]


def expected_rows(raw: list[int], operators: list) -> list[int]:
    """NONE rows for every node, then the listed operator rows."""
    rows = [[0, S, raw[i * 10], 0, 0, S, S, S] for i in range(len(raw) // 10)]
    for i, row in operators:
        rows[i] = row
    return sum(rows, [])


def gpu_rows(raw: list[int], typed: list[int], program=None, device=None) -> list[int]:
    n = len(raw) // 10
    program = program or c11_build_expression_shape_nodes("raw", "typed", n, "out")
    ins = {"raw": np.asarray(raw, U32), "typed": np.asarray(typed, U32)}
    run = device.compile(program).run if device is not None else (lambda i: reference.run(program, i, max_steps=0))
    return run(ins)["out"].tolist()


def test_registered_vector_is_vyres_witness_on_reference_and_vulkan(vk_device):
    # a + b * c ? d + e : f * g ;  (indices 0..13)
    want = expected_rows(WITNESS_RAW, [
        binary(1, T.TOK_PLUS, 12, LEFT, 0, 3),     # a + (b*c): the `?` (looser) bounds its right operand
        binary(3, T.TOK_STAR, 13, LEFT, 2, 4),     # b * c: the `+` before and `?` after bound it
        conditional(5, 1, 7, 11),                  # (a + b*c) ? (d + e) : (f * g)
        binary(7, T.TOK_PLUS, 12, LEFT, 6, 8),     # d + e inside the then part (bounded by ? and :)
        binary(11, T.TOK_STAR, 13, LEFT, 10, 12)])  # f * g after the `:`
    assert oracle(WITNESS_RAW, WITNESS_TYPED) == want
    entry = ops.get(OP_ID)
    program = entry.build()
    case = entry.test_inputs()[0]
    exp = expected_arrays(entry, program, entry.expected_output()[0])["out_expr_shape_nodes"]
    assert exp.tolist() == want
    assert reference.run(program, case)["out_expr_shape_nodes"].tolist() == want
    got = vk_device.compile(program).run({"raw_vast_nodes": np.asarray(WITNESS_RAW, U32),
                                          "typed_vast_nodes": np.asarray(WITNESS_TYPED, U32)})
    assert got["out_expr_shape_nodes"].tolist() == want


@pytest.mark.parametrize("src, operators", [
    ("a + b * c;", [binary(1, T.TOK_PLUS, 12, LEFT, 0, 3), binary(3, T.TOK_STAR, 13, LEFT, 2, 4)]),
    ("a ? b : c;", [conditional(1, 0, 2, 4)]),
    # (a + b) * c: `*`'s left operand is the parenthesised sum, whose root is the `+`. The `+` row's right
    # operand is the `*` (5), not `b`: vyre's root scan runs to the segment end past the `)` and lets
    # operators under any parent compete (a vyre quirk, kept)
    ("(a + b) * c;", [binary(2, T.TOK_PLUS, 12, LEFT, 1, 5), binary(5, T.TOK_STAR, 13, LEFT, 2, 6)]),
    ("a - b - c;", [binary(1, T.TOK_MINUS, 12, LEFT, 0, 2), binary(3, T.TOK_MINUS, 12, LEFT, 1, 4)]),  # (a-b)-c
    ("a = b = c;", [binary(1, T.TOK_ASSIGN, 2, RIGHT, 0, 3), binary(3, T.TOK_ASSIGN, 2, RIGHT, 2, 4)]),  # a=(b=c)
    ("x = a ? b : c;", [binary(1, T.TOK_ASSIGN, 2, RIGHT, 0, 3), conditional(3, 2, 4, 6)]),
    ("a ? b : c ? d : e;", [conditional(1, 0, 2, 5), conditional(5, 4, 6, 8)]),  # a ? b : (c ? d : e)
    ("a || b && c;", [binary(1, T.TOK_OR, 4, LEFT, 0, 3), binary(3, T.TOK_AND, 5, LEFT, 2, 4)]),
    ("a < b == c;", [binary(1, T.TOK_LT, 10, LEFT, 0, 2), binary(3, T.TOK_EQ, 9, LEFT, 1, 4)]),  # (a<b)==c
    ("x += a << 1 | b;", [binary(1, T.TOK_PLUS_EQ, 2, RIGHT, 0, 5), binary(3, T.TOK_LSHIFT, 11, LEFT, 2, 4),
                          binary(5, T.TOK_PIPE, 6, LEFT, 3, 6)]),  # x += ((a<<1) | b)
    ("p = a, q = b;", [binary(1, T.TOK_ASSIGN, 2, RIGHT, 0, 2), binary(5, T.TOK_ASSIGN, 2, RIGHT, 4, 6)]),
])
def test_rows_follow_c_precedence(src, operators):
    raw = c_rows(src)
    typed = classify(raw)
    want = expected_rows(raw, operators)
    assert oracle(raw, typed) == want
    assert gpu_rows(raw, typed) == want


@pytest.mark.parametrize("src, gpu_row, oracle_row", [
    # the second `?`'s condition: the GPU starts after the `=` (its plain segment's last assignment)
    # and finds `?` #1 as the root; vyre's oracle starts after the `:` and finds `c`
    ("x = a ? b : c ? d : e;", (7, [2, 7, T.TOK_QUESTION, 3, RIGHT, 3, 8, 10]),
     (7, [2, 7, T.TOK_QUESTION, 3, RIGHT, 6, 8, 10])),
    # a `?` without `:`: the GPU keeps the condition root, the oracle writes SENTINEL
    ("a ? b;", (1, [2, 1, T.TOK_QUESTION, 3, RIGHT, 0, S, S]), (1, [2, 1, T.TOK_QUESTION, 3, RIGHT, S, S, S])),
])
def test_gpu_and_oracle_differ_where_vyres_do(src, gpu_row, oracle_row):
    raw = c_rows(src)
    typed = classify(raw)
    got, want = gpu_rows(raw, typed), oracle(raw, typed)
    i = gpu_row[0]
    assert got[i * 8:i * 8 + 8] == gpu_row[1] and want[i * 8:i * 8 + 8] == oracle_row[1]
    assert got[:i * 8] + got[i * 8 + 8:] == want[:i * 8] + want[i * 8 + 8:]


def _header(path: str) -> bytes:
    p = Path(path)
    if not p.exists():
        pytest.skip(f"{path} is not on this system")
    return p.read_bytes()


def inline_functions(path: str, min_tokens: int) -> str:
    """From the header's first ``static`` to the first function-closing ``}`` `min_tokens` tokens on."""
    src = _header(path).decode()
    rows = c_lex(src.encode())
    start = next(i for i, (k, s, n) in enumerate(rows) if src[s:s + n] == "static")
    depth = 0
    for i in range(start, len(rows)):
        k = rows[i][0]
        depth += (k == T.TOK_LBRACE) - (k == T.TOK_RBRACE)
        if k == T.TOK_RBRACE and depth == 0 and i - start >= min_tokens:
            return src[rows[start][1]:rows[i][1] + 1]
    raise AssertionError(f"{path}: no function ends {min_tokens} tokens after the first `static`")


def macro_bodies(*paths: str) -> str:
    """The bodies of the headers' function-like macros, one expression statement each."""
    out = []
    for path in paths:
        src = _header(path)
        for k, s, n in c_lex(src):
            m = re.match(r"#\s*define\s+\w+\([^)]*\)\s+(.*)", src[s:s + n].decode().replace("\\\n", " "), re.S)
            if k == T.TOK_PREPROC and m:
                out.append(m.group(1).strip() + ";")
    return "\n".join(out)


_BITS = "/usr/include/x86_64-linux-gnu/bits/"
SOURCES = {
    "cec-funcs.h": lambda: inline_functions("/usr/include/linux/cec-funcs.h", 400),
    "macros": lambda: macro_bodies(_BITS + "byteswap.h", _BITS + "waitstatus.h", _BITS + "sysmacros.h"),
}


@functools.lru_cache(maxsize=None)
def header_case(name: str) -> tuple[list[int], list[int], list[int]]:
    """Raw and typed rows of a SOURCES entry and the GPU program's rows on the reference."""
    raw = c_rows(SOURCES[name]())
    typed = classify(raw)
    return raw, typed, gpu_rows(raw, typed)


@pytest.mark.parametrize("name, min_shapes", [("cec-funcs.h", 35), ("macros", 15)])
def test_gpu_program_equals_vyres_oracle_on_header_expressions(name, min_shapes):
    raw, typed, got = header_case(name)
    want = oracle(raw, typed)
    assert sum(1 for w in want[0::8] if w) >= min_shapes
    assert got == want


def test_vulkan_equals_reference_on_a_header(vk_device):
    raw, typed, want = header_case("cec-funcs.h")
    assert gpu_rows(raw, typed, device=vk_device) == want


def test_no_conditional_variant():
    """vyre's variant: binary rows as the full builder's where no `?:` is near; a `?` row keeps its
    shape but SENTINEL operands; a binary after `?` or `:` is not bounded by them (only by the looser
    `?` as an operator), so in ``a ? b : c + d`` the `+`'s left operand root is `b`."""
    build = lambda n: c11_build_expression_shape_nodes_no_conditional("raw", "typed", n, "out")  # noqa: E731
    raw = c_rows("x = a + b * c;")
    typed = classify(raw)
    assert gpu_rows(raw, typed, build(len(raw) // 10)) == oracle(raw, typed)
    raw = c_rows("a ? b : c + d;")
    typed = classify(raw)
    want = expected_rows(raw, [(1, [2, 1, T.TOK_QUESTION, 3, RIGHT, S, S, S]),
                               binary(5, T.TOK_PLUS, 12, LEFT, 2, 6)])  # left operand: from after the `?`
    assert gpu_rows(raw, typed, build(len(raw) // 10)) == want


def test_bad_arguments():
    with pytest.raises(OpParamError, match="num_nodes.*Fix:"):
        c11_build_expression_shape_nodes("raw", "typed", -1, "out")
    with pytest.raises(InputError, match="typed rows for .* raw rows.*Fix:"):
        oracle(WITNESS_RAW, WITNESS_TYPED[:-10])
    with pytest.raises(InputError, match="stride 10"):
        oracle(WITNESS_RAW[:-1], WITNESS_TYPED)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
