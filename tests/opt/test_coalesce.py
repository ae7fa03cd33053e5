"""Coalescing by a transposed copy (vyre_vk.opt.coalesce): which loads qualify (the lanes walk
rows of a re-read buffer, ranges proven), the same bits as without it on the reference, on
random row-walking programs and on Vulkan (lavapipe in CI), and the column-major copy itself
checked against NumPy's transpose."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ir import expr as E
from vyre_vk.ir.walk import node_all_exprs
from vyre_vk.ops import get
from vyre_vk.opt import PASS_NAMES, optimize
from vyre_vk.opt.coalesce import coalesce

from .test_passes import same

F, U = np.float32, np.uint32
WITHOUT = set(PASS_NAMES) - {"coalesce"}


def _rows(rows: int, R: int, lanes: int, lo: int = 0, hi: int = -1, offset: int = 0, lane_mod: int = 0) -> Program:
    """out[i] = sum over m in lo..hi of a[(i % lane_mod or i) * R + m + offset] (one row per lane)."""
    hi = R if hi < 0 else hi
    i, m = Expr.gid_x(), Expr.var("m")
    r = Expr.rem(i, Expr.u32(lane_mod)) if lane_mod else Expr.var("i")
    idx = Expr.add(Expr.add(Expr.mul(r, Expr.u32(R)), m), Expr.u32(offset)) if offset else \
        Expr.add(Expr.mul(r, Expr.u32(R)), m)
    return Program.wrapped(
        [BufferDecl.read("a", 0, DataType.F32).with_count(rows * R),
         BufferDecl.output("out", 1, DataType.F32).with_count(lanes)], (64, 1, 1),
        [wrap_anonymous("t::rows", [Node.let_bind("i", i), Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(lanes)), [
            Node.let_bind("acc", Expr.f32(0.0)),
            Node.loop_for("m", Expr.u32(lo), Expr.u32(hi), [
                Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", idx)))]),
            Node.store("out", Expr.var("i"), Expr.var("acc"))])])])


def _inputs(p: Program, seed: int = 0) -> dict:
    a = p.buffers[0]
    return {"a": np.random.default_rng(seed).standard_normal(a.count).astype(F)}


def test_rows_walked_by_lanes_read_a_column_major_copy():
    p = _rows(rows=16, R=12, lanes=64 * 4, lane_mod=16)  # 256 lanes over 16 rows: each element read 16 times
    c = coalesce(p)
    assert c is not None and (c.buffer, c.row, c.rows) == ("a", 12, 16)
    validate(c.prepass)
    validate(c.main)
    a = _inputs(p)["a"]
    copy = reference.run(c.prepass, {"a": a})[c.scratch.name]
    assert copy.tobytes() == a.reshape(16, 12).T.reshape(-1).tobytes()  # the transpose, bit for bit
    loads = [x for x in node_all_exprs(c.main.entry) if isinstance(x, E.Load)]
    assert {x.buffer for x in loads} == {c.scratch.name}  # every read of a goes to the copy
    graph, reports = optimize(p, ["coalesce"])
    assert len(graph.stages) == 2 and any(r.name == "coalesce" and "column-major" in r.why for r in reports)
    same(reference.run(p, {"a": a}), graph.run_reference({"a": a}))


@pytest.mark.parametrize("why,kw", [
    ("read once per element", dict(rows=64, R=40, lanes=64)),
    ("the column may reach the next row", dict(rows=16, R=12, lanes=256, lane_mod=16, hi=13)),
    ("an offset past the row", dict(rows=16, R=12, lanes=256, lane_mod=16, offset=1)),
    ("a row index past the buffer", dict(rows=16, R=12, lanes=256, lane_mod=17)),
])
def test_refused(why, kw):
    p = _rows(**kw)
    assert coalesce(p) is None, why


def test_in_range_offset_and_short_loop_qualify():
    p = _rows(rows=16, R=12, lanes=256, lane_mod=16, lo=1, hi=9, offset=3)  # m + 3 in 4..11 < 12
    c = coalesce(p)
    assert c is not None
    same(reference.run(p, _inputs(p)), optimize(p, ["coalesce"])[0].run_reference(_inputs(p)))


@pytest.mark.parametrize("op", ["vyre-libs::nn::attention", "vyre-libs::nn::flash_attention"])
def test_attention_scores_on_vulkan(vk_device, op):
    """The score loop of attention and flash_attention (one lane per (query, key), rows of k):
    transposed, and the GPU's bits equal the reference's with and without the copy."""
    p = get(op).build_with(seq_len=40, head_dim=12)
    graph, reports = optimize(p, device_class="nvidia")
    assert any(r.name == "coalesce" and r.changed for r in reports)
    rng = np.random.default_rng(7)
    ins = {b.name: rng.standard_normal(b.count).astype(F) for b in p.buffers if b.is_input}
    want = reference.run(p, ins)
    on = vk_device.compile(p)
    off = vk_device.compile(p, optimize=WITHOUT)
    assert any("opt_co_" in b.name for b in on.compiled.scratch)
    assert not any("opt_co_" in b.name for b in off.compiled.scratch)
    a, b = on.run(ins), off.run(ins)
    for name, w in want.items():
        assert a[name].view(U).tolist() == w.view(U).tolist() == b[name].view(U).tolist()


@st.composite
def row_programs(draw):
    rows, R = draw(st.integers(1, 9)), draw(st.integers(1, 13))
    lanes = draw(st.sampled_from([8, 64, 100, 256]))
    lo = draw(st.integers(0, 3))
    hi = draw(st.integers(lo, R + 2))
    return _rows(rows, R, lanes, lo, hi, draw(st.integers(0, 3)), draw(st.integers(0, rows + 1)))


FIRED: list = []


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(row_programs(), st.integers(0, 2))
def test_random_row_walks_identical(program, seed):
    """Ranges at, inside and past the row and the buffer: wherever the pass fires, the same bits
    (out-of-bounds reads of the original read zero; the copy must not read anything else)."""
    ins = _inputs(program, seed)
    graph, reports = optimize(program, ["coalesce"])
    FIRED.append(len(graph.stages) == 2)
    same(reference.run(program, ins), graph.run_reference(ins))
    full, _ = optimize(program, device_class="nvidia")
    same(reference.run(program, ins), full.run_reference(ins))


def test_fired_on_random_row_walks():
    if not FIRED:
        pytest.skip("runs after test_random_row_walks_identical")
    assert len(FIRED) // 10 <= sum(FIRED) < len(FIRED), f"fired in {sum(FIRED)} of {len(FIRED)}"
