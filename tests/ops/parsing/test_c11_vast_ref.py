"""vyre's CPU oracle of VAST kind classification, ported in vyre_vk/ops/parsing/c/vast_ref
(`reference_classify_vast_node_kinds`): vyre's witness ``int main() { return 2; }`` and short C
snippets with kinds worked out by hand from the C grammar and vyre's rules (the reason for each
node is next to it), vyre's odd cases pinned, the name tables against vyre's hash literals, and
the oracle's precomputed sibling scans against vyre's direct scans (written out here) on random
rows and a real header.
"""
import doctest
import importlib
from pathlib import Path

import numpy as np
import pytest

from vyre_vk.errors import InputError
from vyre_vk.ops.parsing.c import tokens as T
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS, fnv1a32
from vyre_vk.ops.parsing.c.vast import vast_rows
from vyre_vk.ops.parsing.c.vast_ref import reference_classify_vast_node_kinds as classify
from vyre_vk.ops.parsing.c.vast_ref.catalog import (ATTRIBUTE_HASH_KINDS, GNU_AUTO_TYPE_HASH, GNU_BUILTIN_HASH_KINDS,
                                                    TYPEOF_HASHES, builtin_identifier_kind)
from vyre_vk.ops.parsing.c.vast_ref.context import (AGGREGATE_TOKENS, DECL_PREFIX_RESET_TOKENS, DECL_PREFIX_TOKENS,
                                                    ENUM, NONE_AGGREGATE, RECORD, ClassifyContext)
from vyre_vk.ops.parsing.sema import vast_kinds as K

from ..oracles.parsing_models import c_lex

S = 0xFFFFFFFF
MODULES = ["vyre_vk.ops.parsing.c.vast_ref", "vyre_vk.ops.parsing.c.vast_ref.rows",
           "vyre_vk.ops.parsing.c.vast_ref.catalog", "vyre_vk.ops.parsing.c.vast_ref.context",
           "vyre_vk.ops.parsing.c.vast_ref.classify", "vyre_vk.ops.parsing.c.vast_ref.expr_shape"]


def c_rows(src: str) -> list[int]:
    """Raw VAST rows of C source: the lexer's cursor-walk model, keywords promoted by spelling."""
    data, keywords = src.encode(), dict(C_KEYWORDS)
    toks = [(keywords.get(data[s:s + n].decode(), k) if k == T.TOK_IDENTIFIER else k, s, n) for k, s, n in c_lex(data)]
    return vast_rows([k for k, _, _ in toks], [s for _, s, _ in toks], [n for _, _, n in toks])


def kinds(words: list[int]) -> list[int]:
    return words[0::10]


def test_vyres_witness_int_main_return_2():
    raw = vast_rows([T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_RETURN,
                     T.TOK_INTEGER, T.TOK_SEMICOLON, T.TOK_RBRACE],
                    [0, 4, 8, 9, 10, 11, 18, 19, 20], [3, 4, 1, 1, 1, 6, 1, 1, 1])
    want = [
        0,                              # int: a specifier, no rule names it
        K.C_AST_KIND_FUNCTION_DEFINITION,  # main: identifier, next sibling `(`, a specifier (int) before it,
                                        # and the walk from the sibling after `(` meets `{` first
        K.C_AST_KIND_FUNCTION_DECLARATOR,  # (: after an identifier, a function boundary (`{`) follows, decl prefix
        0,                              # ): punctuation (child of the `(`)
        K.BASIC_BLOCK,                  # {: not after `=` nor a compound-literal type: a block
        K.C_AST_KIND_RETURN_STMT,       # return: statement keyword
        K.LITERAL,                      # 2: integer literal
        0, 0]                           # ; }: punctuation
    typed = classify(raw)
    assert kinds(typed) == want
    # every word but the kinds is copied (no array declarator here to reparent)
    assert [w for i, w in enumerate(typed) if i % 10] == [w for i, w in enumerate(raw) if i % 10]


