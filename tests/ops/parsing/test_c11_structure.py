"""The C11 structure extractors and GNU passes (vyre_vk/ops/parsing/c: extract.py, call_graph.py,
gnu_passes.py, layout.py) on real C: the system's bits/stdio.h (inline function definitions with
calls) and a code window of stdio.h (prototypes only), lexed by the C lexer's cursor-walk model
(tests/ops/oracles/parsing_models.c_lex, equal to the c_lexer op on these headers in
test_real_files.py) with keywords promoted by spelling and paren/brace pairs from a stack.
Vulkan is compared with the reference bit for bit and both with the rule models of
tests/ops/oracles/parsing_c11_models.py; the call graph's edges are compared as a sorted list
(their order is the atomic's, see call_graph.py). Plus the traps and the ABI variants.
"""
import doctest
import functools
import importlib
from pathlib import Path

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ops.registry import OpParamError
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.call_graph import c11_build_call_graph
from vyre_vk.ops.parsing.c.cfg import VECTOR_EXPECTED as CFG_VECTOR_EXPECTED, VECTOR_INPUTS as CFG_VECTOR_INPUTS
from vyre_vk.ops.parsing.c.cfg import c11_build_cfg_and_gotos
from vyre_vk.ops.parsing.c.extract import c11_extract_calls, c11_extract_functions
from vyre_vk.ops.parsing.c.gnu_passes import (GNU_INLINE_ASM_OPCODE, c11_gnu_builtins_pass,
                                              c11_gnu_inline_asm_pass)
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS, fnv1a32
from vyre_vk.ops.parsing.c.layout import c11_compute_alignments_for_abi
from vyre_vk.ops.parsing.c.vast import VAST_LAST_CHILD_WORKGROUP_MAX_U32, c11_build_vast_nodes_v2, uses_global_scratch
from vyre_vk.reference.eval import TrapError
from vyre_vk.runtime import KernelTrapError

from ..oracles.parsing_c11_models import (LP, LB, NONE, RB, RP, alignments_model, call_graph_model, calls_model,
                                          cfg_inputs, cfg_model, functions_model, pairs_of, vast_model)
from ..oracles.parsing_models import c_lex
from .test_real_files import HEADERS, code_window, run_both, source

U32 = np.uint32
BITS_STDIO = Path("/usr/include/x86_64-linux-gnu/bits/stdio.h")


def lexed(path: Path, window: bool) -> tuple[bytes, list[int], list[int], list[int]]:
    src = source(path)
    src = code_window(src) if window else src
    keywords = dict(C_KEYWORDS)
    rows = c_lex(src)
    types = [keywords.get(src[s:s + n].decode(), k) if k == T.TOK_IDENTIFIER else k for k, s, n in rows]
    return src, types, [s for _, s, _ in rows], [n for _, _, n in rows]


def structure(path: Path, window: bool, device, externs: tuple[str, ...] = ()):
    """functions -> calls -> call graph over the header, each checked; returns the named results.
    The call graph's function table is the defined functions' names then `externs` (functions
    the header calls but only declares, as a linker's symbol table would list them)."""
    src, types, starts, lens = lexed(path, window)
    n = len(types)
    pp, bp = pairs_of(types, LP, RP), pairs_of(types, LB, RB)
    a = lambda x: np.asarray(x, U32)  # noqa: E731
    got = run_both(c11_extract_functions("tok_types", "paren_pairs", "brace_pairs", n, "fns", "counts"),
                   {"tok_types": a(types), "paren_pairs": a(pp), "brace_pairs": a(bp), "counts": a([7])},
                   device, ref=True)
    want_fns, count = functions_model(types, pp, bp, n)
    assert got["fns"].tolist() == want_fns and got["counts"].tolist() == [count]
    recs = got["fns"].reshape(-1, 3)
    dense = [r for r in recs.tolist() if r[1]]  # a record's body_open is > 0
    name = lambda t: src[starts[t]:starts[t] + lens[t]].decode()  # noqa: E731

    nf = len(dense)
    got = run_both(c11_extract_calls("tok_types", "paren_pairs", "functions", n, nf, "calls", "counts"),
                   {"tok_types": a(types), "paren_pairs": a(pp), "functions": a(sum(dense, []) or [0, 0, 0]),
                    "counts": a([0])}, device, ref=True)
    want_calls, count = calls_model(types, pp, sum(dense, []), nf, n)
    assert got["calls"].tolist() == want_calls and got["counts"].tolist() == [count]
    calls = [r for r in got["calls"].reshape(-1, 4).tolist() if r[1]]

    nc = len(calls)
    if not (nf and nc):  # nothing to link (a Vulkan buffer holds at least one element)
        return {"functions": [name(r[0]) for r in dense], "edges": [],
                "calls": [(None, name(r[1])) for r in calls]}
    hay = np.zeros(max(16 * nc, len(src)), U32)
    hay[:len(src)] = np.frombuffer(src, np.uint8)
    table = [name(r[0]) for r in dense] + list(externs)
    hashes = [fnv1a32(x.encode()) for x in table]
    ins = {"calls": a(sum(calls, [])), "fn_hashes": a(hashes), "tok_starts": a(starts), "tok_lens": a(lens),
           "haystack": hay, "out_edges": np.zeros(4 * nc, U32), "out_counts": a([0])}
    program = c11_build_call_graph("calls", "fn_hashes", "tok_starts", "tok_lens", "haystack", nc, len(table), n,
                                   "out_edges", "out_counts")
    got = device.compile(program).run(ins)
    ref = reference.run(program, ins, max_steps=0)
    edges, count = call_graph_model(ins["calls"].tolist(), hashes, starts, lens, hay.tolist(), [0] * 4 * nc, 0, nc)
    for out in (got, ref):
        assert out["out_counts"].tolist() == [count]
        pairs = sorted(map(tuple, out["out_edges"][:count].reshape(-1, 2).tolist()))
        assert pairs == sorted(map(tuple, np.reshape(edges[:count], (-1, 2)).tolist()))
        assert not out["out_edges"][count:].any()
    return {"functions": [name(r[0]) for r in dense],
            "calls": [(name(dense[r[0]][0]) if r[0] != NONE else None, name(r[1])) for r in calls],
            "edges": sorted((name(dense[c][0]), table[f]) for c, f in np.reshape(edges[:count], (-1, 2)))}


