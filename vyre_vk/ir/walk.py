"""One tree walker for the vyre IR: children, rebuilding, pre/post-order iteration and rewriting
of expressions and statements, plus the optimiser's static expression type.

Every traversal here uses an explicit stack, so a tree deeper than Python's recursion limit
(a hostile or hand-built one: the constructors cap depth, ``object.__new__`` does not) is
walked without ``RecursionError``. Rebuilding goes through the variant constructors, so it
keeps their checks (depth caps included); an unchanged subtree is returned as the same object.

Example::

    >>> from vyre_vk.ir.expr import Expr
    >>> e = Expr.add(Expr.var("i"), Expr.mul(Expr.var("i"), Expr.u32(2)))
    >>> [type(x).__name__ for x in walk_expr_post(e)]
    ['Var', 'Var', 'LitU32', 'BinOpExpr', 'BinOpExpr']
    >>> three = map_expr(e, lambda x: Expr.u32(3) if x == Expr.var("i") else None)
    >>> three == Expr.add(Expr.u32(3), Expr.mul(Expr.u32(3), Expr.u32(2)))
    True
"""
from __future__ import annotations

import dataclasses
from operator import attrgetter
from typing import Callable, Iterable, Iterator, Optional, Sequence

from . import expr as E
from . import node as N
from .optable import BINOPS, UNOPS
from .types import DataType

ExprFn = Callable[[E.Expr], Optional[E.Expr]]

# ----------------------------------------------------------------------------- expression children
#: Fields holding sub-expressions, in evaluation order (Call's variadic `args` is handled apart;
#: Atomic's `expected` is skipped when None). Keep in step with vyre_vk/ir/expr.py's variants.
EXPR_OPERANDS: dict[type, tuple[str, ...]] = {
    E.Load: ("index",), E.BinOpExpr: ("left", "right"), E.UnOpExpr: ("operand",),
    E.Select: ("cond", "true_val", "false_val"), E.Cast: ("value",), E.Fma: ("a", "b", "c"),
    E.Atomic: ("index", "expected", "value"), E.SubgroupBallot: ("cond",),
    E.SubgroupShuffle: ("value", "lane"), E.SubgroupReduce: ("value",),
}


def _fields_of(e: E.Expr) -> tuple[str, ...]:
    names = EXPR_OPERANDS.get(type(e))
    if names is None:  # a subclass of a variant: find its base
        names = next((v for k, v in EXPR_OPERANDS.items() if isinstance(e, k)), ())
    if "expected" in names and e.expected is None:  # type: ignore[attr-defined]
        names = tuple(n for n in names if n != "expected")
    return names


def _getter(names: tuple[str, ...]) -> Callable[[E.Expr], tuple]:
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda e: (one(e),)
    return attrgetter(*names)


# Walks are hot (every pass, every analysis): one dict lookup and one C-level getter per node.
_KIDS: dict[type, Callable[[E.Expr], tuple]] = {t: _getter(f) for t, f in EXPR_OPERANDS.items() if t is not E.Atomic}
_KIDS[E.Atomic] = lambda e: (e.index, e.value) if e.expected is None else (e.index, e.expected, e.value)
_KIDS[E.Call] = lambda e: tuple(e.args)
_LEAF_TYPES = (E.LitU32, E.LitI32, E.LitF32, E.LitBool, E.Var, E.BufLen, E.InvocationId, E.WorkgroupId, E.LocalId,
               E.SubgroupLocalId, E.SubgroupSize)
_NO_KIDS = lambda e: ()  # noqa: E731
_KIDS.update((t, _NO_KIDS) for t in _LEAF_TYPES)


def expr_children(e: E.Expr) -> tuple[E.Expr, ...]:
    """Direct sub-expressions of `e`, in evaluation order (() for leaves and non-expressions).

    >>> expr_children(E.Select(E.Var("c"), E.LitU32(1), E.LitU32(2)))
    (Var(name='c'), LitU32(value=1), LitU32(value=2))
    """
    get = _KIDS.get(type(e))
    if get is not None:
        return get(e)
    if isinstance(e, E.Call):
        return tuple(e.args)
    return tuple(getattr(e, n) for n in _fields_of(e))