@pytest.mark.parametrize("src, want, parents", [
    # int: specifier; *: a `*` after a declaration specifier among its siblings is a pointer declarator;
    # p: plain identifier (next sibling `;`, not `(`)
    ("int *p;", [0, K.C_AST_KIND_POINTER_DECL, K.VARIABLE, 0], None),
    # `(`: previous sibling `int` is no identifier/paren (no function declarator), first child `*` starts
    # no type name (no cast); `*`: inside a `(` that follows the specifier `int` (parenthesised declarator);
    # `[`: after a `(` whose first child is `*`, in a declaration: array declarator, reparented to the `*`
    ("int (*p)[4];", [0, 0, K.C_AST_KIND_POINTER_DECL, K.VARIABLE, 0, K.C_AST_KIND_ARRAY_DECL, K.LITERAL, 0, 0],
     {5: 2}),
    # `=`: no specifier before it: assignment; `(`: first child `int` starts a type name, previous sibling
    # `=` is not sizeof/alignof, no function boundary rule applies, next sibling `y` is not `{`: a cast
    ("x = (int)y;", [K.VARIABLE, K.C_AST_KIND_ASSIGN_EXPR, K.C_AST_KIND_CAST_EXPR, 0, 0, K.VARIABLE, 0], None),
    # f: identifier whose next sibling is `(`, with no specifier before it: a call (not a declaration);
    # `(`: after an identifier but no declaration prefix: no declarator; a, b: operands; `,` `)` `;`: 0
    ("f(a, b);", [K.CALL, 0, K.VARIABLE, 0, K.VARIABLE, 0, 0], None),
    # int f(int a); -> f: specifier before, `(` next, the walk after `(` meets `;`: a function declaration;
    # `(`: after an identifier with a declaration prefix and a boundary: function declarator
    ("int f(int a);", [0, K.FUNCTION_DECL, K.C_AST_KIND_FUNCTION_DECLARATOR, 0, K.VARIABLE, 0, 0], None),
    # no typedef annotations: after `typedef` (and no ordinary declaration) an identifier in `( )` followed
    # by an operand start is taken as a typedef name, so `(T)x` is a cast
    ("typedef int T; y = (T)x;", [K.C_AST_KIND_TYPEDEF_DECL, 0, K.VARIABLE, 0, K.VARIABLE, K.C_AST_KIND_ASSIGN_EXPR,
                                  K.C_AST_KIND_CAST_EXPR, K.VARIABLE, 0, K.VARIABLE, 0], None),
    # struct/enum bodies: `a :` in a record after a specifier is a bit-field, `b ;` a field; enumerators
    # follow `{`/`,` and precede `,`/`=`/`}`; the `=` of an initializer after a specifier is not an expression
    ("struct s { int a : 3; int b; };",
     [K.C_AST_KIND_STRUCT_DECL, K.VARIABLE, K.BASIC_BLOCK, 0, K.C_AST_KIND_BIT_FIELD_DECL, 0, K.LITERAL, 0, 0,
      K.C_AST_KIND_FIELD_DECL, 0, 0, 0], None),
    ("enum e { A, B = 2 };", [K.C_AST_KIND_ENUM_DECL, K.VARIABLE, K.BASIC_BLOCK, K.C_AST_KIND_ENUMERATOR_DECL, 0,
                              K.C_AST_KIND_ENUMERATOR_DECL, K.C_AST_KIND_ASSIGN_EXPR, K.LITERAL, 0, 0], None),
    ("int a[3] = { 1, 2 };", [0, K.VARIABLE, K.C_AST_KIND_ARRAY_DECL, K.LITERAL, 0, 0, K.C_AST_KIND_INITIALIZER_LIST,
                              K.LITERAL, 0, K.LITERAL, 0, 0], None),
])
def test_hand_checked_snippets(src, want, parents):
    raw = c_rows(src)
    typed = classify(raw)
    assert kinds(typed) == want
    want_parents = raw[1::10]
    for i, p in (parents or {}).items():
        want_parents[i] = p
    assert typed[1::10] == want_parents


