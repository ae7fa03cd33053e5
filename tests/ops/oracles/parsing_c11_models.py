"""Models and random inputs of the oracles of the C11 structure extractors, GNU passes, VAST rows
and goto resolution (vyre_vk/ops/parsing/c: extract.py, call_graph.py, gnu_passes.py, layout.py,
vast.py, cfg.py): plain-Python models written from the ops' rules (each token examined on its
own, a ``for``/``break`` body scan, a dict for the builtin tags, per-parent child lists for the
VAST rows, a sequential linear-probe table for the labels), exact. The oracles are registered
at the end of parsing_c.py.

Token streams are C-shaped snippets (definitions, prototypes, direct and ``(*p)(..)`` calls,
numeric-suffix names ``f 2 (..)``, parenthesised names ``(f)(..)``, attribute suffixes, arrays)
interleaved with random kinds, with paren/brace pairs computed by a stack (unmatched ones
MATCH_NONE), so every predicate both fires and fails. Atomic-append ops (call graph, inline asm)
run in one workgroup with every claim in the same loop iteration, where lanes claim slots in lane
order on the reference and on lavapipe (see call_graph.py).

Example::

    >>> pairs_of([10, 10, 11, 11], 10, 11)
    [3, 2, 1, 0]
"""
from __future__ import annotations

import numpy as np

from vyre_vk import ops
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.keyword import fnv1a32
from vyre_vk.ops.parsing.c.structure import FUNCTION_PREFIX_TOKENS as PREFIX

from .core import U32, ru32

#: op id -> (params, why, maker returning (inputs, numpy)); registered as oracles at the end of
#: parsing_c.py (tests/ops/test_registry.py finds an op's oracle in tests/ops/oracles/<area>_<group>.py,
#: here parsing_c, the colleague's lexer module, so the models live here).
C11_ORACLES: dict = {}


def oracle(op_id: str, params: dict, ulp: int, why: str, repeats: int = 1):
    """Collect the oracle of a registered op (tests/ops/oracles/parsing_c.py registers them)."""
    def deco(fn):
        assert ulp == 0 and op_id not in C11_ORACLES
        if op_id in _REGISTERED:
            C11_ORACLES[op_id] = (params, why, fn, repeats)
        return fn
    return deco


_REGISTERED = {e.id for e in ops.all_ops()}

NONE, M = 0xFFFFFFFF, 0xFFFFFFFF
ID, LP, RP, LB, RB, SEMI, STAR, NUM = (T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_RBRACE,
                                       T.TOK_SEMICOLON, T.TOK_STAR, T.TOK_INTEGER)
_SNIPPETS = [
    [T.TOK_INT, ID, LP, T.TOK_INT, ID, RP, LB, ID, LP, ID, RP, SEMI, RB],          # definition with a call
    [T.TOK_STATIC, T.TOK_VOID, ID, LP, T.TOK_VOID, RP, SEMI],                      # prototype
    [LP, STAR, ID, RP, LP, NUM, RP, SEMI],                                         # (*p)(1);
    [T.TOK_INT, LP, STAR, ID, RP, LP, RP, SEMI],                                   # int (*p)();
    [ID, NUM, LP, ID, RP, SEMI],                                                   # f 2 (x);
    [T.TOK_CHAR_KW, ID, NUM, LP, RP, LB, RB],                                      # numeric-suffix definition
    [T.TOK_INT, LP, ID, RP, LP, RP, LB, T.TOK_RETURN, NUM, SEMI, RB],              # int (f)() { return 0; }
    [ID, LP, RP, ID, LP, LP, ID, RP, RP, LB, ID, LP, RP, SEMI, RB],                # f() attr((x)) { g(); }
    [ID, STAR, ID, LP, ID, LB, NUM, RB, RP, LB, RB],                               # T *f(a[1]) {}
    [T.TOK_INT, ID, LP, RP, LP, ID, RP, SEMI, LB, RB],                             # a ; before the body
    [ID, LP, T.TOK_LBRACKET, LB, T.TOK_RBRACKET, RP, LB, RB],                      # { inside [ ]
    [LB, ID, LP, RP, SEMI, RB],
    [ID, LP, LP, ID, RP, RP, ID, LP, RP, LB, RB],                                  # attr((x)) f() {}
]
_POOL = [ID] * 6 + [LP, RP, LB, RB, SEMI, STAR, NUM, T.TOK_COMMA, T.TOK_INT, T.TOK_VOID, T.TOK_RETURN,
                    T.TOK_LBRACKET, T.TOK_RBRACKET, T.TOK_ASSIGN, T.TOK_EOF, T.TOK_STATIC, T.TOK_CONST]


