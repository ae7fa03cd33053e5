"""vyre_vk.ir.walk: the one tree walker. Agrees with the IR's own children/bodies, keeps
unchanged subtrees as the same objects, and walks trees far deeper than Python's recursion
limit (built around the constructors' depth caps) without recursing."""
from __future__ import annotations

import sys

import pytest

from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir.types import DataType, IRError
from vyre_vk.ir.paths import labelled_bodies
from vyre_vk.ir.walk import (EXPR_OPERANDS, NODE_BODIES, expr_children, expr_type, map_expr, node_all_exprs,
                             node_bodies, node_exprs, replace_expr, rewrite_nodes, transform_expr, walk_expr,
                             walk_expr_post, walk_nodes, walk_nodes_post, with_bodies, with_children)
from vyre_vk.ops import all_ops

DEEP = 5000
LEAVES = {E.LitU32, E.LitI32, E.LitF32, E.LitBool, E.Var, E.BufLen, E.InvocationId, E.WorkgroupId, E.LocalId,
          E.SubgroupLocalId, E.SubgroupSize}


def raw(cls, **fields):
    """An IR object built without its constructor (no depth cap): only walkers may touch it."""
    x = object.__new__(cls)
    x.__dict__.update(fields)
    return x


def deep_expr(n: int = DEEP):
    """((x + 1) + 2) + ... + n, left-deep: returns (root, ops innermost first, leaf, literals)."""
    leaf = E.Var("x")
    ops, lits, cur = [], [], leaf
    for k in range(1, n + 1):
        lit = E.LitU32(k)
        cur = raw(E.BinOpExpr, op=E.BinOp.Add, left=cur, right=lit)
        ops.append(cur)
        lits.append(lit)
    return cur, ops, leaf, lits


def deep_nodes(n: int = DEEP):
    """Block(Block(...Block(let x = 1)...)): returns (root, blocks innermost first, the let)."""
    let = N.Let("x", E.LitU32(1))
    blocks, cur = [], let
    for _ in range(n):
        cur = raw(N.Block, body=(cur,))
        blocks.append(cur)
    return cur, blocks, let


def ids(xs):
    return [id(x) for x in xs]


# ----------------------------------------------------------------------------- deep trees
def test_expression_pre_and_post_order_on_a_chain_deeper_than_the_recursion_limit():
    assert sys.getrecursionlimit() < DEEP
    root, ops, leaf, lits = deep_expr()
    assert ids(walk_expr(root)) == ids(ops[::-1] + [leaf] + lits)
    post = [leaf]
    for op, lit in zip(ops, lits):
        post += [lit, op]
    assert ids(walk_expr_post(root)) == ids(post)
    assert map_expr(root, lambda x: None) is root  # nothing rebuilt: no constructor, no cap
    assert replace_expr(root, lambda x: None) is root
    seen = []
    transform_expr(root, pre=lambda x: seen.append(x) and None)
    assert ids(seen) == ids(ops[::-1] + [leaf] + lits)
    assert expr_type(root, {"x": DataType.U32}, {}) is DataType.U32  # the left spine, no recursion


def test_statement_pre_and_post_order_on_nesting_deeper_than_the_recursion_limit():
    root, blocks, let = deep_nodes()
    assert ids(walk_nodes([root])) == ids(blocks[::-1] + [let])
    assert ids(walk_nodes_post([root])) == ids([let] + blocks)
    assert ids(node_all_exprs([root])) == ids([let.value])
    body = (root,)
    assert rewrite_nodes(body, stmt=lambda n: None, expr=lambda e: e) is body


def test_rewriting_at_the_constructors_depth_caps():
    e = E.Var("x")
    while e.depth < E.EXPR_DEPTH_CAP:
        e = E.UnOpExpr(E.UnOp.Negate, e)
    out = map_expr(e, lambda x: E.Var("y") if x == E.Var("x") else None)
    assert out.depth == E.EXPR_DEPTH_CAP and list(walk_expr(out))[-1] == E.Var("y")
    with pytest.raises(IRError):  # one more level is the constructor's to refuse
        map_expr(e, lambda x: E.UnOpExpr(E.UnOp.Negate, x) if x == E.Var("x") else None)
    n: N.Node = N.Let("x", E.LitU32(1))
    while n.nesting < N.NESTING_CAP:
        n = N.Block((n,))
    out = rewrite_nodes((n,), stmt=lambda s: (N.Let("y", E.LitU32(2)),) if isinstance(s, N.Let) else None)
    assert out[0].nesting == N.NESTING_CAP and list(walk_nodes(out))[-1] == N.Let("y", E.LitU32(2))


# ----------------------------------------------------------------------------- agreement with the IR
def _every_node_of_every_op():
    for entry in all_ops():
        yield from walk_nodes(entry.build().entry)


