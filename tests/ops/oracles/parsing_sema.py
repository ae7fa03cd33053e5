"""Oracles of vyre_vk/ops/parsing/sema, each a Python model written from the op's rules (not
from its IR):

- register allocation: ``t % 16`` and the wrapping sum of the weights;
- stack layout: spilled registers (>= 16) in invocation order take 8-byte slots from the
  counter's start (one workgroup: n <= 256, see backend.py);
- ELF: the object packed with ``struct`` from the ELF64 layout (Ehdr, three Shdr, strtab);
- conditional mask: a stack of (active, taken) frames per #if level;
- dynamic macro expansion: a dict from macro token to replacement, concatenated;
- type-specifier propagation: a backward walk per token over the declaration rules;
- c_sema_scope and its phases: the scope/decl/intern model of sema_models.py.

Token streams are drawn from C-like statement templates (declarations, prototypes, function
bodies, struct/enum bodies, labels, typedefs) so every rule fires; tests/ops/parsing/
test_sema_passes.py also runs the passes over lexed windows of the system's C headers.
"""
from __future__ import annotations

import struct

import numpy as np

from vyre_vk.ops.parsing.c import tokens as T

from .core import U32, oracle, ru32
from .sema_models import c_token_stream, pg_semantic_graph, propagate_types, scope_tree

# ---------------------------------------------------------------- x86-64 back end


@oracle("vyre-libs::parsing::opt_x86_64_register_allocation", {"num_ssa_nodes": 200}, 0,
        "t % 16 and a wrapping sum: exact")
def _():
    def numpy(ins, p):
        n = p["num_ssa_nodes"]
        total = (int(ins["cfg"].astype(np.uint64).sum()) + int(ins["thread_block_interference"][0])) % (1 << 32)
        return {"regs": (np.arange(n) % 16).astype(U32), "thread_block_interference": np.asarray([total], U32)}
    return (lambda rng, p: {"cfg": ru32(rng, p["num_ssa_nodes"]), "regs": ru32(rng, p["num_ssa_nodes"]),
                            "thread_block_interference": ru32(rng, 1)}), numpy


@oracle("vyre-libs::parsing::opt_stack_layout_generation", {"num_regs": 256}, 0,
        "spills in invocation order take consecutive 8-byte slots: exact (one workgroup)")
def _():
    def numpy(ins, p):
        out, frame = ins["spills"].copy(), int(ins["tmp_stack_frame_size"][0])
        for t, reg in enumerate(ins["regs"].tolist()):
            if reg >= 16:
                out[t], frame = frame, (frame + 8) % (1 << 32)
        return {"spills": out, "tmp_stack_frame_size": np.asarray([frame], U32)}
    return (lambda rng, p: {"regs": rng.integers(0, 40, p["num_regs"]).astype(U32), "spills": ru32(rng, p["num_regs"]),
                            "tmp_stack_frame_size": rng.integers(0, 1 << 20, 1).astype(U32)}), numpy