def pairs_of(types, open_tok: int, close_tok: int) -> list[int]:
    """Each matched open/close token's partner index, MATCH_NONE elsewhere (a stack)."""
    out, stack = [NONE] * len(types), []
    for i, k in enumerate(types):
        if k == open_tok:
            stack.append(i)
        elif k == close_tok and stack:
            j = stack.pop()
            out[i], out[j] = j, i
    return out


def token_stream(rng, n: int) -> list[int]:
    out: list[int] = []
    while len(out) < n:
        if rng.random() < 0.6:
            out += _SNIPPETS[rng.integers(len(_SNIPPETS))]
        else:
            out += [int(k) for k in rng.choice(_POOL, int(rng.integers(1, 6)))]
    return out[:n]


def _body_open(types, start: int, n: int) -> int:
    paren = bracket = 0
    for i in range(start, n):
        k = types[i]
        if paren == 0 and bracket == 0:
            if k == LB:
                return i
            if k == SEMI:
                return NONE
        if k == LP:
            paren += 1
        elif k == RP and paren:
            paren -= 1
        elif k == T.TOK_LBRACKET:
            bracket += 1
        elif k == T.TOK_RBRACKET and bracket:
            bracket -= 1
    return NONE


def functions_model(types, pairs, braces, n: int) -> tuple[list[int], int]:
    out = [0] * (3 * n)
    for t in range(max(n - 2, 0)):
        at = lambda i, d=0: types[i] if 0 <= i < n else d  # noqa: E731
        ty, prev, nxt, before, after = at(t), at(t - 1), at(t + 1), at(t - 2), at(t + 2)
        rparen = pairs[t + 1]
        after_rparen = pairs[t + 2] if t + 2 < n else NONE
        wrapper = pairs[t - 1] if t > 0 else NONE
        paren_name = ty == ID and prev == LP and nxt == RP and wrapper == t + 1 and after == LP
        suffix = ty == ID and nxt == NUM and after == LP
        if paren_name or suffix:
            rparen = after_rparen
        if ty != ID or rparen == NONE:
            continue
        body = _body_open(types, (rparen + 1) & M, n)
        close = braces[body] if body != NONE else NONE
        head = ((nxt == LP or suffix) and (prev in PREFIX or (prev == RP and before == RP))) or \
            (paren_name and before in PREFIX)
        if head and body != NONE and close != NONE:
            out[3 * t:3 * t + 3] = [t, body, close]
    return out, 3 * n


def calls_model(types, pairs, functions, nf: int, n: int) -> tuple[list[int], int]:
    out = [0] * (4 * n)
    records = [functions[3 * f:3 * f + 3] for f in range(nf)]
    for t in range(n - 1):
        ty, nxt = types[t], types[t + 1]
        prev = types[t - 1] if t > 0 else 0
        pprev = types[t - 2] if t > 1 else 0
        rparen = pairs[t + 1]
        if ty != ID:
            continue
        suffix = nxt == NUM and t + 2 < n and types[t + 2] == LP
        if suffix:
            rparen = pairs[t + 2]
        after = types[rparen + 1] if rparen != NONE and (rparen + 1) & M < n else 0
        declared = prev in PREFIX and after in (SEMI, LB)
        direct = (nxt == LP or suffix) and rparen != NONE and all(r[0] != t for r in records) and not declared
        lparen = ((pairs[t - 2] if t > 1 else NONE) + 1) & M
        outer = types[t - 3] if t > 2 else 0
        inner_lp, inner_rp = (types[lparen], pairs[lparen]) if lparen < n else (0, NONE)
        ptr = outer not in PREFIX and prev == STAR and pprev == LP and nxt == RP and inner_lp == LP and inner_rp != NONE
        caller = next((f for f, r in enumerate(records) if r[1] <= t <= r[2]), NONE)
        if direct:
            out[4 * t:4 * t + 4] = [caller, t, t + 1, rparen]
        elif ptr:
            out[4 * t:4 * t + 4] = [caller, t, lparen, inner_rp]
    return out, 4 * n


