"""Python models of vyre's C semantic passes over token streams, written from the rules in
vyre_vk/ops/parsing/sema (declarations.py, scope.py), and a generator of C-like token streams.

Example::

    >>> import numpy as np
    >>> types, depths = c_token_stream(np.random.default_rng(0), 40)
    >>> len(types), int(depths.max()) >= 0
    (40, True)
"""
from __future__ import annotations

import numpy as np

from vyre_vk.ops.parsing.c import tokens as T

U32 = np.uint32
I, INT, CHAR, VOID = T.TOK_IDENTIFIER, T.TOK_INT, T.TOK_CHAR_KW, T.TOK_VOID
LP, RP, LB, RB, SEMI, COMMA, STAR, ASSIGN, COLON = (T.TOK_LPAREN, T.TOK_RPAREN, T.TOK_LBRACE, T.TOK_RBRACE,
                                                     T.TOK_SEMICOLON, T.TOK_COMMA, T.TOK_STAR, T.TOK_ASSIGN,
                                                     T.TOK_COLON)
_TYPES = [INT, CHAR, VOID, T.TOK_LONG, T.TOK_UNSIGNED, T.TOK_DOUBLE, T.TOK_BOOL, T.TOK_FLOAT16_KW, T.TOK_GNU_INT128]
_QUALS = [T.TOK_CONST, T.TOK_STATIC, T.TOK_EXTERN, T.TOK_VOLATILE, T.TOK_INLINE, T.TOK_GNU_EXTENSION]


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _decl(rng) -> list[int]:
    q = [_pick(rng, _QUALS)] if rng.random() < 0.3 else []
    ty = [_pick(rng, _TYPES)] if rng.random() < 0.8 else [I]  # a typedef name as the type
    names = [I] + ([ASSIGN, T.TOK_INTEGER] if rng.random() < 0.3 else [])
    for _ in range(int(rng.integers(0, 3))):
        names += [COMMA] + ([STAR] if rng.random() < 0.3 else []) + [I]
    return q + ty + names + [SEMI]


def _params(rng) -> list[int]:
    out = [LP]
    for k in range(int(rng.integers(0, 3))):
        out += ([COMMA] if k else []) + [_pick(rng, _TYPES), I]
    if rng.random() < 0.2:
        out += [LP, STAR, I, RP, LP, INT, RP]  # a function-pointer parameter: nested parens
    return out + [RP]


def _statement(rng, depth: int) -> list[int]:
    r = rng.random()
    if r < 0.3:
        return _decl(rng)
    if r < 0.45:
        return [I, ASSIGN, I, T.TOK_PLUS, T.TOK_INTEGER, SEMI]
    if r < 0.55:
        return [I, LP, I, COMMA, T.TOK_STRING, RP, SEMI]  # a call
    if r < 0.62:
        return [I, COLON]  # a label
    if r < 0.67:
        return [T.TOK_GOTO, I, SEMI]
    if r < 0.72:
        return [T.TOK_CASE, I, COLON]
    if r < 0.82 and depth < 6:
        return [T.TOK_IF, LP, I, T.TOK_LT, I, RP, LB] + _body(rng, depth + 1) + [RB]
    if r < 0.87:
        return [T.TOK_RETURN, I, SEMI]
    if r < 0.9:
        return [T.TOK_PREPROC]
    return [LB, RB] if depth < 6 else [SEMI]


def _body(rng, depth: int) -> list[int]:
    out = []
    for _ in range(int(rng.integers(0, 5))):
        out += _statement(rng, depth)
    return out


