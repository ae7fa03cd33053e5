"""The C semantic passes (vyre_vk/ops/parsing/sema) over real text and edge cases.

Token streams come from windows of this system's C headers (/usr/include/stdio.h, stdlib.h,
string.h), lexed by the cursor-walk model of vyre's lexer (parsing_models.c_lex, itself checked
against the GPU lexer and a C11 regex tokenizer in test_real_files.py) with keywords promoted by
spelling. Each pass runs on Vulkan and on the reference (bit for bit) and is checked against the
Python models of tests/ops/oracles (sema_models.py, parsing_sema.py).
"""
import re
import shutil
import subprocess

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS
from vyre_vk.ops.parsing.sema import backend, preprocess, scope
from vyre_vk.ops.parsing.sema.declarations import opt_propagate_type_specifiers
from vyre_vk.reference import TrapError

from ..oracles.parsing_models import c_lex
from ..oracles.parsing_sema import (PP_ELIF, PP_ELSE, PP_ENDIF, PP_IF, PP_IFDEF, PP_IFNDEF, conditional_mask,
                                    elf_object)
from ..oracles.sema_models import propagate_types, scope_tree
from .test_real_files import HEADERS, code_window, run_both, source

U32 = np.uint32
_KW = dict(C_KEYWORDS)
_DIRECTIVE = {"if": PP_IF, "ifdef": PP_IFDEF, "ifndef": PP_IFNDEF, "elif": PP_ELIF, "else": PP_ELSE,
              "endif": PP_ENDIF, "define": 204, "undef": 205, "include": 206}


def header_tokens(src: bytes):
    """(types with keywords promoted, starts, lens) of `src`."""
    rows = c_lex(src)
    types = [_KW.get(src[s:s + n].decode(), t) if t == T.TOK_IDENTIFIER else t for t, s, n in rows]
    return (np.asarray(types, U32), np.asarray([r[1] for r in rows], U32), np.asarray([r[2] for r in rows], U32))


def brace_depths(types) -> np.ndarray:
    step = (types == T.TOK_LBRACE).astype(np.int64) - (types == T.TOK_RBRACE).astype(np.int64)
    return (np.cumsum(step) % (1 << 32)).astype(U32)


@pytest.mark.parametrize("path", HEADERS, ids=lambda p: p.name)
def test_c_sema_scope_on_a_header_window(path, vk_device):
    src = code_window(source(path))
    types, starts, lens = header_tokens(src)
    n = len(types)
    hay = np.frombuffer(src, np.uint8).astype(U32)
    ins = {"tok_types": types, "tok_starts": starts, "tok_lens": lens, "haystack": hay}
    got = run_both(scope.c_sema_scope(*scope.WITNESS_NAMES[:4], len(src), n, "out_scope_tree"), ins, vk_device,
                   ref=True)["out_scope_tree"]
    want = scope_tree(types, starts, lens, hay)
    np.testing.assert_array_equal(got, want)
    rows = want.reshape(-1, 4)
    # the window declares functions and their parameters (glibc's `) __THROW;` tails keep the
    # parameters in file scope: no `;` right after the `)`, no body), and interns every identifier
    assert (rows[:, 2] == 2).sum() > 3 and (rows[:, 2] == 3).sum() > 10
    ident = types == T.TOK_IDENTIFIER
    assert (rows[ident, 3] != 0).all() and (rows[~ident, 3] == 0).all()
    # identical spellings intern alike
    spell = {}
    for t in np.flatnonzero(ident):
        spell.setdefault(bytes(src[starts[t]:starts[t] + lens[t]]), set()).add(int(rows[t, 3]))
    assert all(len(ids) == 1 for ids in spell.values())


def test_sema_phase_programs_on_a_header_window(vk_device):
    src = code_window(source(HEADERS[0]))
    types, starts, lens = header_tokens(src)
    hay = np.frombuffer(src, np.uint8).astype(U32)
    ins = {"tok_types": types, "tok_starts": starts, "tok_lens": lens, "haystack": hay}
    from ..oracles.parsing_sema import SCOPE_PHASES
    for phase in scope.PHASES:
        cols, how = SCOPE_PHASES[phase]
        p = scope.c_sema_scope_phase(phase, *scope.WITNESS_NAMES[:4], len(src), len(types), "out_scope_tree")
        got = run_both(p, ins, vk_device, ref=True)["out_scope_tree"]
        np.testing.assert_array_equal(got, scope_tree(types, starts, lens, hay, cols, how), err_msg=phase)


