"""Inputs and oracle of `c11_classify_vast_node_kinds` (vyre_vk/ops/parsing/c/classify): VAST rows
of C snippets and vyre's CPU oracle over them (ref_classify.rs, ported in
vyre_vk/ops/parsing/c/vast_ref/classify.py, written apart from the GPU program's rules), exact.
The oracle is registered at the end of parsing_c.py with the other C11 ones.

Rows come from C source the way vyre's pipeline makes them: the lexer's cursor-walk model,
keywords promoted by spelling, vast_rows for the links, and word 9 the FNV-1a of each
identifier's bytes (c11_prehash_vast_identifiers' job) so the attribute, builtin and ``typeof``
rules see names. Random inputs join whole snippets and runs of random kinds. (Snippets cut at a
random token can part vyre's GPU rules from its CPU oracle, which it was not written to match
there: e.g. a ``(int ..`` after ``(..)`` with no declaration prefix is a function declarator to
the program and a cast to the oracle; tests/ops/parsing/test_c11_classify.py pins such cases.)

Example::

    >>> rows = snippet_rows(b"int x;")
    >>> rows[0:2], rows[10:12], rows[19] == fnv1a32(b"x")
    ([107, 4294967295], [1, 4294967295], True)
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS, fnv1a32
from vyre_vk.ops.parsing.c.vast import vast_rows
from vyre_vk.ops.parsing.c.vast_ref.classify import reference_classify_vast_node_kinds

from .core import U32
from .parsing_c11_models import oracle, token_stream
from .parsing_models import c_lex

#: C that reaches every rule group of the classifier (name -> source).
SNIPPETS: dict[str, bytes] = {
    "typedef_names": b"typedef int T; int a; void u(void) { (a) * b; (T) * c; x = (T) y; }",
    "paren_statement": b"typedef int T; void u(void) { (f) (x); (a) * b; }",
    "declarators": b"int (*fp)(int, char *); int (*arr)[4]; int a[10] = {1, 2, [3] = 4}; char s[] = \"hi\";"
                   b" int **pp, m[2][3];",
    "records": b"struct point { int x, y; unsigned flag : 1; unsigned : 3; struct point *next; };"
               b" union u { int i; float f; }; enum color { RED, GREEN = 2, BLUE };",
    "statements": b"void g(void) { int i; for (int j = 0; j < 3; j++) { if (j) continue; else break; }"
                  b" lbl: goto lbl; while (i) i--; do { } while (0); switch (i) { case 1: break; default: ; }"
                  b" return; }",
    "expressions": b"static inline int h(int x) { return (int) x + sizeof(int) + _Alignof(long) + x * (x) - -x"
                   b" + !x + ~x + x % 2 + (x << 1) + (x ? 1 : 0) + a[1] + s.f + p->g; }",
    "gnu_expressions": b"void k(void) { struct point p = (struct point){ 1, 2 }; int v = ({ int t = 1; t; });"
                       b" void *l = &&lbl2; lbl2: ; __label__ q; }",
    "attributes": b"extern int w(const char *f, ...) __attribute__ ((__nonnull__ (1), __noreturn__,"
                  b" __format__ (__printf__, 1, 2))); __attribute__((constructor)) static void init(void) {}"
                  b" int v __attribute__((aligned(8), const));",
    "asm": b"void a(void) { __asm__ volatile (\"mov %0, %1\" : \"=r\" (x) : \"r\" (y) : \"memory\");"
           b" asm goto (\"jmp %l0\" : : : : out); out: ; __asm__ (\"nop\"); }",
    "builtins": b"int b(int x) { __typeof__(x) y = x; __auto_type z = y; typeof(int) q;"
                b" return __builtin_expect(x, 0) + __builtin_popcount(x) + __builtin_constant_p(x)"
                b" + _Generic(x, int: 1, default: 0) + __builtin_offsetof(struct s, f) + __sync_fetch_and_add(&x, 1);"
                b" __builtin_unreachable(); }",
    "misc": b"_Static_assert(1, \"ok\"); void m(int *x) { x->y.z = a[1]; p = q ? r : s; a += b; *x = 1;"
            b" f((int) 1, (char *) 0); int (*g)(void) = 0; }",
}
_KEYWORDS = dict(C_KEYWORDS)


def lexed_tokens(src: bytes) -> list[tuple[int, int, int, int]]:
    """(kind, start, len, symbol hash) per token: keywords promoted, identifiers hashed."""
    out = []
    for kind, start, n in c_lex(src):
        spelling = src[start:start + n]
        if kind == T.TOK_IDENTIFIER:
            kind = _KEYWORDS.get(spelling.decode(), kind)
        out.append((kind, start, n, fnv1a32(spelling) if kind == T.TOK_IDENTIFIER else 0))
    return out


def rows_of(tokens: list[tuple[int, int, int, int]], flags: Optional[list[int]] = None) -> list[int]:
    """VAST rows of `tokens` with word 9 = their hash and word 7 = `flags` (typedef flags) if given."""
    rows = vast_rows([t[0] for t in tokens], [t[1] for t in tokens], [t[2] for t in tokens])
    for i, t in enumerate(tokens):
        rows[10 * i + 9] = t[3]
        if flags is not None:
            rows[10 * i + 7] = flags[i]
    return rows


def snippet_rows(src: bytes, flags: Optional[dict[str, int]] = None) -> list[int]:
    """VAST rows of C source `src`; `flags` gives word 7 of identifiers by spelling."""
    tokens = lexed_tokens(src)
    per = [flags.get(src[s:s + n].decode(), 0) if flags else 0 for _, s, n, _ in tokens]
    return rows_of(tokens, per if flags else None)


def random_tokens(rng, n: int) -> list[tuple[int, int, int, int]]:
    """`n` tokens: whole snippets in random order, each other piece a run of 1..12 random kinds
    (token_stream's C-shaped pool: unbalanced brackets, cut declarations)."""
    pieces = [lexed_tokens(src) for src in SNIPPETS.values()]
    out: list[tuple[int, int, int, int]] = []
    while len(out) < n:
        if rng.random() < 0.5:
            out += pieces[rng.integers(len(pieces))]
        else:
            out += [(kind, len(out), 1, 0) for kind in token_stream(rng, int(rng.integers(1, 13)))]
    return out[:n]


@oracle("vyre-libs::parsing::c11_classify_vast_node_kinds", {"num_nodes": 256}, 0,
        "vyre's CPU oracle (ref_classify.rs) over VAST rows of C snippet slices: exact")
def _():
    def inputs(rng, p):
        return {"vast_nodes": np.asarray(rows_of(random_tokens(rng, p["num_nodes"])), U32)}

    def numpy(ins, p):
        return {"out_typed_vast_nodes": np.asarray(reference_classify_vast_node_kinds(ins["vast_nodes"].tolist()), U32)}
    return inputs, numpy