def _top(rng) -> list[int]:
    r = rng.random()
    if r < 0.25:
        return _decl(rng)
    if r < 0.4:
        return [_pick(rng, _TYPES), I] + _params(rng) + [SEMI]  # a prototype
    if r < 0.65:
        pre = [T.TOK_STATIC] if rng.random() < 0.3 else []
        return pre + [_pick(rng, _TYPES), I] + _params(rng) + [LB] + _body(rng, 1) + [RB]
    if r < 0.75:
        tag = _pick(rng, [T.TOK_STRUCT, T.TOK_UNION])
        fields = []
        for _ in range(int(rng.integers(1, 4))):
            fields += [_pick(rng, _TYPES), I, SEMI]
        return [tag] + ([I] if rng.random() < 0.7 else []) + [LB] + fields + [RB] + ([I] if rng.random() < 0.5 else []) + [SEMI]
    if r < 0.83:
        body = [I]
        for _ in range(int(rng.integers(0, 3))):
            body += [COMMA, I] + ([ASSIGN, T.TOK_INTEGER] if rng.random() < 0.4 else [])
        return [T.TOK_ENUM] + ([I] if rng.random() < 0.6 else []) + [LB] + body + [RB, SEMI]
    if r < 0.92:
        if rng.random() < 0.5:
            return [T.TOK_TYPEDEF, _pick(rng, _TYPES), I, SEMI]
        return [T.TOK_TYPEDEF, _pick(rng, _TYPES), I] + _params(rng) + [SEMI]
    if r < 0.96:
        return [T.TOK_PREPROC]
    return [_pick(rng, [RB, RP, LP, LB, COMMA, I])]  # stray punctuation: unbalanced streams