def test_sema_scope_region_tree_is_vyres():
    p = scope.c_sema_scope(*scope.WITNESS_NAMES[:4], 16, 14, "out_scope_tree")
    outer = p.entry[0]
    assert (outer.generator, outer.source_region) == (scope.OP_ID, None) and p.non_composable_with_self
    phases = outer.body[0].then
    assert [(r.generator, r.source_region) for r in phases] == [(scope.SCOPE, scope.OP_ID), (scope.DECL, scope.OP_ID),
                                                                  (scope.INTERN, scope.OP_ID)]
    nested = [n for n in phases[0].body if hasattr(n, "generator")]
    assert [(r.generator, r.source_region) for r in nested] == [(scope.BRACE, scope.SCOPE), (scope.FN_PARAMS, scope.SCOPE)]
    for phase in scope.PHASES:
        q = scope.c_sema_scope_phase(phase, *scope.WITNESS_NAMES[:4], 16, 14, "out_scope_tree")
        body = q.entry[0].body[0].then[0]
        assert (q.entry[0].generator, body.generator, body.source_region) == (phase, f"anonymous::{phase}.body", phase)


def test_function_parameter_scopes_in_definitions_and_prototypes(vk_device):
    """`int f(int a) { a; }` and `void g(char b);`: a's scope is the body brace, b's the `(`."""
    toks = [T.TOK_INT, 1, T.TOK_LPAREN, T.TOK_INT, 1, T.TOK_RPAREN, T.TOK_LBRACE, 1, T.TOK_SEMICOLON, T.TOK_RBRACE,
            T.TOK_VOID, 1, T.TOK_LPAREN, T.TOK_CHAR_KW, 1, T.TOK_RPAREN, T.TOK_SEMICOLON]
    n = len(toks)
    ins = {"tok_types": np.asarray(toks, U32), "tok_starts": np.zeros(n, U32), "tok_lens": np.zeros(n, U32),
           "haystack": np.zeros(4, U32)}
    got = run_both(scope.c_sema_scope(*scope.WITNESS_NAMES[:4], 4, n, "out_scope_tree"), ins, vk_device,
                   ref=True)["out_scope_tree"].reshape(-1, 4)
    assert got[4, :3].tolist() == [7, 0, 3]     # a: the body `{` at 6, a variable
    assert got[7, :2].tolist() == [7, 0]        # a in the body
    assert got[14, :3].tolist() == [13, 0, 3]   # b: the prototype's `(` at 12
    assert got[1, 2] == 1 and got[11, 2] == 2   # f defined, g declared


@pytest.mark.parametrize("path", HEADERS, ids=lambda p: p.name)
def test_propagate_type_specifiers_on_a_header_window(path, vk_device):
    types, _, _ = header_tokens(code_window(source(path)))
    depths = brace_depths(types)
    got = run_both(opt_propagate_type_specifiers("tok_types", "tok_depths", "node_out", len(types)),
                   {"tok_types": types, "tok_depths": depths}, vk_device, ref=True)["node_out"]
    np.testing.assert_array_equal(got, propagate_types(types, depths))
    assert np.isin(got, [T.TOK_INT, T.TOK_CHAR_KW, T.TOK_VOID]).sum() > 10


def header_directives(src: bytes):
    """Token types, directive kinds (by the directive's name) and values (1 for `#ifndef`,
    `#else`-free defaults otherwise: whether the condition text mentions `defined`)."""
    rows = c_lex(src)
    kinds, values = [], []
    for t, s, n in rows:
        m = re.match(rb"#\s*(\w+)(.*)", src[s:s + n], re.S) if t == T.TOK_PREPROC else None
        kinds.append(_DIRECTIVE.get(m.group(1).decode(), 203) if m else 0)
        values.append(int(bool(m) and (m.group(1) == b"ifndef" or b"defined" in m.group(2))))
    return (np.asarray([r[0] for r in rows], U32), np.asarray(kinds, U32), np.asarray(values, U32))


@pytest.mark.parametrize("path", HEADERS[:2], ids=lambda p: p.name)
def test_conditional_mask_over_a_whole_header(path, vk_device):
    types, kinds, values = header_directives(source(path))
    assert (kinds == PP_ENDIF).sum() > 5
    p = preprocess.opt_conditional_mask_with_directives("tok_types", "k", "v", "mask", len(types))
    got = run_both(p, {"tok_types": types, "k": kinds, "v": values, "mask": np.zeros(len(types), U32)}, vk_device,
                   ref=True)["mask"]
    want = conditional_mask(types, kinds, values)
    np.testing.assert_array_equal(got, want)
    assert 0 < want.sum() < len(want)


@pytest.mark.parametrize("kinds, tag", [([PP_ENDIF], "endif-without-open"), ([PP_IF, 0], "unclosed"),
                                        ([PP_ELSE], "else-without-open"), ([PP_IF] * 32, "nesting-overflow")])
def test_conditional_mask_traps_on_malformed_nesting(kinds, tag):
    n = len(kinds)
    p = preprocess.opt_conditional_mask_with_directives("tok_types", "k", "v", "mask", n)
    with pytest.raises(TrapError, match=tag):
        reference.run(p, {"tok_types": np.full(n, T.TOK_PREPROC, U32), "k": np.asarray(kinds, U32),
                          "v": np.ones(n, U32), "mask": np.zeros(n, U32)})