@pytest.mark.parametrize("src, want", [
    # vyre's expression-shape witness: `e` is followed by `:` so vyre's label rule (identifier then `:`
    # outside record/enum bodies) names it a label even inside `?:`
    ("a + b * c ? d + e : f * g;", [K.VARIABLE, K.BINARY, K.VARIABLE, K.BINARY, K.VARIABLE,
                                    K.C_AST_KIND_CONDITIONAL_EXPR, K.VARIABLE, K.BINARY, K.C_AST_KIND_LABEL_STMT, 0,
                                    K.VARIABLE, K.BINARY, K.VARIABLE, 0]),
    # the previous sibling of an operator after `( .. )` or `[ .. ]` is the opener (the close is its
    # child), which vyre counts as a unary context: `>>` gets no kind, `+` and `*` become unary...
    ("x = (a) >> 2;", [K.VARIABLE, K.C_AST_KIND_ASSIGN_EXPR, 0, K.VARIABLE, 0, 0, K.LITERAL, 0]),
    ("f(x) + 1;", [K.CALL, 0, K.VARIABLE, 0, K.C_AST_KIND_UNARY_EXPR, K.LITERAL, 0]),
    ("v[i] * 2;", [K.VARIABLE, K.C_AST_KIND_ARRAY_SUBSCRIPT_EXPR, K.VARIABLE, 0, K.C_AST_KIND_UNARY_EXPR, K.LITERAL,
                   0]),
    # ...except a `*` after `(identifier ..)` with no typedef in sight (vyre's `(x) * y` rule): binary
    ("(a + b) * c;", [0, K.VARIABLE, K.BINARY, K.VARIABLE, 0, K.BINARY, K.VARIABLE, 0]),
    # `...` in a parameter list gets the range-designator kind (vyre classifies the token alone)
    ("int f(int a, ...);", [0, K.FUNCTION_DECL, K.C_AST_KIND_FUNCTION_DECLARATOR, 0, K.VARIABLE, 0,
                            K.C_AST_KIND_RANGE_DESIGNATOR_EXPR, 0, 0]),
])
def test_vyre_quirks_are_kept(src, want):
    assert kinds(classify(c_rows(src))) == want


def test_annotations_and_hashes_are_read():
    """Word 7 flags a visible typedef name (``(T)x`` is then a cast with no `typedef` in the stream);
    word 9 names builtins, attributes and typeof by their FNV-1a hash."""
    raw = c_rows("y = (T)x;")
    raw[3 * 10 + 7] = 1  # T: C_TYPEDEF_FLAG_VISIBLE_TYPEDEF_NAME
    assert kinds(classify(raw))[2] == K.C_AST_KIND_CAST_EXPR
    raw = c_rows("n = __builtin_expect(a, 1);")
    raw[2 * 10 + 9] = fnv1a32(b"__builtin_expect")
    assert kinds(classify(raw))[2] == K.C_AST_KIND_BUILTIN_EXPECT_EXPR
    src = "void f(void) __attribute__((__noreturn__, packed, noreturn));"
    raw = c_rows(src)
    for i in (8, 10, 12):
        raw[i * 10 + 9] = fnv1a32(src.encode()[raw[i * 10 + 5]:raw[i * 10 + 5] + raw[i * 10 + 6]])
    got = kinds(classify(raw))
    assert got[5] == K.C_AST_KIND_GNU_ATTRIBUTE
    # vyre lists `noreturn` bare only (no `__noreturn__` hash): that spelling is a plain variable
    assert got[8:13] == [K.VARIABLE, 0, K.C_AST_KIND_ATTRIBUTE_PACKED, 0, K.C_AST_KIND_ATTRIBUTE_NORETURN]


def test_partial_rows_are_an_input_error():
    with pytest.raises(InputError, match="multiple of the VAST row stride 10.*Fix:"):
        classify([0] * 15)
    with pytest.raises(InputError, match="not a u32"):
        classify([-1] + [0] * 9)
    assert classify([]) == []