def elf_object(text_words) -> np.ndarray:
    """ELF64 ET_REL for x86-64: header, null/.text/.shstrtab section headers, .text, .shstrtab."""
    n = len(text_words)
    strtab = b"\0.text\0.shstrtab\0"
    ehdr = struct.pack("<4sBBBB8xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 1, 62, 1, 0, 0, 64, 0, 64, 0, 0, 64, 3, 2)
    shdr = "<IIQQQQIIQQ"
    text_off = 64 + 3 * 64
    sections = (struct.pack(shdr, *[0] * 10)
                + struct.pack(shdr, 1, 1, 6, 0, text_off, 4 * n, 0, 0, 4, 0)
                + struct.pack(shdr, 7, 3, 0, 0, text_off + 4 * n, len(strtab), 0, 0, 1, 0))
    blob = ehdr + sections + np.asarray(text_words, U32).tobytes() + strtab.ljust(20, b"\0")
    return np.frombuffer(blob, U32).copy()


@oracle("vyre-libs::parsing::opt_lower_elf", {"num_nodes": 14000}, 0,
        "struct-packed ELF64 object (zeroed buffer: vyre leaves section-header fields it does not set): exact")
def _():
    def numpy(ins, p):
        return {"obj": elf_object(ins["ssa"])}
    return (lambda rng, p: {"ssa": ru32(rng, p["num_nodes"]), "obj": np.zeros(64 + p["num_nodes"] + 5, U32)}), numpy


# ---------------------------------------------------------------- preprocessor passes
PP_IF, PP_IFDEF, PP_IFNDEF, PP_ELIF, PP_ELSE, PP_ENDIF = 207, 208, 209, 210, 211, 212


def conditional_mask(types, kinds, values) -> np.ndarray:
    """A frame per open conditional: (this branch live, a branch of it already taken)."""
    stack: list[list[bool]] = []
    out = np.zeros(len(types), U32)
    for i, (tok, kind, val) in enumerate(zip(types.tolist(), kinds.tolist(), values.tolist())):
        live = all(f[0] for f in stack)
        control = tok == T.TOK_PREPROC and kind in (PP_IF, PP_IFDEF, PP_IFNDEF, PP_ELIF, PP_ELSE, PP_ENDIF)
        out[i] = 1 if control or live else 0
        if kind in (PP_IF, PP_IFDEF, PP_IFNDEF):
            stack.append([live and val != 0, val != 0])
        elif kind == PP_ELIF:
            parent = all(f[0] for f in stack[:-1])
            stack[-1] = [parent and not stack[-1][1] and val != 0, stack[-1][1] or val != 0]
        elif kind == PP_ELSE:
            parent = all(f[0] for f in stack[:-1])
            stack[-1] = [parent and not stack[-1][1], True]
        elif kind == PP_ENDIF:
            stack.pop()
    return out


def directive_stream(rng, n: int):
    """Well-nested directives (depth <= 30, all closed by the end), most on TOK_PREPROC tokens,
    some kinds on other tokens (they drive the stack but are not kept as directives)."""
    types, kinds, depth = [], [], 0
    for i in range(n):
        left = n - i
        r = rng.random()
        if depth and left <= depth:
            kind = PP_ENDIF
        elif r < 0.15 and depth < 30 and left > depth + 2:
            kind = (PP_IF, PP_IFDEF, PP_IFNDEF)[rng.integers(3)]
        elif r < 0.25 and depth:
            kind = (PP_ELIF, PP_ELSE)[rng.integers(2)]
        elif r < 0.33 and depth:
            kind = PP_ENDIF
        else:
            kind = 0 if rng.random() < 0.9 else int(rng.choice([203, 204, 205, 206, 213, 216, 219]))  # other kinds
        depth += (kind in (PP_IF, PP_IFDEF, PP_IFNDEF)) - (kind == PP_ENDIF)
        types.append(T.TOK_PREPROC if (kind and rng.random() < 0.9) else int(rng.choice([1, 2, 16, 107, 202])))
        kinds.append(kind)
    values = rng.integers(0, 3, n) * rng.integers(0, 2, n)  # mostly 0/1, some other nonzero
    return np.asarray(types, U32), np.asarray(kinds, U32), values.astype(U32)


@oracle("vyre-libs::parsing::opt_conditional_mask_with_directives", {"num_tokens": 300}, 0,
        "frame-stack model of #if/#elif/#else/#endif: exact")
def _():
    def inputs(rng, p):
        types, kinds, values = directive_stream(rng, p["num_tokens"])
        return {"tok_types": types, "directive_kinds": kinds, "directive_values": values,
                "out_mask": ru32(rng, p["num_tokens"])}
    return inputs, lambda ins, p: {"out_mask": conditional_mask(ins["tok_types"], ins["directive_kinds"],
                                                                ins["directive_values"])}


EMPTY, SLOTS = 0xFFFFFFFF, 4096


def macro_inputs(rng, n: int, cap: int, n_macros: int = 6) -> dict:
    """A table of `n_macros` macro tokens (one is TOK_PREPROC, never expanded) with 0..3-token
    replacements, probed linearly from ``(tok * 2654435769) & 4095``, and a stream that uses them."""
    names = [int(x) for x in rng.choice(np.arange(300, 900), n_macros - 1, replace=False)] + [T.TOK_PREPROC]
    keys, vals, sizes = np.full(SLOTS, EMPTY, U32), ru32(rng, SLOTS), ru32(rng, SLOTS)
    free = 4000  # replacements live in slots 4000.. (far from the keys' probe runs here)
    macros = {}
    for name in names:
        slot = (name * 2654435769) & (SLOTS - 1)
        while keys[slot] != EMPTY:
            slot = (slot + 1) % SLOTS
        repl = [int(x) for x in rng.integers(1, 200, int(rng.integers(0, 4)))]
        keys[slot], vals[slot], sizes[free] = name, free, len(repl)
        vals[free:free + len(repl)] = repl
        macros[name] = repl
        free += 4
    stream = rng.choice(np.asarray(names + list(range(1, 60))), n).astype(U32)
    total = sum(len(macros[t]) if t in macros and t != T.TOK_PREPROC else 1 for t in stream.tolist())
    assert total <= cap
    return {"in_tok_types": stream, "macro_keys": keys, "macro_vals": vals, "macro_sizes": sizes,
            "out_tok_types": ru32(rng, cap), "out_tok_counts": ru32(rng, 1), "_macros": macros}


def macro_expand(stream, macros, out_init) -> dict:
    flat = [w for t in stream.tolist() for w in (macros[t] if t in macros and t != T.TOK_PREPROC else [t])]
    out = out_init.copy()
    out[:len(flat)] = flat
    return {"out_tok_types": out, "out_tok_counts": np.asarray([len(flat)], U32)}


@oracle("vyre-libs::parsing::opt_dynamic_macro_expansion", {"num_tokens": 4, "max_out_tokens": 4096}, 0,
        "dict expansion, concatenated: exact", repeats=7)
def _():
    def inputs(rng, p):
        ins = macro_inputs(rng, p["num_tokens"], p["max_out_tokens"])
        ins.pop("_macros")
        return ins

    def numpy(ins, p):
        keys, vals, sizes = ins["macro_keys"], ins["macro_vals"], ins["macro_sizes"]
        macros = {int(k): vals[int(vals[s]):int(vals[s]) + int(sizes[int(vals[s])])].tolist()
                  for s, k in enumerate(keys.tolist()) if k != EMPTY}
        return macro_expand(ins["in_tok_types"], macros, ins["out_tok_types"])
    return inputs, numpy


# ---------------------------------------------------------------- declarations
@oracle("vyre-libs::parsing::opt_propagate_type_specifiers", {"num_tokens": 256}, 0,
        "backward declaration walk per token: exact", repeats=7)
def _():
    def inputs(rng, p):
        types, depths = c_token_stream(rng, p["num_tokens"])
        return {"tok_types": types, "tok_depths": depths}
    return inputs, lambda ins, p: {"node_out": propagate_types(ins["tok_types"], ins["tok_depths"])}


# ---------------------------------------------------------------- c_sema_scope and its phases
_S = "vyre-libs::parsing::c_sema_scope"
# phase id -> (record words it writes, how its scope words are computed)
SCOPE_PHASES = {_S: ((0, 1, 2, 3), "scope"), _S + ".scope": ((0, 1), "scope"), _S + ".scope.brace": ((0, 1), "brace"),
                _S + ".scope.function_parameters": ((0, 1), "params"), _S + ".decl": ((2,), "scope"),
                _S + ".identifier_intern": ((3,), "scope")}


def sema_inputs(rng, n: int, haystack_len: int) -> dict:
    """A C-like stream; identifiers get spans of 0..7 bytes in a random haystack (some past its end)."""
    types, _ = c_token_stream(rng, n)
    lens = np.where(types == T.TOK_IDENTIFIER, rng.integers(0, 8, n), rng.integers(0, 2, n)).astype(U32)
    return {"tok_types": types, "tok_starts": rng.integers(0, haystack_len, n).astype(U32), "tok_lens": lens,
            "haystack": ru32(rng, haystack_len)}


def _register_scope(op_id: str, columns, phase: str) -> None:
    @oracle(op_id, {"num_tokens": 300, "haystack_len": 64}, 0, "scope/decl/intern model of the rules: exact")
    def _():
        return (lambda rng, p: sema_inputs(rng, p["num_tokens"], p["haystack_len"]),
                lambda ins, p: {"out_scope_tree": scope_tree(ins["tok_types"], ins["tok_starts"], ins["tok_lens"],
                                                             ins["haystack"], columns, phase)})


for _id, (_cols, _phase) in SCOPE_PHASES.items():
    _register_scope(_id, _cols, _phase)


# ---------------------------------------------------------------- AST -> PG lowering
def vast_rows(rng, n: int) -> np.ndarray:
    """Random VAST rows: kinds from the C AST kind set, links in range or 0xFFFFFFFF, any spans."""
    rows = ru32(rng, n * 10).reshape(n, 10)
    links = rng.integers(0, n + 1, (n, 3)).astype(np.uint64)
    rows[:, 1:4] = np.where(links == n, 0xFFFFFFFF, links).astype(U32)
    return rows.reshape(-1)


@oracle("vyre-libs::parsing::c::lower::ast_to_pg_nodes", {"num_nodes": 400}, 0, "row reshuffle, wrapping end: exact")
def _():
    def numpy(ins, p):
        r = ins["vast_nodes"].reshape(-1, 10).astype(np.uint64)
        out = np.stack([r[:, 0], r[:, 5], (r[:, 5] + r[:, 6]) % (1 << 32), r[:, 1], r[:, 2], r[:, 3]], axis=1)
        return {"out_pg_nodes": out.astype(U32).reshape(-1)}
    return lambda rng, p: {"vast_nodes": vast_rows(rng, p["num_nodes"])}, numpy


def semantic_vast(rng, n: int) -> np.ndarray:
    """Random VAST forests: kinds mostly from the lowering's control/declaration/GNU kinds, parents
    earlier in the array (some absent, some out of range, a few later: cycles), children and
    siblings anywhere, symbol hashes from {0, 1, 2, 3} so gotos find labels."""
    from vyre_vk.ops.parsing.sema import pg_semantic_tables as S
    from vyre_vk.ops.parsing.sema import vast_kinds as K
    pool = sorted({k for _, g in S.CATEGORY_RULES for k in g[1]} | {k for k, _ in S.ROLE_BY_KIND}
                  | {lo for _, g in S.CATEGORY_RULES for lo, _ in g[0]})
    hot = [K.C_AST_KIND_GOTO_STMT, K.C_AST_KIND_LABEL_STMT, K.C_AST_KIND_SWITCH_STMT, K.C_AST_KIND_CASE_STMT,
           K.C_AST_KIND_DEFAULT_STMT, K.C_AST_KIND_POINTER_DECL, K.C_AST_KIND_FUNCTION_DECLARATOR]
    rows = ru32(rng, n * 10).reshape(n, 10)
    for t in range(n):
        r = rng.random()
        rows[t, 0] = hot[rng.integers(len(hot))] if r < 0.5 else (pool[rng.integers(len(pool))] if r < 0.95
                                                                   else rng.integers(0, 10))
        rows[t, 1] = (rng.integers(0, t) if t and rng.random() < 0.85 else
                      [0xFFFFFFFF, n + 5, rng.integers(0, n)][rng.integers(3)])
        for f in (2, 3):
            rows[t, f] = rng.integers(0, n) if rng.random() < 0.8 else 0xFFFFFFFF
        rows[t, 9] = rng.integers(0, 4)
    # wire some of the shapes the resolution looks for: switch -> condition group -> selector,
    # case -> value sharing its parent, pointer declarator next to a function declarator
    for t in range(n):
        if rng.random() < 0.5:
            g, c = (int(x) for x in rng.integers(0, n, 2))
            if rows[t, 0] == K.C_AST_KIND_SWITCH_STMT:
                rows[t, 3], rows[g, 2], rows[c, 1] = g, c, g
            elif rows[t, 0] == K.C_AST_KIND_CASE_STMT:
                rows[t, 3], rows[g, 1] = g, rows[t, 1]
            elif rows[t, 0] == K.C_AST_KIND_POINTER_DECL:
                rows[t, 2], rows[g, 0] = g, K.C_AST_KIND_FUNCTION_DECLARATOR
    return rows.reshape(-1)


@oracle("vyre-libs::parsing::c::lower::ast_to_pg_semantic_graph", {"num_nodes": 100}, 0,
        "classification tables and edge-resolution walks: exact", repeats=5)
def _():
    def numpy(ins, p):
        nodes, edges = pg_semantic_graph(ins["vast_nodes"], p["num_nodes"])
        return {"out_pg_nodes": nodes, "out_pg_edges": edges}
    return lambda rng, p: {"vast_nodes": semantic_vast(rng, p["num_nodes"])}, numpy