def call_graph_model(calls, fn_hashes, starts, lens, haystack, edges, count: int, num_calls: int):
    edges = list(edges)
    for t in range(num_calls):
        caller, callee = calls[4 * t], calls[4 * t + 1]
        h = 0x811C9DC5
        for b in range(lens[callee]):
            h = ((h ^ haystack[starts[callee] + b]) * 0x01000193) & M
        hit = next((f for f, fh in enumerate(fn_hashes) if fh == h), None)
        if hit is not None:
            edges[count:count + 2] = [caller, hit]
            count += 2
    return edges, count


def _a(x) -> np.ndarray:
    return np.asarray(x, U32)


@oracle("vyre-libs::parsing::c11_extract_functions", {"num_tokens": 700}, 0,
        "per-token rules with a for/break body scan: exact")
def _():
    def inputs(rng, p):
        types = token_stream(rng, p["num_tokens"])
        return {"tok_types": _a(types), "paren_pairs": _a(pairs_of(types, LP, RP)),
                "brace_pairs": _a(pairs_of(types, LB, RB)),
                "out_counts": ru32(rng, 1)}

    def numpy(ins, p):
        out, count = functions_model(ins["tok_types"].tolist(), ins["paren_pairs"].tolist(),
                                     ins["brace_pairs"].tolist(), p["num_tokens"])
        return {"out_functions": _a(out), "out_counts": _a([count])}
    return inputs, numpy


def dense_functions(types, n: int) -> list[int]:
    """The function records of the model, compacted (what a pipeline feeds c11_extract_calls)."""
    out, _ = functions_model(types, pairs_of(types, LP, RP), pairs_of(types, LB, RB), n)
    return [w for t in range(n) if out[3 * t + 1] for w in out[3 * t:3 * t + 3]]


@oracle("vyre-libs::parsing::c11_extract_calls", {"num_tokens": 700, "num_functions": 40}, 0,
        "per-token rules, first enclosing function record: exact")
def _():
    def inputs(rng, p):
        n, nf = p["num_tokens"], p["num_functions"]
        types = token_stream(rng, n)
        fns = dense_functions(types, n)[:3 * nf]
        # pad with records naming random tokens over random spans (garbage a caller may hit)
        while len(fns) < 3 * nf:
            a, b = sorted(rng.integers(0, n, 2).tolist())
            fns += [int(rng.integers(0, n)), a, b]
        return {"tok_types": _a(types), "paren_pairs": _a(pairs_of(types, LP, RP)), "functions": _a(fns),
                "out_counts": ru32(rng, 1)}

    def numpy(ins, p):
        out, count = calls_model(ins["tok_types"].tolist(), ins["paren_pairs"].tolist(), ins["functions"].tolist(),
                                 p["num_functions"], p["num_tokens"])
        return {"out_calls": _a(out), "out_counts": _a([count])}
    return inputs, numpy


_NAMES = [b"foo", b"bar", b"printf", b"x", b"main", b"__builtin_expect", b"f2", b"qux"]


def call_graph_inputs(rng, p: dict) -> dict:
    nc, nf, nt = p["num_calls"], p["num_functions"], p["num_tokens"]
    hay = np.zeros(16 * nc, U32)
    starts, lens, pos = ru32(rng, nt), ru32(rng, nt), 0
    for i in range(nt):
        w = _NAMES[rng.integers(len(_NAMES))]
        hay[pos:pos + len(w)] = list(w)
        if rng.random() < 0.05:
            hay[pos] |= 0x100  # a word with high bits: vyre XORs the whole word
        starts[i], lens[i] = pos, len(w)
        pos += len(w) + 1
    assert pos <= hay.size, "call graph oracle: raise num_calls or lower num_tokens"
    # One name's hash at index k (and again later, where it never wins), the rest random: every
    # edge is claimed in the same iteration of the function loop, so the claim order is lane
    # order on the reference (lock-step, iteration-major) and on lavapipe (group by group).
    hashes = ru32(rng, nf)
    k = int(rng.integers(0, nf - 1))
    hashes[k] = hashes[int(rng.integers(k + 1, nf))] = fnv1a32(_NAMES[rng.integers(len(_NAMES))])
    calls = ru32(rng, 4 * nc)
    calls[1::4] = rng.integers(0, nt, nc)
    return {"calls": calls, "fn_hashes": hashes, "tok_starts": starts, "tok_lens": lens, "haystack": hay,
            "out_edges": ru32(rng, 4 * nc), "out_counts": _a([rng.integers(0, 2 * nc)])}