def test_name_tables_hash_to_vyres_literals():
    # literals from vyre's vast/mod.rs and helpers/expr.rs
    assert TYPEOF_HASHES == {0x9A90A8A0, 0xFF65C714, 0xEE15BD69, 0x812B41F1}
    assert GNU_AUTO_TYPE_HASH == 0x572B7B0D
    assert ATTRIBUTE_HASH_KINDS[0xFCDD0CCC] == K.C_AST_KIND_ATTRIBUTE_SECTION
    assert ATTRIBUTE_HASH_KINDS[0x98F8AB09] == K.C_AST_KIND_ATTRIBUTE_FORMAT_ARG
    assert ATTRIBUTE_HASH_KINDS[0xB478DA94] == K.C_AST_KIND_ATTRIBUTE_NORETURN
    assert len(ATTRIBUTE_HASH_KINDS) == 102 and len(GNU_BUILTIN_HASH_KINDS) == 368
    # vyre's legacy fallback hashes all sit in the catalog with the same kinds
    legacy = {0x749DF71E: K.C_AST_KIND_BUILTIN_EXPECT_EXPR, 0xDCEC13F5: K.C_AST_KIND_BUILTIN_OFFSETOF_EXPR,
              0x790003C8: K.C_AST_KIND_BUILTIN_OBJECT_SIZE_EXPR, 0x21A753F0: K.C_AST_KIND_BUILTIN_PREFETCH_EXPR,
              0x4A9AC967: K.C_AST_KIND_BUILTIN_UNREACHABLE_STMT, 0x7F556BD5: K.C_AST_KIND_BUILTIN_OVERFLOW_EXPR,
              0xB0BCF282: K.C_AST_KIND_BUILTIN_OVERFLOW_EXPR, 0x8CC7B276: K.C_AST_KIND_BUILTIN_OVERFLOW_EXPR,
              0x39091622: K.C_AST_KIND_BUILTIN_CLASSIFY_TYPE_EXPR}
    assert all(builtin_identifier_kind(h) == k for h, k in legacy.items())
    assert builtin_identifier_kind(fnv1a32(b"__typeof__")) == K.C_AST_KIND_SIZEOF_EXPR
    assert builtin_identifier_kind(fnv1a32(b"__sync_synchronize")) == 0xC011E020


# ---- vyre's scans written out directly (ref_typedef/*.rs), against ClassifyContext's tables
def _direct(c: ClassifyContext, i: int, parent: int) -> dict:
    sib = [j for j in range(i) if c.parents[j] == parent]
    has = init = False
    last = prev = S
    for j in sib:
        k = c.kinds[j]
        body_open = k == T.TOK_LBRACE and (last in AGGREGATE_TOKENS
                                           or (last == T.TOK_IDENTIFIER and prev in AGGREGATE_TOKENS))
        if k in DECL_PREFIX_RESET_TOKENS:
            has = False
        if c.is_decl_prefix_at(j) or body_open or (k == T.TOK_IDENTIFIER and c.flags_col[j] & 1):
            has = True
        if k in (T.TOK_SEMICOLON, T.TOK_LBRACE, T.TOK_RBRACE):
            init = False
        if c.is_decl_prefix_at(j):
            init = True
        prev, last = last, k
    agg = NONE_AGGREGATE
    if parent < c.n and c.kinds[parent] == T.TOK_LBRACE:
        for j in range(parent):
            if c.parents[j] == c.parents[parent]:
                k = c.kinds[j]
                agg = RECORD if k in (T.TOK_STRUCT, T.TOK_UNION) else ENUM if k == T.TOK_ENUM else \
                    NONE_AGGREGATE if k in (T.TOK_SEMICOLON, T.TOK_ASSIGN, T.TOK_COMMA) else agg
    asm = False
    for j in reversed(sib):
        if c.kinds[j] == T.TOK_GNU_ASM:
            asm = True
        if c.kinds[j] not in (T.TOK_VOLATILE, T.TOK_GOTO):
            break
    return {"prev": (sib[-1], c.kinds[sib[-1]], c.kinds[sib[-2]] if len(sib) > 1 else S) if sib else (S, S, S),
            "decl": has, "init": init, "colons": sum(c.kinds[j] == T.TOK_COLON for j in sib), "aggregate": agg,
            "asm": asm}