def c_token_stream(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` token types of C-like top-level items, and each token's brace depth (an open brace
    counts at its own index, as core_delimiter_match computes it), wrapping like u32."""
    types: list[int] = []
    while len(types) < n:
        types += _top(rng)
    types = np.asarray(types[:n], U32)
    step = (types == LB).astype(np.int64) - (types == RB).astype(np.int64)
    return types, (np.cumsum(step) % (1 << 32)).astype(U32)


# ---------------------------------------------------------------- opt_propagate_type_specifiers
_SPEC = {INT, CHAR, VOID, T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM, T.TOK_FLOAT_KW, T.TOK_DOUBLE, T.TOK_SHORT, T.TOK_LONG,
         T.TOK_SIGNED, T.TOK_UNSIGNED, T.TOK_BOOL, T.TOK_COMPLEX, T.TOK_IMAGINARY, T.TOK_ATOMIC, T.TOK_GNU_TYPEOF,
         T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_AUTO_TYPE, T.TOK_GNU_INT128, T.TOK_GNU_BUILTIN_VA_LIST, T.TOK_BITINT_KW,
         T.TOK_FLOAT16_KW, T.TOK_FLOAT32_KW, T.TOK_FLOAT64_KW, T.TOK_FLOAT128_KW, T.TOK_GNU_FLOAT128_KW,
         T.TOK_GNU_BF16_KW, T.TOK_GNU_FP16_KW, T.TOK_DECIMAL32_KW, T.TOK_DECIMAL64_KW, T.TOK_DECIMAL128_KW}
_STARTS = {T.TOK_EOF, SEMI, COMMA, LB, RB, LP}
_PREFIXES = {T.TOK_TYPEDEF, T.TOK_EXTERN, T.TOK_STATIC, T.TOK_AUTO, T.TOK_REGISTER, T.TOK_INLINE, T.TOK_CONST,
             T.TOK_VOLATILE, T.TOK_RESTRICT, T.TOK_ALIGNAS, T.TOK_NORETURN, T.TOK_THREAD_LOCAL, T.TOK_GNU_EXTENSION,
             T.TOK_GNU_TYPEOF, T.TOK_GNU_TYPEOF_UNQUAL, T.TOK_GNU_AUTO_TYPE, T.TOK_GNU_INT128,
             T.TOK_GNU_BUILTIN_VA_LIST, T.TOK_GNU_ADDRESS_SPACE}
_TAGS = {T.TOK_STRUCT, T.TOK_UNION, T.TOK_ENUM}


def _is_tag_name(prev: int, pp: int) -> bool:
    return prev == I and pp in _TAGS


def _opens_aggregate(prev: int, pp: int) -> bool:
    return prev in _TAGS or _is_tag_name(prev, pp)


def propagate_types(types, depths) -> np.ndarray:
    """For each token: walk back from it over tokens no deeper than it; skip `}`..`{` bodies
    (a non-aggregate `{` that closes one ends the walk), stop at `;`, a directive or a
    non-aggregate `{`, and return the first type specifier or typedef-name-position identifier."""
    ty, dp = types.tolist(), depths.tolist()
    out = np.zeros(len(ty), U32)
    for t in range(len(ty)):
        skip = 0
        for i in range(t, -1, -1):
            tok = ty[i]
            if dp[i] > dp[t]:
                continue
            prev = ty[i - 1] if i > 0 else T.TOK_EOF
            pp = ty[i - 2] if i > 1 else T.TOK_EOF
            if skip:
                if tok == RB:
                    skip += 1
                elif tok == LB:
                    skip -= 1
                    if skip == 0 and not _opens_aggregate(prev, pp):
                        break
                continue  # the skip ends on its `{`, which is then past
            if tok == RB:
                skip = 1
                continue
            if tok in (SEMI, T.TOK_PREPROC) or (tok == LB and not _opens_aggregate(prev, pp)):
                break
            typedef_pos = not _is_tag_name(prev, pp) and (prev in _STARTS or prev in _PREFIXES)
            if tok in _SPEC or (i < t and tok == I and typedef_pos):
                out[t] = tok
                break
    return out


# ---------------------------------------------------------------- c_sema_scope
_DECL_PREFIX = {T.TOK_AUTO, T.TOK_CONST, T.TOK_DOUBLE, T.TOK_ENUM, T.TOK_EXTERN, T.TOK_FLOAT_KW, T.TOK_INLINE,
                T.TOK_LONG, T.TOK_REGISTER, T.TOK_RESTRICT, T.TOK_SHORT, T.TOK_SIGNED, T.TOK_STATIC, T.TOK_STRUCT,
                T.TOK_THREAD_LOCAL, T.TOK_TYPEDEF, T.TOK_UNION, T.TOK_UNSIGNED, T.TOK_VOLATILE, T.TOK_BITINT_KW,
                T.TOK_FLOAT16_KW, T.TOK_FLOAT32_KW, T.TOK_FLOAT64_KW, T.TOK_FLOAT128_KW, T.TOK_GNU_FLOAT128_KW,
                T.TOK_GNU_BF16_KW, T.TOK_GNU_FP16_KW, T.TOK_DECIMAL32_KW, T.TOK_DECIMAL64_KW, T.TOK_DECIMAL128_KW,
                T.TOK_FORCEINLINE_KW}
_FN_NAME_PREFIX = {CHAR, I, INT, VOID} | _DECL_PREFIX
_DECL_CONTEXT = {INT, CHAR, VOID, T.TOK_STRUCT, T.TOK_TYPEDEF, COMMA, SEMI, LP, RP, STAR} | _DECL_PREFIX


def open_brace_before(ty: list, limit: int):
    """Index of the nearest `{` before `limit` that is not closed before `limit`, or None."""
    depth = 0
    for i in range(limit - 1, -1, -1):
        if ty[i] == RB:
            depth += 1
        elif ty[i] == LB:
            if depth == 0:
                return i
            depth -= 1
    return None


def brace_scope(ty: list, t: int) -> tuple[int, int]:
    op = open_brace_before(ty, t)
    if op is None:
        return 0, 0
    parent = open_brace_before(ty, op)
    return op + 1, (parent + 1 if parent is not None else 0)


def _matching_rparen(ty: list, start: int):
    """The `)` closing a `(` already open before `start`."""
    depth = 1
    for i in range(start, len(ty)):
        if ty[i] == LP:
            depth += 1
        elif ty[i] == RP:
            if depth == 1:
                return i
            depth -= 1
    return None


def _boundary_after(ty: list, rparen: int):
    """(token, index) of the first `{` after `)`, or of a `;` right after it; None if neither."""
    for i in range(rparen + 1, len(ty)):
        if ty[i] == LB or (ty[i] == SEMI and i == rparen + 1):
            return ty[i], i
    return None


def function_parameter_scope(ty: list, t: int, scope: tuple[int, int]):
    """(scope, parent) of a token inside a function declarator's parentheses, else None;
    `scope` is the (id, parent) the lane had before (its brace scope, or 0/0 standalone)."""
    depth, lparen = 0, None
    for i in range(t - 1, -1, -1):
        if ty[i] == RP:
            depth += 1
        elif ty[i] == LP:
            if depth == 0:
                lparen = i
                break
            depth -= 1
    if not lparen:  # none, or at index 0 (no name before it)
        return None
    prefix = ty[lparen - 2] if lparen >= 2 else 0
    if ty[lparen - 1] != I or prefix not in _FN_NAME_PREFIX:
        return None
    rparen = _matching_rparen(ty, lparen + 1)
    if rparen is None or t >= rparen:
        return None
    found = _boundary_after(ty, rparen)
    if found is None:
        return None
    opener = found[1] if found[0] == LB else lparen
    pending = ty[t] == LB or any(x in (LB, RB) for x in ty[t + 1:opener])
    return opener + 1, (scope[1] if pending else scope[0])


def decl_kind(ty: list, t: int) -> int:
    """0 none, 1 function definition, 2 prototype, 3 variable, 4 label, 5 typedef, 6 enum constant."""
    n = len(ty)
    if ty[t] != I:
        return 0
    prev = ty[t - 1] if t > 0 else 0
    nxt = ty[t + 1] if t + 1 < n else 0
    if nxt == COLON and prev not in (T.TOK_CASE, T.TOK_GOTO):
        return 4
    if prev in _TAGS:
        return 0
    op = open_brace_before(ty, t)
    aggregate = 0
    if op is not None:
        p, pp = (ty[op - 1] if op > 0 else 0), (ty[op - 2] if op > 1 else 0)
        aggregate = p if p in _TAGS else (pp if pp in _TAGS else 0)
    if aggregate == T.TOK_ENUM and (prev in (LB, COMMA) or nxt in (COMMA, ASSIGN, RB)):
        return 6
    if aggregate:
        return 0
    kind = 0
    if nxt == LP and t + 2 < n:
        rparen = _matching_rparen(ty, t + 2)
        if rparen is not None:
            found = _boundary_after(ty, rparen)
            if found is not None and found[0] == LB:
                kind = 1
            elif prev in _DECL_CONTEXT:
                kind = 5 if prev == T.TOK_TYPEDEF else 2
            elif prev == T.TOK_TYPEDEF:
                kind = 5
    if kind:
        return kind
    seen_typedef = False
    for i in range(t - 1, -1, -1):
        if ty[i] in (SEMI, LB):
            break
        seen_typedef |= ty[i] == T.TOK_TYPEDEF
    if prev == T.TOK_TYPEDEF or seen_typedef:
        return 5
    return 3 if prev in _DECL_CONTEXT else 0


def intern_id(ty: list, starts, lens, hay, t: int) -> int:
    """FNV-1a 32 over the identifier's source bytes (low byte of each element; 0 past the end)."""
    if ty[t] != I or lens[t] == 0:
        return 0
    h = 0x811C9DC5
    for k in range(int(lens[t])):
        j = (int(starts[t]) + k) % (1 << 32)
        h = ((h ^ (int(hay[j]) & 0xFF if j < len(hay) else 0)) * 0x01000193) & 0xFFFFFFFF
    return h


def scope_tree(types, starts, lens, hay, columns=(0, 1, 2, 3), phase: str = "scope") -> np.ndarray:
    """The (scope, parent, decl, intern) rows; `phase` "brace" or "params" computes the scope
    words as that phase alone does; words outside `columns` are 0."""
    ty = [int(x) for x in types]
    rows = np.zeros((len(ty), 4), U32)
    for t in range(len(ty)):
        scope = (0, 0) if phase == "params" else brace_scope(ty, t)
        if phase != "brace":
            scope = function_parameter_scope(ty, t, scope) or scope
        rows[t] = [scope[0], scope[1], decl_kind(ty, t), intern_id(ty, starts, lens, hay, t)]
    rows[:, [c for c in range(4) if c not in columns]] = 0
    return rows.reshape(-1)


# ---------------------------------------------------------------- ast_to_pg_semantic_graph
def pg_semantic_graph(vast, n: int):
    """(node rows, edge rows) of the semantic AST-to-PG lowering, from its rules (pg_semantic.py)."""
    from vyre_vk.ops.parsing.sema import pg_semantic_tables as S
    from vyre_vk.ops.parsing.sema import vast_kinds as K
    rows = np.asarray(vast, np.uint64).reshape(-1, 10)[:n].astype(np.int64).tolist()
    MAX = 0xFFFFFFFF

    def ok(i):
        return i < n

    def parent(i):
        return rows[i][1]

    def root(i):
        r, p = i, parent(i)
        for _ in range(n):
            if ok(p):
                r, p = p, parent(p)
        return r

    bound = min(n, 64)
    nodes, edges = [], []
    for t, row in enumerate(rows):
        kind, par, first, nxt = row[0], row[1], row[2], row[3]
        fp = kind == K.C_AST_KIND_POINTER_DECL and K.C_AST_KIND_FUNCTION_DECLARATOR in [
            rows[i][0] for i in (par, first, nxt) if ok(i)]
        cat, role = S.category_of(kind), S.role_of(kind, fp)
        nodes += [kind, row[5], (row[5] + row[6]) % (1 << 32), par, first, nxt, cat, role, row[7], row[8]]
        e3 = e4 = None
        if kind == K.C_AST_KIND_GOTO_STMT and ok(nxt) and rows[nxt][9] != 0:
            here = root(t)
            hit = next((i for i in range(n) if rows[i][0] == K.C_AST_KIND_LABEL_STMT and rows[i][9] == rows[nxt][9]
                        and root(i) == here), None)
            e3 = (S.EDGE_GOTO_TARGET, t, hit) if hit is not None else None
        if kind == K.C_AST_KIND_SWITCH_STMT and ok(nxt) and ok(rows[nxt][2]) and parent(rows[nxt][2]) == nxt:
            e3 = (S.EDGE_SWITCH_SELECTOR, t, rows[nxt][2])
        if kind in (K.C_AST_KIND_CASE_STMT, K.C_AST_KIND_DEFAULT_STMT):
            enc, a = None, par
            for _ in range(bound):  # nearest switch ancestor
                if ok(a):
                    if rows[a][0] == K.C_AST_KIND_SWITCH_STMT:
                        enc = a
                        break
                    a = parent(a)
            if enc is None:  # else the nearby switch whose body is the closest ancestor
                best = MAX
                for s in range(max(t - bound, 0), min(t + bound, n)):
                    cond = rows[s][3]
                    if rows[s][0] != K.C_AST_KIND_SWITCH_STMT or not ok(cond) or not ok(rows[cond][3]):
                        continue
                    body, a = rows[cond][3], par
                    for step in range(bound):
                        if a == body:
                            if step < best:
                                enc, best = s, step
                            break
                        if ok(a):
                            a = parent(a)
            if kind == K.C_AST_KIND_CASE_STMT:
                if ok(nxt) and parent(nxt) == par:
                    e3 = (S.EDGE_CASE_VALUE, t, nxt)
                e4 = (S.EDGE_SWITCH_CASE, enc, t) if enc is not None else None
            elif enc is not None:
                e3 = (S.EDGE_SWITCH_DEFAULT, enc, t)
        links = [(S.EDGE_PARENT, par, t) if ok(par) else None, (S.EDGE_FIRST_CHILD, t, first) if ok(first) else None,
                 (S.EDGE_NEXT_SIBLING, t, nxt) if ok(nxt) else None, e3, e4]
        for edge in links:
            edges += list(edge or (S.EDGE_NONE, MAX, MAX)) + [kind, role, cat]
    return np.asarray(nodes, U32), np.asarray(edges, U32)