def test_structure_of_bits_stdio_h(vk_device):
    got = structure(BITS_STDIO, False, vk_device, externs=("vfprintf", "getc", "putc", "__getdelim"))
    assert {"vprintf", "getchar", "fgetc_unlocked", "getc_unlocked", "putchar"} <= set(got["functions"])
    assert {("getchar", "getc"), ("fgetc_unlocked", "__getc_unlocked_body")} <= set(got["calls"])
    assert {("vprintf", "vfprintf"), ("getchar", "getc"), ("putchar", "putc"), ("getline", "__getdelim")} \
        <= set(got["edges"])
    assert len(got["functions"]) >= 8 and len(got["calls"]) >= 10


def test_structure_of_a_stdio_h_window_finds_prototypes_not_definitions(vk_device):
    got = structure(HEADERS[0], True, vk_device)
    assert got["functions"] == [] and got["edges"] == []
    # no definitions: every record is a call-shaped use (attribute/macro arguments), no caller
    assert all(caller is None for caller, _ in got["calls"])


def test_unknown_gnu_builtin_tag_traps(vk_device):
    program = c11_gnu_builtins_pass("ast", "out_ast", 4)
    ins = {"ast": np.asarray([1, 0x45585043, 0x474E5542, 2], U32), "out_ast": np.zeros(4, U32)}
    with pytest.raises(TrapError, match="unsupported-gnu-builtin-opcode"):
        reference.run(program, ins)
    with pytest.raises(KernelTrapError, match="unsupported-gnu-builtin-opcode"):
        vk_device.compile(program).run(ins)


def test_inline_asm_registry_overflow_traps(vk_device):
    program = c11_gnu_inline_asm_pass("ast", "out_asm", 4)
    ins = {"ast": np.asarray([GNU_INLINE_ASM_OPCODE] * 2 + [0, 0], U32), "out_asm": np.zeros(4, U32),
           "out_asm_counts": np.asarray([3], U32)}
    with pytest.raises(TrapError, match="inline-asm-registry-overflow"):
        reference.run(program, ins)
    with pytest.raises(KernelTrapError, match="inline-asm-registry-overflow"):
        vk_device.compile(program).run(ins)


@pytest.mark.parametrize("abi", [(4, 4, 4), (8, 4, 4), (4, 8, 8)])
def test_alignments_follow_the_data_model(abi, vk_device):
    kinds = np.asarray([0, 1, 2, 3, 4, 5, 0xFFFFFFFF], U32)
    program = c11_compute_alignments_for_abi("types", "sizes", "aligns", 7, *abi)
    got = run_both(program, {"types": kinds, "sizes": np.zeros(7, U32), "aligns": np.zeros(7, U32)}, vk_device,
                   ref=True)
    sizes, aligns = alignments_model(kinds.tolist(), *abi)
    assert got["sizes"].tolist() == sizes and got["aligns"].tolist() == aligns


def test_builders_reject_bad_parameters():
    with pytest.raises(OpParamError, match="Fix:"):
        c11_compute_alignments_for_abi("t", "s", "a", 4, 2, 8, 8)
    with pytest.raises(OpParamError, match="Fix:"):
        c11_extract_functions("a", "b", "c", 0, "d", "e")
    with pytest.raises(OpParamError, match="Fix:"):
        c11_build_call_graph("a", "b", "c", "d", "e", -1, 1, 1, "f", "g")