def _direct_prior(c: ClassifyContext, i: int) -> tuple[bool, bool]:
    def raw_ordinary(s):
        if c.kinds[s] != T.TOK_IDENTIFIER or _direct(c, 0, c.parents[s])["aggregate"] != NONE_AGGREGATE:
            return False
        pk = c.kinds[s - 1] if s else S
        nk = c.kinds[s + 1] if s + 1 < c.n else S
        typedef_prefix = next((c.kinds[j] == T.TOK_TYPEDEF for j in range(s - 1, -1, -1)
                               if c.kinds[j] == T.TOK_TYPEDEF or c.kinds[j] in DECL_PREFIX_RESET_TOKENS), False)
        return (pk in DECL_PREFIX_TOKENS and pk != T.TOK_TYPEDEF and not typedef_prefix
                and nk in (T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_LBRACKET))
    paren_stmt = any(s + 5 < i and c.kinds[s] == T.TOK_LPAREN and c.kinds[s + 1] == T.TOK_IDENTIFIER
                     and c.kinds[s + 2] == T.TOK_RPAREN and c.kinds[s + 5] == T.TOK_SEMICOLON for s in range(i))
    return any(raw_ordinary(s) for s in range(i)), paren_stmt


def _check_scans(c: ClassifyContext, queries) -> None:
    for i, parent in queries:
        d = _direct(c, i, parent)
        sib = c.prev_sibling(i, parent)
        assert (sib.idx, sib.kind, sib.prev_kind) == d["prev"]
        assert c.decl_prefix_before(i, parent) == d["decl"] and c.init_prefix_before(i, parent) == d["init"]
        assert c.colons_before(i, parent) == d["colons"] and c.asm_prefix_before(i, parent) == d["asm"]
        assert c.parent_context(parent) == d["aggregate"]
        assert (c.prior_raw_ordinary_decl(i), c.prior_paren_ident_stmt(i)) == _direct_prior(c, i)


_POOL = [T.TOK_IDENTIFIER, T.TOK_IDENTIFIER, T.TOK_INT, T.TOK_TYPEDEF, T.TOK_STRUCT, T.TOK_ENUM, T.TOK_LPAREN,
         T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_RBRACE, T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_ASSIGN, T.TOK_COLON, T.TOK_STAR,
         T.TOK_GNU_ASM, T.TOK_VOLATILE, T.TOK_GOTO, T.TOK_STRING, T.TOK_LBRACKET, T.TOK_RBRACKET]


@pytest.mark.parametrize("seed", range(3))
def test_precomputed_scans_equal_vyres_direct_scans_on_random_rows(seed):
    rng = np.random.default_rng(seed)
    n = 150
    types: list[int] = []
    while len(types) < n:  # random kinds with `int x ;` (ordinary declaration) and `( a ) b c ;` patterns
        r = rng.random()
        types += ([T.TOK_INT, T.TOK_IDENTIFIER, T.TOK_SEMICOLON] if r < 0.05 else
                  [T.TOK_LPAREN, T.TOK_IDENTIFIER, T.TOK_RPAREN, T.TOK_IDENTIFIER, T.TOK_IDENTIFIER,
                   T.TOK_SEMICOLON] if r < 0.1 else [int(rng.choice(_POOL))])
    types = types[:n]
    rows = vast_rows(types, list(range(n)), [1] * n)
    for i in rng.choice(n, 20):  # typedef flags and typeof/__auto_type hashes on some rows
        rows[i * 10 + 7] = int(rng.integers(0, 8))
        rows[i * 10 + 9] = int(rng.choice([0, GNU_AUTO_TYPE_HASH, fnv1a32(b"typeof")]))
    c = ClassifyContext(rows)
    queries = [(i, c.parents[i]) for i in range(n)] + [(int(i), int(p)) for i, p in
                                                         zip(rng.integers(0, n, 40), rng.integers(0, n, 40))]
    _check_scans(c, queries + [(n - 1, S), (5, n + 3)])


def test_precomputed_scans_equal_vyres_direct_scans_on_a_header():
    path = Path("/usr/include/x86_64-linux-gnu/bits/stdio.h")
    if not path.exists():
        pytest.skip(f"{path} is not on this system")
    c = ClassifyContext(c_rows(path.read_text()))
    _check_scans(c, [(i, c.parents[i]) for i in range(c.n)])


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