def with_children(e: E.Expr, kids: Sequence[E.Expr]) -> E.Expr:
    """`e` with its children (in :func:`expr_children` order) replaced by `kids`; `e` itself
    when every new child is the old object.

    >>> with_children(E.UnOpExpr(E.UnOp.Negate, E.LitI32(1)), [E.LitI32(2)]).operand
    LitI32(value=2)
    """
    old = expr_children(e)
    if len(old) == len(kids) and all(a is b for a, b in zip(old, kids)):
        return e
    if isinstance(e, E.Call):
        return dataclasses.replace(e, args=tuple(kids))
    return dataclasses.replace(e, **dict(zip(_fields_of(e), kids)))


# ----------------------------------------------------------------------------- expression traversal
def walk_expr(e: E.Expr) -> Iterator[E.Expr]:
    """`e` and every sub-expression, pre-order (a parent before its children, left to right)."""
    stack = [e]
    kids_of, pop, extend = expr_children, stack.pop, stack.extend
    while stack:
        x = pop()
        yield x
        kids = kids_of(x)
        if kids:
            extend(reversed(kids))


def walk_expr_post(e: E.Expr) -> Iterator[E.Expr]:
    """`e` and every sub-expression, post-order (children left to right, then the parent)."""
    stack: list = [(e, False)]
    while stack:
        x, expanded = stack.pop()
        kids = () if expanded else expr_children(x)
        if not kids:
            yield x
            continue
        stack.append((x, True))
        stack.extend((k, False) for k in reversed(kids))


def transform_expr(e: E.Expr, pre: Optional[ExprFn] = None,
                   post: Optional[Callable[[E.Expr, E.Expr], Optional[E.Expr]]] = None) -> E.Expr:
    """Rewrite `e`. `pre(x)` is asked first, top-down: a replacement is used as is (not
    descended into), None descends. `post(new, old)` is asked bottom-up, after x's children
    were rewritten (`new` is x rebuilt with them, `old` the original): a replacement or None to
    keep `new`. Callbacks run in pre/post order, left to right."""
    out: list = []          # finished results, a stack
    stack: list = [(e, -1)]  # (expression, -1: not yet visited | number of children to collect)
    while stack:
        x, n = stack.pop()
        if n < 0:
            if pre is not None:
                r = pre(x)
                if r is not None:
                    out.append(r)
                    continue
            kids = expr_children(x)
            if kids:
                stack.append((x, len(kids)))
                stack.extend((k, -1) for k in reversed(kids))
                continue
            new = x
        else:
            new = with_children(x, out[len(out) - n:])
            del out[len(out) - n:]
        if post is not None:
            r = post(new, x)
            if r is not None:
                new = r
        out.append(new)
    return out[0]


def map_expr(e: E.Expr, fn: ExprFn) -> E.Expr:
    """Rebuild `e` bottom-up; `fn(x)` returns a replacement for x (after its children were
    rebuilt) or None to keep it. Unchanged subtrees are returned as the same objects."""
    return transform_expr(e, post=lambda new, _old: fn(new))


def replace_expr(e: E.Expr, fn: ExprFn) -> E.Expr:
    """Rewrite `e` top-down: `fn(x)` returns a replacement for the whole subtree x (not
    descended into) or None to look inside it."""
    return transform_expr(e, pre=fn)


# ----------------------------------------------------------------------------- statements
#: Fields of a statement holding its own expressions, and its nested statement lists.
NODE_EXPRS: dict[type, tuple[str, ...]] = {
    N.Let: ("value",), N.Assign: ("value",), N.Store: ("index", "value"), N.If: ("cond",),
    N.Loop: ("from_", "to"), N.Trap: ("address",), N.AsyncLoad: ("offset", "size"),
    N.AsyncStore: ("offset", "size"),
}
NODE_BODIES: dict[type, tuple[str, ...]] = {
    N.If: ("then", "otherwise"), N.Loop: ("body",), N.Block: ("body",), N.Region: ("body",),
}


def _node_fields(table: dict, n: N.Node) -> tuple[str, ...]:
    names = table.get(type(n))
    if names is None:
        names = next((v for k, v in table.items() if isinstance(n, k)), ())
    return names