@pytest.mark.parametrize("name", [f"vyre_vk.ops.parsing.c.{m}" for m in
                                  ("structure", "extract", "call_graph", "gnu_passes", "layout", "vast", "cfg")]
                         + ["tests.ops.oracles.parsing_c11_models"])
def test_module_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def vast_inputs(paths) -> tuple[dict, list[int]]:
    types, starts, lens, base = [], [], [], 0
    for path in paths:
        src, t, s, ln = lexed(path, False)
        types += t
        starts += [x + base for x in s]
        lens += ln
        base += len(src)
    a = lambda x: np.asarray(x, U32)  # noqa: E731
    return {"tok_types": a(types), "tok_starts": a(starts), "tok_lens": a(lens)}, vast_model(types, starts, lens)


def test_vast_rows_of_bits_stdio_h(vk_device):
    """Workgroup-memory scratch (the header's tokens fit): Vulkan = reference = the child-list model."""
    ins, want = vast_inputs([BITS_STDIO])
    n = ins["tok_types"].size
    got = run_both(c11_build_vast_nodes_v2("tok_types", "tok_starts", "tok_lens", n, "vast", "count"), ins,
                   vk_device, ref=True)
    assert got["vast"].tolist() == want and got["count"].tolist() == [n]
    assert sum(w != NONE for w in want[2::10]) > 30  # parents with children


@functools.lru_cache(maxsize=1)
def _past_the_limit():
    ins, _ = vast_inputs(HEADERS + [BITS_STDIO])
    reps = VAST_LAST_CHILD_WORKGROUP_MAX_U32 // ins["tok_types"].size + 1
    n = VAST_LAST_CHILD_WORKGROUP_MAX_U32 + 1  # one token past the limit, cut mid-header
    ins = {k: np.tile(x, reps)[:n] for k, x in ins.items()}
    program = c11_build_vast_nodes_v2("tok_types", "tok_starts", "tok_lens", n, "vast", "count")
    assert uses_global_scratch(n) and [b.binding for b in program.buffers[-2:]] == [5, 6]
    want = vast_model(*(ins[k].tolist() for k in ("tok_types", "tok_starts", "tok_lens")))
    ins.update({"__vast_last_child": np.zeros(n, U32), "__vast_stack": np.zeros(n, U32)})
    return program, ins, want


def test_vast_rows_past_the_workgroup_scratch_limit(vk_device):
    """Above 12288 tokens the scratch arrays are storage buffers (bindings 5, 6, nothing
    returned): the three headers and bits/stdio.h, repeated past the limit, on Vulkan."""
    program, ins, want = _past_the_limit()
    got = vk_device.compile(program).run(dict(ins))
    assert got["vast"].tolist() == want and got["count"].tolist() == [ins["tok_types"].size]
    assert got["__vast_last_child"].size == got["__vast_stack"].size == 0  # byte range (0, 0)


@pytest.mark.slow
def test_vast_rows_past_the_workgroup_scratch_limit_reference():
    """The same on the reference (7 s; one invocation: lane 0 writes every row itself)."""
    program, ins, want = _past_the_limit()
    ref = reference.run(program, ins, grid=(1, 1, 1), max_steps=0)
    assert ref["vast"].tolist() == want


@pytest.mark.parametrize("seed", [0, 1])
def test_cfg_goto_resolution_vulkan_reference_and_model(seed, vk_device):
    """c11_build_cfg_and_gotos (builder only, not registered: see cfg.py) on vyre's vector and on
    random label/goto streams in one workgroup (where the label and goto phases are ordered)."""
    program = c11_build_cfg_and_gotos("ssa", "cfg", "labels", 5)
    names = ("ssa", "cfg", "labels", "goto_labels_keys", "goto_labels_vals")
    ins = {k: np.frombuffer(b, U32).copy() for k, b in zip(names, CFG_VECTOR_INPUTS)}
    got = run_both(program, ins, vk_device, ref=True)
    assert [got[k].tobytes() for k in names[1:]] == CFG_VECTOR_EXPECTED
    rng = np.random.default_rng(seed)
    for n in (256, 97):
        ins = cfg_inputs(rng, n)
        got = run_both(c11_build_cfg_and_gotos("ssa", "cfg", "labels", n), ins, vk_device, ref=True)
        want = cfg_model(*(ins[k].tolist() for k in ("ssa", "cfg", "goto_labels_keys", "goto_labels_vals")))
        assert got["cfg"].tolist() == want and np.array_equal(got["labels"], ins["labels"])
        gotos = [t for t in range(n) if ins["ssa"][t] == 0x474F544F]
        assert any(want[t] == 0xFFFFFFFF for t in gotos) and any(want[t] != 0xFFFFFFFF for t in gotos)
