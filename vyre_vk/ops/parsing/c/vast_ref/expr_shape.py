"""CPU oracle of `vyre-libs::parsing::c11_build_expression_shape_nodes` (port of vyre's
reference_c11_build_expression_shape_nodes, vyre-libs/src/parsing/c/parse/vast/ref_expr_shape.rs).

One 8-word row per VAST node: ``[shape, node, raw_kind, precedence, associativity, a, b, c]``.
Binary and assignment operators (typed BINARY / ASSIGN_EXPR) are BINARY shapes with ``a``/``b``
the roots of their left/right operands; ``?`` (typed CONDITIONAL_EXPR, or any raw ``?``) is a
CONDITIONAL shape with ``a``/``b``/``c`` the roots of condition, then and else. Other nodes are
``[NONE, SENTINEL, raw_kind, 0, 0, SENTINEL, SENTINEL, SENTINEL]``.

Precedence is C's, low binds loosest: assignment 2, ``?:`` 3, ``||`` 4, ``&&`` 5, ``|`` 6, ``^`` 7,
``&`` 8, equality 9, relational 10, shifts 11, additive 12, multiplicative 13; assignment and
``?:`` associate right, binary operators left. Everything is among the operator's siblings (the
same parent word: parentheses and brackets are opaque operands), within its segment (between
``;``/``,`` siblings; a binary operator after a ``?``/``:`` sibling is bounded by those too):

- an operand spans from just after the nearest looser (or equal, by associativity) operator on
  that side to the operator, and its root is its loosest operator (the last of equal
  left-associative ones, the first of right-associative ones), else its first non-boundary node;
- a ``?`` pairs with the first unnested ``:`` after it; its condition starts after the last
  assignment before it in its ternary-bounded segment; with no ``:`` all three are SENTINEL.

Example (``a + b * c;``)::

    >>> from vyre_vk.ops.parsing.c.vast import vast_rows
    >>> from vyre_vk.ops.parsing.c.vast_ref import reference_classify_vast_node_kinds
    >>> raw = vast_rows([1, 20, 1, 22, 1, 16], list(range(6)), [1] * 6)
    >>> rows = reference_build_expression_shape_nodes(raw, reference_classify_vast_node_kinds(raw))
    >>> rows[8:16], rows[24:32]
    ([1, 1, 20, 12, 1, 0, 3, 4294967295], [1, 3, 22, 13, 1, 2, 4, 4294967295])
"""
from __future__ import annotations

from .....errors import InputError
from ...sema import vast_kinds as K
from .. import tokens as T
from .rows import SENTINEL, VAST_NODE_STRIDE_U32, VastRows, check_vast_words

C_EXPR_SHAPE_STRIDE_U32 = 8
C_EXPR_SHAPE_NONE, C_EXPR_SHAPE_BINARY, C_EXPR_SHAPE_CONDITIONAL = 0, 1, 2
C_EXPR_ASSOC_NONE, C_EXPR_ASSOC_LEFT, C_EXPR_ASSOC_RIGHT = 0, 1, 2
BINARY_PRECEDENCE = {
    T.TOK_OR: 4, T.TOK_AND: 5, T.TOK_PIPE: 6, T.TOK_CARET: 7, T.TOK_AMP: 8, T.TOK_EQ: 9, T.TOK_NE: 9,
    T.TOK_LT: 10, T.TOK_GT: 10, T.TOK_LE: 10, T.TOK_GE: 10, T.TOK_LSHIFT: 11, T.TOK_RSHIFT: 11,
    T.TOK_PLUS: 12, T.TOK_MINUS: 12, T.TOK_STAR: 13, T.TOK_SLASH: 13, T.TOK_PERCENT: 13}


def shape_kind(raw: int, typed: int) -> int:
    if typed == K.C_AST_KIND_CONDITIONAL_EXPR or raw == T.TOK_QUESTION:
        return C_EXPR_SHAPE_CONDITIONAL
    if typed in (K.BINARY, K.C_AST_KIND_ASSIGN_EXPR):
        return C_EXPR_SHAPE_BINARY
    return C_EXPR_SHAPE_NONE