_NODE_EXPR_GET = {t: _getter(f) for t, f in NODE_EXPRS.items()}
_NODE_BODY_GET = {t: _getter(f) for t, f in NODE_BODIES.items()}
for _t in N.NODE_VARIANTS.values():  # the rest have none: answer without the isinstance fallback
    _NODE_EXPR_GET.setdefault(_t, _NO_KIDS)
    _NODE_BODY_GET.setdefault(_t, _NO_KIDS)
del _t


def node_exprs(n: N.Node) -> tuple[E.Expr, ...]:
    """The expressions statement `n` evaluates itself (not those of nested statements)."""
    get = _NODE_EXPR_GET.get(type(n))
    return get(n) if get is not None else tuple(getattr(n, f) for f in _node_fields(NODE_EXPRS, n))


def node_bodies(n: N.Node) -> tuple[tuple[N.Node, ...], ...]:
    """The nested statement lists of `n` (If: then, otherwise; Loop/Block/Region: body)."""
    get = _NODE_BODY_GET.get(type(n))
    return get(n) if get is not None else tuple(getattr(n, f) for f in _node_fields(NODE_BODIES, n))


def with_exprs(n: N.Node, exprs: Sequence[E.Expr]) -> N.Node:
    """`n` with its own expressions (in :func:`node_exprs` order) replaced; `n` if unchanged."""
    names = _node_fields(NODE_EXPRS, n)
    if all(getattr(n, f) is x for f, x in zip(names, exprs)):
        return n
    return dataclasses.replace(n, **dict(zip(names, exprs)))


def with_bodies(n: N.Node, bodies: Sequence[Sequence[N.Node]]) -> N.Node:
    """`n` with its statement lists (in :func:`node_bodies` order) replaced; `n` if unchanged."""
    names = _node_fields(NODE_BODIES, n)
    old = [getattr(n, f) for f in names]
    if all(len(a) == len(b) and all(x is y for x, y in zip(a, b)) for a, b in zip(old, bodies)):
        return n
    return dataclasses.replace(n, **{f: tuple(b) for f, b in zip(names, bodies)})


def map_node_exprs(n: N.Node, fn: Callable[[E.Expr], E.Expr]) -> N.Node:
    """`n` with each of its own expressions (not nested statements') replaced by fn(expr)."""
    exprs = node_exprs(n)
    return with_exprs(n, [fn(x) for x in exprs]) if exprs else n


def walk_nodes(nodes: Iterable[N.Node]) -> Iterator[N.Node]:
    """Every statement in `nodes`, nested ones included, pre-order.

    >>> loop = N.Loop("k", E.LitU32(0), E.LitU32(2), (N.Let("x", E.Var("k")),))
    >>> [type(n).__name__ for n in walk_nodes([loop, N.Return()])]
    ['Loop', 'Let', 'Return']
    """
    stack = list(nodes)[::-1]
    while stack:
        n = stack.pop()
        yield n
        for body in reversed(node_bodies(n)):
            stack.extend(reversed(body))


def walk_nodes_post(nodes: Iterable[N.Node]) -> Iterator[N.Node]:
    """Every statement in `nodes`, post-order: a statement after everything nested in it."""
    stack: list = [(n, False) for n in reversed(list(nodes))]
    while stack:
        n, expanded = stack.pop()
        bodies = () if expanded else node_bodies(n)
        if not any(bodies):
            yield n
            continue
        stack.append((n, True))
        for body in reversed(bodies):
            stack.extend((x, False) for x in reversed(body))


def node_all_exprs(nodes: Iterable[N.Node]) -> Iterator[E.Expr]:
    """Every expression (and sub-expression) evaluated anywhere in `nodes`, statement by
    statement in pre-order, each expression pre-order."""
    for n in walk_nodes(nodes):
        for e in node_exprs(n):
            yield from walk_expr(e)


StmtFn = Callable[[N.Node], Optional[Sequence[N.Node]]]