@oracle("vyre-libs::parsing::c11_build_call_graph", {"num_calls": 200, "num_functions": 6, "num_tokens": 300}, 0,
        "FNV-1a over the callee's words, first equal function hash, edges in lane order: exact")
def _():
    def numpy(ins, p):
        edges, count = call_graph_model(ins["calls"].tolist(), ins["fn_hashes"].tolist(), ins["tok_starts"].tolist(),
                                        ins["tok_lens"].tolist(), ins["haystack"].tolist(), ins["out_edges"].tolist(),
                                        int(ins["out_counts"][0]), p["num_calls"])
        return {"out_edges": _a(edges), "out_counts": _a([count])}
    return call_graph_inputs, numpy


_BUILTIN = {0x45585043: 0xC011E00D, 0x4F465354: 0xC011E00E, 0x4F424A53: 0xC011E00F, 0x50524546: 0xC011E010,
            0x554E5243: 0xC0115715}  # "EXPC" "OFST" "OBJS" "PREF" "UNRC" -> VAST kinds (vast_kinds.rs)


@oracle("vyre-libs::parsing::c11_gnu_builtins_pass", {"num_ast_nodes": 5000}, 0, "tag dictionary: exact")
def _():
    def inputs(rng, p):
        n = p["num_ast_nodes"]
        words = ru32(rng, n)
        words[(words & 0xFFFFFF00) == 0x474E5500] = 7  # the reserved prefix traps (tests/ops/parsing)
        pick = rng.random(n) < 0.3
        words[pick] = rng.choice(list(_BUILTIN) + [0xC011E008, 0x474E54FF, 0x474E5600], int(pick.sum()))
        return {"ast": words, "out_ast": ru32(rng, n)}
    return inputs, lambda ins, p: {"out_ast": _a([_BUILTIN.get(w, w) for w in ins["ast"].tolist()])}


@oracle("vyre-libs::parsing::c11_gnu_inline_asm_pass", {"num_ast_nodes": 256}, 0,
        "indices of the ASM rows in lane order after the counter's start: exact")
def _():
    def inputs(rng, p):
        n = p["num_ast_nodes"]
        words = ru32(rng, n)
        words[rng.random(n) < 0.3] = 0x41534D00
        words[rng.random(n) < 0.05] = 0x41534D01
        hits = int((words == 0x41534D00).sum())
        # a start past n - hits would overflow the registry (a trap, tested in tests/ops/parsing)
        return {"ast": words, "out_asm": ru32(rng, n), "out_asm_counts": _a([rng.integers(0, n - hits)])}

    def numpy(ins, p):
        out, c = ins["out_asm"].copy(), int(ins["out_asm_counts"][0])
        for t in np.flatnonzero(ins["ast"] == 0x41534D00):
            out[c] = t
            c += 1
        return {"out_asm": out, "out_asm_counts": _a([c])}
    return inputs, numpy


def alignments_model(kinds, pointer=8, long=8, double_align=8) -> tuple[list[int], list[int]]:
    sizes, aligns = [], []
    for k in kinds:
        if k == 1:
            s = a = 1
        elif k in (2, 3):
            s = a = pointer if k == 2 else long
        elif k == 4:
            s, a = 8, double_align
        else:
            s = a = 4
        sizes.append(s)
        aligns.append(a)
    return sizes, aligns


@oracle("vyre-libs::parsing::c11_compute_alignments", {"num_types": 5000}, 0, "LP64 kind table: exact")
def _():
    def inputs(rng, p):
        n = p["num_types"]
        kinds = rng.integers(0, 7, n).astype(U32)
        kinds[rng.random(n) < 0.1] = ru32(rng, 1)[0]
        return {"types": kinds, "sizes": ru32(rng, n), "aligns": ru32(rng, n)}

    def numpy(ins, p):
        s, a = alignments_model(ins["types"].tolist())
        return {"sizes": _a(s), "aligns": _a(a)}
    return inputs, numpy