def test_dynamic_macro_expansion_over_header_token_types(vk_device):
    """Header token types as the stream; `(` -> `( (`, `;` -> nothing, `*` -> `* *`."""
    types, _, _ = header_tokens(code_window(source(HEADERS[1])))
    stream = types[:12]
    macros = {T.TOK_LPAREN: [T.TOK_LPAREN] * 2, T.TOK_SEMICOLON: [], T.TOK_STAR: [T.TOK_STAR] * 2}
    keys, vals, sizes = preprocess.macro_table(macros)
    cap = 3 * len(stream)
    p = preprocess.opt_dynamic_macro_expansion("in", "keys", "vals", "sizes", "out", "count", len(stream), cap)
    ins = {"in": stream, "keys": np.asarray(keys, U32), "vals": np.asarray(vals, U32),
           "sizes": np.asarray(sizes, U32), "out": np.zeros(cap, U32), "count": np.zeros(1, U32)}
    got = run_both(p, ins, vk_device, ref=True)
    flat = [w for t in stream.tolist() for w in macros.get(t, [t])]
    assert got["count"].tolist() == [len(flat)] and got["out"][:len(flat)].tolist() == flat


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils' readelf is not installed")
def test_lower_elf_output_is_an_object_readelf_reads(tmp_path, vk_device):
    words = np.asarray([0x90909090, 0xC3909090], U32)  # nop x7, ret
    p = backend.opt_lower_elf("ssa", "obj", len(words))
    got = run_both(p, {"ssa": words, "obj": np.zeros(4096, U32)}, vk_device, ref=True)["obj"]
    np.testing.assert_array_equal(got, elf_object(words))
    path = tmp_path / "text.o"
    path.write_bytes(got.tobytes())
    out = subprocess.run(["readelf", "-h", "-S", str(path)], capture_output=True, text=True, check=True).stdout
    assert "REL (Relocatable file)" in out and "X86-64" in out
    assert re.search(r"\.text\s+PROGBITS", out) and re.search(r"\.shstrtab\s+STRTAB", out)


def test_semantic_graph_resolves_a_function_body(vk_device):
    """`void f() { switch (x) { case 1: break; default: goto out; } out: return; }` plus a label
    `out` of another function: the goto takes its own function's label."""
    from vyre_vk.ops.parsing.sema import pg_semantic_tables as S
    from vyre_vk.ops.parsing.sema import vast_kinds as K
    from vyre_vk.ops.parsing.sema.pg_semantic import c_lower_ast_to_pg_semantic_graph

    from ..oracles.sema_models import pg_semantic_graph
    X, H = 0xFFFFFFFF, 0x5EED
    tree = [  # kind, parent, first_child, next_sibling, symbol hash
        (K.C_AST_KIND_FUNCTION_DEFINITION, X, 1, X, 0), (K.BASIC_BLOCK, 0, 2, X, 0),
        (K.C_AST_KIND_SWITCH_STMT, 1, X, 3, 0), (K.BINARY, 1, 4, 5, 0), (K.VARIABLE, 3, X, X, 0),
        (K.BASIC_BLOCK, 1, 6, 12, 0), (K.C_AST_KIND_CASE_STMT, 5, X, 7, 0), (K.LITERAL, 5, X, 8, 0),
        (K.C_AST_KIND_BREAK_STMT, 5, X, 9, 0), (K.C_AST_KIND_DEFAULT_STMT, 5, X, 10, 0),
        (K.C_AST_KIND_GOTO_STMT, 5, X, 11, 0), (K.VARIABLE, 5, X, X, H),
        (K.C_AST_KIND_LABEL_STMT, X, X, X, H), (K.C_AST_KIND_LABEL_STMT, 1, X, 14, H),
        (K.C_AST_KIND_RETURN_STMT, 1, X, X, 0)]
    vast = np.asarray([w for k, p, c, s, h in tree for w in (k, p, c, s, X, 0, 1, 0, 0, h)], U32)
    got = run_both(c_lower_ast_to_pg_semantic_graph("vast", len(tree), "nodes", "edges"), {"vast": vast}, vk_device,
                   ref=True)
    nodes, edges = pg_semantic_graph(vast, len(tree))
    np.testing.assert_array_equal(got["nodes"], nodes)
    np.testing.assert_array_equal(got["edges"], edges)
    slots = got["edges"].reshape(len(tree), 5, 6)[:, 3:, :3].tolist()
    none = [S.EDGE_NONE, X, X]
    assert slots[2] == [[S.EDGE_SWITCH_SELECTOR, 2, 4], none]
    assert slots[6] == [[S.EDGE_CASE_VALUE, 6, 7], [S.EDGE_SWITCH_CASE, 2, 6]]
    assert slots[9] == [[S.EDGE_SWITCH_DEFAULT, 2, 9], none]
    assert slots[10] == [[S.EDGE_GOTO_TARGET, 10, 13], none]
    assert got["nodes"].reshape(-1, 10)[10, 6:8].tolist() == [S.CATEGORY_CONTROL, S.ROLE_GOTO]