def precedence(raw: int, typed: int) -> int:
    if typed == K.C_AST_KIND_ASSIGN_EXPR:
        return 2
    if typed == K.C_AST_KIND_CONDITIONAL_EXPR:
        return 3
    if typed != K.BINARY and raw != T.TOK_QUESTION:
        return 0
    return BINARY_PRECEDENCE.get(raw, 0)  # a `?` typed otherwise falls here too: 0


def associativity(typed: int) -> int:
    if typed in (K.C_AST_KIND_ASSIGN_EXPR, K.C_AST_KIND_CONDITIONAL_EXPR):
        return C_EXPR_ASSOC_RIGHT
    return C_EXPR_ASSOC_LEFT if typed == K.BINARY else C_EXPR_ASSOC_NONE


def is_boundary(raw: int, ternary_parts: bool) -> bool:
    return raw in (T.TOK_SEMICOLON, T.TOK_COMMA) or (ternary_parts and raw in (T.TOK_QUESTION, T.TOK_COLON))


class _Shapes:
    """The raw rows' sibling lists plus each node's shape, precedence and associativity."""

    def __init__(self, raw: VastRows, typed_kinds: list[int]) -> None:
        self.raw = raw
        self.shape = [shape_kind(r, t) for r, t in zip(raw.kinds, typed_kinds)]
        self.prec = [precedence(r, t) for r, t in zip(raw.kinds, typed_kinds)]
        self.assoc = [associativity(t) for t in typed_kinds]

    def segment(self, i: int, ternary_parts: bool) -> tuple[int, int]:
        """[start, end): from after the nearest boundary sibling before `i` (else 0) to the nearest
        one after it (else n)."""
        raw, group = self.raw, self.raw.group(self.raw.parents[i])
        k = raw.before(raw.parents[i], i)
        start = next((group[j] + 1 for j in range(k - 1, -1, -1) if is_boundary(raw.kinds[group[j]], ternary_parts)), 0)
        end = next((group[j] for j in range(k + 1, len(group)) if is_boundary(raw.kinds[group[j]], ternary_parts)),
                   raw.n)
        return start, end

    def after_ternary_part(self, i: int) -> bool:
        """The nearest ``; , ? :`` sibling before `i` is ``?`` or ``:``."""
        raw, group = self.raw, self.raw.group(self.raw.parents[i])
        for j in range(raw.before(raw.parents[i], i) - 1, -1, -1):
            k = raw.kinds[group[j]]
            if k in (T.TOK_QUESTION, T.TOK_COLON):
                return True
            if k in (T.TOK_SEMICOLON, T.TOK_COMMA):
                return False
        return False

    def operators(self, parent: int, lo: int, hi: int):
        """Operator siblings under `parent` with lo <= index < hi."""
        group = self.raw.group(parent)
        for j in range(self.raw.before(parent, lo), self.raw.before(parent, hi)):
            if self.shape[group[j]] != C_EXPR_SHAPE_NONE:
                yield group[j]

    def operand_bounds(self, i: int, start: int, end: int) -> tuple[int, int]:
        left, right = start, end
        prec, assoc = self.prec[i], self.assoc[i]
        for s in self.operators(self.raw.parents[i], start, end):
            if s == i:
                continue
            p = self.prec[s]
            tie = p == prec and ((assoc == C_EXPR_ASSOC_LEFT and i < s) or (assoc == C_EXPR_ASSOC_RIGHT and s < i))
            if p < prec or tie:
                if s < i:
                    left = s + 1
                elif right == end:  # the first one after i (scanned in order)
                    right = s
        return left, right

    def root(self, lo: int, hi: int, parent: int) -> int:
        """The loosest operator in [lo, hi) (later equal left-associative ones win), else the first
        sibling under `parent` that is not a boundary, else SENTINEL. Operators nested in brackets
        compete too (vyre skips only non-operators under other parents), so ``(a + b) * c``'s left
        operand root is the ``+``."""
        raw = self.raw
        best, best_prec, operand = SENTINEL, 0, SENTINEL
        for s in range(min(lo, raw.n), min(hi, raw.n)):
            if self.shape[s] == C_EXPR_SHAPE_NONE:
                if operand == SENTINEL and raw.parents[s] == parent and not is_boundary(raw.kinds[s], True):
                    operand = s
            elif best == SENTINEL or self.prec[s] < best_prec or (
                    self.prec[s] == best_prec and self.assoc[s] == C_EXPR_ASSOC_LEFT):
                best, best_prec = s, self.prec[s]
        return best if best != SENTINEL else operand

    def colon(self, q: int, end: int) -> int | None:
        raw, depth = self.raw, 0
        parent = raw.parents[q]
        group = raw.group(parent)
        for j in range(raw.before(parent, q + 1), raw.before(parent, min(end, raw.n))):
            k = raw.kinds[group[j]]
            if k == T.TOK_QUESTION:
                depth += 1
            elif k == T.TOK_COLON:
                if depth == 0:
                    return group[j]
                depth -= 1
        return None

    def condition_start(self, start: int, q: int) -> int:
        """After the last assignment-or-looser sibling operator in [start, q) (else `start`)."""
        out = start
        for s in self.operators(self.raw.parents[q], start, q):
            if self.prec[s] < self.prec[q]:
                out = s + 1
        return out

    def row(self, i: int) -> list[int]:
        raw_kind, shape, parent = self.raw.kinds[i], self.shape[i], self.raw.parents[i]
        a = b = c = SENTINEL
        if shape == C_EXPR_SHAPE_BINARY:
            start, end = self.segment(i, self.after_ternary_part(i))
            left, right = self.operand_bounds(i, start, end)
            a, b = self.root(left, i, parent), self.root(i + 1, right, parent)
        elif shape == C_EXPR_SHAPE_CONDITIONAL:
            _, end = self.segment(i, False)
            colon = self.colon(i, end)
            if colon is not None:
                a = self.root(self.condition_start(self.segment(i, True)[0], i), i, parent)
                b, c = self.root(i + 1, colon, parent), self.root(colon + 1, end, parent)
        node = SENTINEL if shape == C_EXPR_SHAPE_NONE else i
        return [shape, node, raw_kind, self.prec[i], self.assoc[i], a, b, c]