def vast_model(types, starts, lens) -> list[int]:
    """VAST rows from per-parent child lists: parent = innermost unclosed opener (a close pops
    only its own opener), children in token order, links read off the lists."""
    opener_of = {RP: LP, RB: LB, T.TOK_RBRACKET: T.TOK_LBRACKET}
    children: dict[int, list[int]] = {}
    open_stack: list[int] = []
    parent = []
    for i, k in enumerate(types):
        parent.append(open_stack[-1] if open_stack else NONE)
        children.setdefault(parent[-1], []).append(i)
        if k in (LP, LB, T.TOK_LBRACKET):
            open_stack.append(i)
        elif open_stack and opener_of.get(k) == types[open_stack[-1]]:
            open_stack.pop()
    rank = {i: at for sibs in children.values() for at, i in enumerate(sibs)}
    rows = []
    for i in range(len(types)):
        sibs, at = children[parent[i]], rank[i]
        kids = children.get(i, [])
        rows += [types[i], parent[i], kids[0] if kids else NONE, sibs[at + 1] if at + 1 < len(sibs) else NONE,
                 sibs[at - 1] if at else NONE, starts[i], lens[i], 0, 0, 0]
    return rows


_BRACKETS = [LP, RP, LB, RB, T.TOK_LBRACKET, T.TOK_RBRACKET]


@oracle("vyre-libs::parsing::c11_build_vast_nodes_v2", {"num_tokens": 300}, 0,
        "child lists per innermost unclosed opener: exact")
def _():
    def inputs(rng, p):
        n = p["num_tokens"]
        types = token_stream(rng, n)
        for i in np.flatnonzero(rng.random(n) < 0.1):  # stray and crossed closes
            types[i] = _BRACKETS[rng.integers(len(_BRACKETS))]
        return {"tok_types": _a(types), "tok_starts": ru32(rng, n), "tok_lens": ru32(rng, n)}

    def numpy(ins, p):
        rows = vast_model(ins["tok_types"].tolist(), ins["tok_starts"].tolist(), ins["tok_lens"].tolist())
        return {"out_vast_nodes": _a(rows), "out_count": _a([p["num_tokens"]])}
    return inputs, numpy


LABL, GOTO, EMPTY = 0x4C41424C, 0x474F544F, 0xFFFFFFFF


def cfg_model(ssa, cfg, keys, vals) -> list[int]:
    """Labels inserted one by one in index order into a dict-free linear-probe table, then each
    goto's first key match (or EMPTY slot) along its probe path."""
    keys, vals, out = list(keys), list(vals), list(cfg)
    n = len(ssa)
    start = lambda h: (h * 2654435769) % 4096  # noqa: E731
    for t in range(n):
        if ssa[t] == LABL:
            for k in range(4096):
                s = (start(ssa[t + 1]) + k) % 4096
                if keys[s] == EMPTY:
                    keys[s], vals[s] = ssa[t + 1], t
                    break
    for t in range(n):
        if ssa[t] == GOTO:
            out[t] = EMPTY
            for k in range(4096):
                s = (start(ssa[t + 1]) + k) % 4096
                if keys[s] == ssa[t + 1]:
                    out[t] = vals[s]
                    break
                if keys[s] == EMPTY:
                    break
    return out


def cfg_inputs(rng, n: int) -> dict:
    """Label/goto records over hashes < 48 (duplicate labels, gotos to missing labels, shared
    probe paths), no tag in the last word (its lane would read past the stream), and tables with
    occupied slots of keys no goto names, one a run of 16 the probes must walk through."""
    ssa: list[int] = []
    while len(ssa) < n - 1:
        r = rng.random()
        ssa += [LABL, int(rng.integers(0, 48))] if r < 0.3 else [GOTO, int(rng.integers(0, 48))] if r < 0.6 \
            else [int(rng.integers(0, 1000))]
    ssa = ssa[:n - 1] + [5]
    keys = np.full(4096, EMPTY, U32)
    keys[rng.integers(0, 4096, 600)] = rng.integers(1000, 1 << 20, 600)
    keys[2048:2064] = 5000
    return {"ssa": _a(ssa), "cfg": ru32(rng, n), "labels": ru32(rng, n), "goto_labels_keys": keys,
            "goto_labels_vals": ru32(rng, 4096)}


@oracle("vyre-libs::parsing::c11_build_cfg_and_gotos", {"num_ssa": 256}, 0,
        "labels into a linear-probe table in index order, each goto's first match along its path: exact",
        repeats=10)  # the fixed 4096-slot tables dominate the vector; num_ssa <= 256 (one workgroup)
def _():
    def numpy(ins, p):
        cfg = cfg_model(*(ins[k].tolist() for k in ("ssa", "cfg", "goto_labels_keys", "goto_labels_vals")))
        return {"cfg": _a(cfg), "labels": ins["labels"].copy()}
    return (lambda rng, p: cfg_inputs(rng, p["num_ssa"])), numpy
