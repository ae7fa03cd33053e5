"""split_invocations: column loops become a grid dimension -- flash_attention at sizes that fit no
tile, with special values, on the reference and Vulkan; random row/column programs drawn so the
pass fires on shapes nobody wrote; and one refusal test per rule (a split that could change a
value must not happen)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ops import get
from vyre_vk.ops.builder import out_decl, ro_decl
from vyre_vk.opt import optimize
from vyre_vk.opt.split_invocations import plan, split_invocations

from .test_passes import same
from .test_phases_spread import _check, _inputs

F32 = DataType.F32


@pytest.mark.parametrize("specials", [False, True], ids=["finite", "specials"])
@pytest.mark.parametrize("s,d", [(9, 2), (37, 5), (130, 3)])
def test_flash_attention_split_bit_identical(s, d, specials):
    p = get("vyre-libs::nn::flash_attention").build_with(seq_len=s, head_dim=d)
    graph, reports = _check(p, _inputs(p, np.random.default_rng(s), specials=specials), passes=True)
    why = next(r.why for r in reports if r.name == "split_invocations")
    assert f"{d} invocations per original one" in why and "flash_o" in why, reports
    assert not any(b.is_workgroup for st_ in graph.stages for b in st_.buffers)


def _columns(rows: int, d: int, *, base="gid", guard=True, store_outside=False, carried=False, wg=True,
             lo=0) -> Program:
    """Per row r: acc = sum_j a[r*4 + j % 4] ... ; tmp[local*d + t] updated per j; out[r*d + t] = tmp/acc."""
    gid, lid = Expr.gid_x(), Expr.local_x()
    slot = Expr.add(Expr.mul(Expr.var("lane") if base != "const" else Expr.u32(0), Expr.u32(d)), Expr.var("t"))
    col = [Node.store("tmp", slot, Expr.add(Expr.mul(Expr.var("w"), Expr.load("tmp", slot)),
                                            Expr.load("b", Expr.add(Expr.mul(Expr.var("j"), Expr.u32(d)),
                                                                    Expr.sub(Expr.var("t"), Expr.u32(lo))))))]
    if carried:
        col.append(Node.assign("acc", Expr.var("w")))
    body = [Node.let_bind("acc", Expr.f32(0.0)),
            Node.loop_for("j", Expr.u32(0), Expr.u32(5), [
                Node.let_bind("w", Expr.exp(Expr.load("a", Expr.add(Expr.mul(Expr.var("row"), Expr.u32(5)),
                                                                     Expr.var("j"))))),
                Node.assign("acc", Expr.add(Expr.var("acc"), Expr.var("w"))),
                Node.loop_for("t", Expr.u32(lo), Expr.u32(lo + d), col)]),
            Node.loop_for("t", Expr.u32(lo), Expr.u32(lo + d), [Node.store(
                "out", Expr.add(Expr.mul(Expr.var("row"), Expr.u32(d)), Expr.var("t")),
                Expr.div(Expr.load("tmp", slot), Expr.var("acc")))])]
    if store_outside:
        body.append(Node.store("out", Expr.var("row"), Expr.f32(1.0)))
    top = [Node.let_bind("row", gid), Node.let_bind("lane", lid)]
    top += [Node.if_then(Expr.lt(Expr.var("row"), Expr.u32(rows)), body)] if guard else body
    bufs = [ro_decl("a", 0, rows * 5), ro_decl("b", 1, 5 * (lo + d)), out_decl("out", 2, rows * (lo + d) + lo)]
    bufs.append(BufferDecl.workgroup("tmp", 32 * (lo + d), F32) if wg else BufferDecl.read_write("tmp", 3, F32)
                .with_count(rows * (lo + d)))
    return Program.wrapped(bufs, (32, 1, 1), [wrap_anonymous("test::columns", top)])


def test_columns_program_splits():
    p = _columns(40, 6)
    assert plan(p)[0] is not None, plan(p)[1]
    _check(p, _inputs(p, np.random.default_rng(1), specials=True), ["split_invocations"])


@pytest.mark.parametrize("why,kwargs,reason", [
    ("slots shared by every lane", dict(base="const"), "base is not one local"),
    ("no guard bounds the rows", dict(guard=False), "no `id < N` guard"),
    ("a store outside the column loops", dict(store_outside=True), "a store outside"),
    ("a column loop assigns the row's accumulator", dict(carried=True), "assigns a variable"),
])
def test_refusals_keep_the_program(why, kwargs, reason):
    p = _columns(40, 6, **kwargs)
    pl, msg = plan(p)
    assert pl is None and reason in msg, (why, msg)
    assert split_invocations(p) is None


@st.composite
def column_programs(draw):
    return _columns(draw(st.integers(1, 70)), draw(st.integers(2, 9)), lo=draw(st.sampled_from([0, 0, 3]))), \
        draw(st.integers(0, 2**31)), draw(st.booleans())


@settings(max_examples=30, deadline=None)
@given(column_programs())
def test_random_column_programs_bit_identical(case):
    p, seed, specials = case
    graph, reports = _check(p, _inputs(p, np.random.default_rng(seed), specials), passes=True)
    assert "split_invocations" in {r.name for r in reports if r.changed}, reports


def test_vulkan_split_flash_attention_matches_reference(vk_device):
    p = get("vyre-libs::nn::flash_attention").build_with(seq_len=70, head_dim=6)
    inputs = _inputs(p, np.random.default_rng(3))
    k = vk_device.compile(p)
    assert "invocations per original one" in k.explain()
    same(reference.run(p, inputs), k.run(inputs))