def rewrite_nodes(nodes: Iterable[N.Node], stmt: Optional[StmtFn] = None,
                  expr: Optional[Callable[[E.Expr], E.Expr]] = None, post: Optional[StmtFn] = None) -> tuple[N.Node, ...]:
    """Rewrite a statement list. For each statement (pre-order) `stmt(n)` may return the
    statements that replace it (spliced in, not descended into) or None; then `n`'s own
    expressions go through `expr`, its nested lists are rewritten the same way, and `post`
    (bottom-up: inner statements first) may return the statements that replace the result.

    >>> body = (N.Let("x", E.LitU32(1)), N.Block((N.Assign("x", E.LitU32(2)),)))
    >>> rewrite_nodes(body, stmt=lambda n: () if isinstance(n, N.Assign) else None)[1]
    Block(body=())
    """
    out: list = []  # finished statement tuples, a stack
    LIST, NODE, JOIN, BUILD = 0, 1, 2, 3
    tasks: list = [(LIST, tuple(nodes))]
    while tasks:
        kind, item, *rest = tasks.pop()
        if kind == LIST:
            tasks.append((JOIN, item))
            tasks.extend((NODE, n) for n in reversed(item))
        elif kind == NODE:
            r = stmt(item) if stmt is not None else None
            if r is not None:
                out.append(tuple(r))
                continue
            n = map_node_exprs(item, expr) if expr is not None else item
            bodies = node_bodies(n)
            if not bodies:
                r = post(n) if post is not None else None
                out.append((n,) if r is None else tuple(r))
                continue
            tasks.append((BUILD, n, len(bodies)))
            tasks.extend((LIST, b) for b in reversed(bodies))
        elif kind == JOIN:  # the list's statements' results, concatenated
            parts = out[len(out) - len(item):]
            del out[len(out) - len(item):]
            flat = tuple(x for p in parts for x in p)
            same = len(flat) == len(item) and all(a is b for a, b in zip(flat, item))
            out.append(item if same else flat)
        else:  # BUILD: the statement with its rewritten lists
            k = rest[0]
            bodies = out[len(out) - k:]
            del out[len(out) - k:]
            n = with_bodies(item, bodies)
            r = post(n) if post is not None else None
            out.append((n,) if r is None else tuple(r))
    return out[0]


# ----------------------------------------------------------------------------- types
_U32_LEAVES = (E.BufLen, E.InvocationId, E.WorkgroupId, E.LocalId, E.Atomic, E.SubgroupLocalId, E.SubgroupSize,
               E.SubgroupBallot)
_LIT_TYPES = {E.LitU32: DataType.U32, E.LitI32: DataType.I32, E.LitF32: DataType.F32, E.LitBool: DataType.Bool}


def expr_type(e: E.Expr, env: dict, bufs: dict) -> Optional[DataType]:
    """Static type of `e` (None if unknown), given variable types `env` and buffers by name.
    Follows the leftmost operand (operators' result type depends on it) with a loop, not recursion.

    >>> expr_type(E.BinOpExpr(E.BinOp.Lt, E.Var("i"), E.LitU32(3)), {"i": DataType.U32}, {})
    DataType.Bool
    """
    results: list = []  # operator result-type rules from the outside in
    while True:
        if isinstance(e, (E.BinOpExpr, E.UnOpExpr)):
            binary = isinstance(e, E.BinOpExpr)
            info = (BINOPS if binary else UNOPS).get(e.op)
            if info is None:
                return None
            results.append(info.result_type)
            e = e.left if binary else e.operand
        elif isinstance(e, E.Select):
            e = e.true_val
        elif isinstance(e, (E.SubgroupShuffle, E.SubgroupReduce)):
            e = e.value  # a lane's value of the same type
        else:
            break
    t: Optional[DataType] = _LIT_TYPES.get(type(e))
    if t is None:
        if isinstance(e, E.Var):
            t = env.get(e.name)
        elif isinstance(e, E.Load):
            b = bufs.get(e.buffer)
            t = b.element if b is not None else None
        elif isinstance(e, _U32_LEAVES):
            t = DataType.U32
        elif isinstance(e, E.Cast):
            t = e.target
        elif isinstance(e, E.Fma):
            t = DataType.F32
    if t is None:
        return None
    for rule in reversed(results):
        t = rule(t)
    return t


__all__ = ["EXPR_OPERANDS", "NODE_EXPRS", "NODE_BODIES", "expr_children", "with_children", "walk_expr",
           "walk_expr_post", "transform_expr", "map_expr", "replace_expr", "node_exprs", "node_bodies",
           "with_exprs", "with_bodies", "map_node_exprs", "walk_nodes", "walk_nodes_post", "node_all_exprs",
           "rewrite_nodes", "expr_type", "StmtFn", "ExprFn"]
