"""Which outputs a stage rewrites in full (vyre_vk.ir.coverage): the shapes it proves, those it must
refuse (each would let a starting value show), and the bound checks against the bound counts."""
from __future__ import annotations

import pytest

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
from vyre_vk.ir.coverage import id_guards, rewrites
from vyre_vk.opt.dispatch import coarsen

i, a = Expr.var("i"), Expr.load("a", Expr.var("i"))


def _prog(body, wg=(64, 1, 1)) -> Program:
    return Program.wrapped([BufferDecl.read("a", 0, DataType.U32).with_count(64),
                            BufferDecl.output("out", 1, DataType.U32).with_count(64)], wg, body)


def _guarded(*inner, bound=Expr.buf_len("out")):
    return [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, bound), list(inner))]


def test_a_guarded_store_at_the_id_rewrites_every_element():
    p = _prog(_guarded(Node.let_bind("v", a), Node.store("out", i, Expr.var("v"))))
    assert id_guards(p, "out") == ((Expr.buf_len("out"),), 1)
    assert rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 64})
    assert not rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 65})  # 64 ids dispatched: one element left
    assert rewrites(p, "out", (2, 1, 1), {"a": 64, "out": 65})


def test_literal_and_other_buffers_bounds_are_checked_against_the_bound_counts():
    p = _prog(_guarded(Node.store("out", i, a), bound=Expr.u32(64)))
    assert rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 64})
    assert not rewrites(p, "out", (2, 1, 1), {"a": 64, "out": 100})  # elements 64..99 never stored
    q = _prog(_guarded(Node.store("out", i, a), bound=Expr.buf_len("a")))
    assert rewrites(q, "out", (2, 1, 1), {"a": 100, "out": 100})
    assert not rewrites(q, "out", (2, 1, 1), {"a": 90, "out": 100})


def test_coarsened_programs_cover_factor_elements_per_invocation():
    p, why = coarsen(_prog(_guarded(Node.store("out", i, a))), 4)
    assert why and id_guards(p, "out")[1] == 4
    assert rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 64})  # 64 invocations x 4 elements
    assert not rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 257})


@pytest.mark.parametrize("why,body", [
    ("the store depends on the data", _guarded(Node.if_then(Expr.ne(a, Expr.u32(0)), [Node.store("out", i, a)]))),
    ("a return may come first", _guarded(Node.if_then(Expr.eq(a, Expr.u32(0)), [Node.return_()]), Node.store("out", i, a))),
    ("the stage reads what it stores", _guarded(Node.store("out", i, Expr.add(Expr.load("out", i), a)))),
    ("another element than the id's", _guarded(Node.store("out", Expr.add(i, Expr.u32(1)), a))),
    ("the id variable is reassigned", [Node.let_bind("i", Expr.gid_x()), Node.assign("i", Expr.u32(0)),
                                       Node.store("out", i, a)]),
    ("inside a loop", _guarded(Node.loop_for("k", Expr.u32(0), Expr.u32(1), [Node.store("out", i, a)]))),
    ("a branch with an else", [Node.let_bind("i", Expr.gid_x()), Node.if_then_else(
        Expr.lt(i, Expr.u32(64)), [Node.store("out", i, a)], [Node.store("out", Expr.u32(0), a)])]),
    ("a branch on something else than the id", [Node.let_bind("i", Expr.gid_x()), Node.if_then(
        Expr.lt(a, Expr.u32(64)), [Node.store("out", i, a)])]),
])
def test_refused(why, body):
    assert id_guards(_prog(body), "out") is None, why


def test_async_copies_and_calls_are_refused():
    """An async copy names buffers outside expressions (it could read `out`), a call could read it."""
    from vyre_vk.ir import node as N
    from vyre_vk.ir import expr as E
    copy = N.AsyncLoad("out", "a", Expr.u32(0), Expr.u32(4), "t")
    assert id_guards(_prog(_guarded(Node.store("out", i, a)) + [copy]), "out") is None
    call = Node.let_bind("c", E.Call("t::reader", (i,)))
    assert id_guards(_prog(_guarded(call, Node.store("out", i, a))), "out") is None
    assert id_guards(_prog(_guarded(Node.store("out", i, a))), "out") is not None  # the same without them


def test_two_dimensional_workgroups_are_refused():
    assert id_guards(_prog(_guarded(Node.store("out", i, a)), wg=(8, 8, 1)), "out") is None