def reference_build_expression_shape_nodes(raw_words: list[int], typed_words: list[int]) -> list[int]:
    """Expression-shape rows (see the module doc) of raw VAST words and their typed words (the
    classifier's output for them). Raises InputError for partial rows or row counts that differ.

    >>> from vyre_vk.ops.parsing.c.vast import vast_rows
    >>> from vyre_vk.ops.parsing.c.vast_ref import reference_classify_vast_node_kinds
    >>> raw = vast_rows([1, 30, 1, 34, 1, 35, 1, 16], list(range(8)), [1] * 8)  # x = a ? b : c;
    >>> reference_build_expression_shape_nodes(raw, reference_classify_vast_node_kinds(raw))[24:32]
    [2, 3, 34, 3, 2, 2, 4, 6]
    """
    raw_words = check_vast_words(raw_words, "raw_vast_nodes")
    typed_words = check_vast_words(typed_words, "typed_vast_nodes")
    if len(raw_words) != len(typed_words):
        raise InputError("typed_vast_nodes", f"{len(typed_words) // VAST_NODE_STRIDE_U32} typed rows for "
                         f"{len(raw_words) // VAST_NODE_STRIDE_U32} raw rows",
                         "pass the typed rows the classifier made from these raw rows")
    shapes = _Shapes(VastRows(raw_words), typed_words[0::VAST_NODE_STRIDE_U32])
    return [w for i in range(shapes.raw.n) for w in shapes.row(i)]