def test_children_and_bodies_agree_with_the_ir():
    kinds = set()
    for n in _every_node_of_every_op():
        assert node_bodies(n) == tuple(b for _, b in labelled_bodies(n))  # validation's labelled view
        assert with_bodies(n, node_bodies(n)) is n
        for e in node_exprs(n):
            for x in walk_expr(e):
                kinds.add(type(x))
                assert with_children(x, expr_children(x)) is x
    assert len(kinds) > 8


def test_every_variant_is_a_leaf_or_has_its_operands_listed():
    assert set(E.EXPR_VARIANTS.values()) == LEAVES | set(EXPR_OPERANDS) | {E.Call}
    bodied = {cls for cls in N.NODE_VARIANTS.values() if cls in NODE_BODIES}
    assert bodied == {N.If, N.Loop, N.Block, N.Region}


def test_with_children_rebuilds_each_variant():
    a, b, c = E.Var("a"), E.Var("b"), E.Var("c")
    samples = [E.Load("buf", a), E.BinOpExpr(E.BinOp.Add, a, b), E.UnOpExpr(E.UnOp.Negate, a), E.Select(a, b, c),
               E.Cast(DataType.F32, a), E.Fma(a, b, c), E.Atomic(E.AtomicOp.Add, "buf", a, None, b),
               E.Atomic(E.AtomicOp.CompareExchange, "buf", a, b, c), E.Call("op", (a, b)), E.SubgroupBallot(a),
               E.SubgroupShuffle(a, b), E.SubgroupReduce("Add", a)]
    for e in samples:
        kids = expr_children(e)
        new = tuple(E.LitU32(k) for k in range(len(kids)))
        rebuilt = with_children(e, new)
        assert type(rebuilt) is type(e) and expr_children(rebuilt) == new
        assert with_children(rebuilt, kids) == e


def test_transform_callbacks_run_in_order_and_see_the_original():
    e = E.BinOpExpr(E.BinOp.Mul, E.BinOpExpr(E.BinOp.Add, E.Var("i"), E.LitU32(1)), E.Var("i"))
    pre, post = [], []
    out = transform_expr(e, pre=lambda x: pre.append(x) or (E.LitU32(7) if x == E.Var("i") else None),
                         post=lambda new, old: post.append((new, old)) and None)
    assert out == E.BinOpExpr(E.BinOp.Mul, E.BinOpExpr(E.BinOp.Add, E.LitU32(7), E.LitU32(1)), E.LitU32(7))
    assert pre[0] == e and len(pre) == 5  # Mul, Add, i (replaced, not descended), 1, i
    assert [old for _, old in post] == [E.LitU32(1), e.left, e]  # replaced subtrees skip post
    assert post[-1][0] == out


def test_rewrite_nodes_splices_and_keeps_unchanged_statements():
    keep = N.Store("out", E.LitU32(0), E.Var("x"))
    body = (N.Let("x", E.LitU32(1)), N.If(E.LitBool(True), (N.Assign("x", E.LitU32(2)), keep), ()), keep)
    out = rewrite_nodes(body, stmt=lambda n: (N.Return(), N.Return()) if isinstance(n, N.Assign) else None)
    assert out[0] is body[0] and out[2] is keep and out[1].then == (N.Return(), N.Return(), keep)
    assert out[1].then[2] is keep
    swapped = rewrite_nodes(body, expr=lambda e: E.LitU32(9) if e == E.Var("x") else e)
    assert swapped[2].value == E.LitU32(9) and swapped[0] is body[0]
    order = []  # post: bottom-up, sees the statement with its lists already rewritten
    out = rewrite_nodes(body, post=lambda n: order.append(type(n).__name__) or (
        (N.Return(), n) if isinstance(n, N.If) else None))
    assert order == ["Let", "Assign", "Store", "If", "Store"]
    assert out[1] == N.Return() and out[2] is body[1] and len(out) == 4


def test_expr_type():
    env, bufs = {"i": DataType.U32}, {}
    assert expr_type(E.LitF32(0), env, bufs) is DataType.F32
    assert expr_type(E.Cast(DataType.I32, E.Var("i")), env, bufs) is DataType.I32
    assert expr_type(E.BinOpExpr(E.BinOp.Eq, E.Var("i"), E.LitU32(1)), env, bufs) is DataType.Bool
    assert expr_type(E.Select(E.LitBool(True), E.Var("i"), E.Var("i")), env, bufs) is DataType.U32
    assert expr_type(E.Var("unknown"), env, bufs) is None
    assert expr_type(E.UnOpExpr(E.UnOp.Negate, E.Var("unknown")), env, bufs) is None
