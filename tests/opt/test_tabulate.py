"""tabulate: values a loop recomputes per invocation key are computed once per (key, iteration) by
a pre-pass -- and every result keeps the reference's bits: the attention family at sizes that
are not multiples of anything, with special values; random programs whose keys are built the
ways vyre builds them (id // c, the workgroup, head/row/column splits); on Vulkan. The key proof
(Keyed) and each refusal have their own tests: a rewrite that could change a value must not happen."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ir import expr as E
from vyre_vk.ir.optable import BinOp
from vyre_vk.ops import get
from vyre_vk.ops.builder import out_decl, ro_decl
from vyre_vk.opt import optimize
from vyre_vk.opt.tabulate import MAX_TABLE, Keyed, tabulate

from .test_passes import same
from .test_phases_spread import _check, _inputs

F32 = DataType.F32
ATTENTION = [("nn::attention", dict(seq_len=40, head_dim=12)), ("nn::attention", dict(seq_len=9, head_dim=300)),
             ("nn::flash_attention", dict(seq_len=37, head_dim=5)),
             ("nn::gqa_attention", dict(n_q_heads=4, n_kv_heads=2, seq_len=24, head_dim=16)),
             ("nn::gqa_attention", dict(n_q_heads=6, n_kv_heads=3, seq_len=7, head_dim=9))]


@pytest.mark.parametrize("specials", [False, True], ids=["finite", "specials"])
@pytest.mark.parametrize("op,kw", ATTENTION, ids=[f"{o}-{'-'.join(map(str, k.values()))}" for o, k in ATTENTION])
def test_attention_family_tabulated_bit_identical(op, kw, specials):
    p = get("vyre-libs::" + op).build_with(**kw)
    graph, reports = _check(p, _inputs(p, np.random.default_rng(len(op)), specials=specials), True)
    why = next(r.why for r in reports if r.name == "tabulate")
    assert "computed once per" in why and len(graph.stages) >= 2, reports
    # tables, coalesce's column-major copies of k (the score loop walks its rows), keychain's tables
    assert all(b.name.startswith(("opt_tab", "opt_co_", "opt_kc_")) for b in graph.scratch if b.name != "attention_scratch")
    assert len({b.name for b in graph.scratch}) == len(graph.scratch)


def test_gqa_shares_one_table_between_three_passes():
    """gqa's max, sum and write passes compute the same dot (named dot, dot2, dot3): one table,
    and each pass's work on it (bound, exp, weight) comes in later rounds, reading that table."""
    p = get("vyre-libs::nn::gqa_attention").build_with(n_q_heads=4, n_kv_heads=2, seq_len=24, head_dim=16)
    t = tabulate(p)
    assert [(b.name.split("_")[-1], b.count) for b in t.scratch] == [("dot0", 96 * 24)]
    assert "id // 16" in t.notes[0] and len(t.stages) == 2
    graph, _ = optimize(p, ["tabulate"])
    assert [b.name.split("_")[-1] for b in graph.scratch] == ["dot0", "score0", "x10", "exp0", "w0"]


# ----------------------------------------------------------------------------- the key proof
Q = E.Var("Q")
G = Expr.gid_x()


def _kd(c, tile=64, env=None):
    return Keyed(c, tile, env or {}, {"j"}, {"a"}, Q)


def test_keyed_head_row_column_split():
    """gqa's index algebra: head = g // (S*D), row = (g - head*S*D) // D depend on g // D only."""
    s, d = 12, 8
    head = Expr.div(G, Expr.u32(s * d))
    pos = Expr.sub(G, Expr.mul(head, Expr.u32(s * d)))
    row = Expr.div(pos, Expr.u32(d))
    col = Expr.sub(pos, Expr.mul(row, Expr.u32(d)))
    kd = _kd(d)
    assert kd.of(head)[0] == "C" and kd.of(row)[0] == "C" and kd.of(pos)[0] == "A"
    assert kd.of(col) is not None and kd.of(col)[0] == "A"  # the column is not coarse
    # evaluate the proven forms: f(Q) == the original for every g with that Q
    f_row = kd.coarse(row)
    for g in range(0, 5 * s * d, 7):
        qv = g // d
        env = {"Q": qv}
        assert _ev(f_row, env) == _ev(row, {"__g": g}), g
    assert _kd(2 * d).of(row) is None  # keys of two rows mix two rows: refused
    assert _kd(d).of(Expr.div(G, Expr.u32(d // 2))) is None


def test_keyed_refuses_what_could_differ_within_a_key():
    kd = _kd(4)
    assert kd.of(Expr.local_x()) is None
    assert kd.of(Expr.rem(G, Expr.u32(4)))[0] == "A"  # g % 4 keeps the remainder: not coarse
    assert kd.coarse(Expr.rem(G, Expr.u32(4))) is None
    # g - b*m where b is not g // m may wrap: refused
    assert kd.of(Expr.sub(G, Expr.mul(Expr.div(G, Expr.u32(8)), Expr.u32(4)))) is None
    # a division by a variable may trap in a pre-pass invocation nobody runs today
    assert kd.of(Expr.div(Expr.var("j"), Expr.var("j"))) is None
    assert kd.of(Expr.load("written", Expr.var("j"))) is None
    assert kd.coarse(Expr.load("a", Expr.div(G, Expr.u32(8)))) is not None
    assert Keyed(64, 64, {}, set(), set(), Q).coarse(Expr.workgroup_x()) == Q
    assert Keyed(32, 64, {}, set(), set(), Q).coarse(Expr.workgroup_x()) is not None
    assert Keyed(48, 64, {}, set(), set(), Q).of(Expr.workgroup_x()) is None


def _ev(e, env):
    if isinstance(e, E.LitU32):
        return e.value
    if isinstance(e, E.Var):
        return env[e.name]
    if isinstance(e, E.InvocationId):
        return env["__g"]
    a, b = _ev(e.left, env), _ev(e.right, env)
    return {BinOp.Div: lambda: a // b, BinOp.Mod: lambda: a % b, BinOp.Sub: lambda: (a - b) % 2**32,
            BinOp.Mul: lambda: a * b % 2**32, BinOp.Add: lambda: (a + b) % 2**32}[e.op]()


# ----------------------------------------------------------------------------- refusals
def _keyed_program(c: int, s: int, k: int, keys: int, *, guard=True, wg=False, divisor=None, trip=None) -> Program:
    """out[g] = sum_j exp(dot(a[key], b[j]) * 0.125) * b[j*k + g % c], key = g // c."""
    key = Expr.div(Expr.gid_x(), Expr.u32(c)) if c > 1 else Expr.gid_x()
    dot = [Node.let_bind("dot", Expr.f32(0.0)),
           Node.loop_for("kk", Expr.u32(0), Expr.u32(trip or k), [Node.assign("dot", Expr.add(Expr.var("dot"), Expr.mul(
               Expr.load("a", Expr.add(Expr.mul(Expr.var("key"), Expr.u32(k)), Expr.var("kk"))),
               Expr.load("b", Expr.add(Expr.mul(Expr.var("j"), Expr.u32(k)), Expr.var("kk"))))))]),
           Node.let_bind("w", Expr.exp(Expr.mul(Expr.var("dot"), Expr.f32(0.125) if divisor is None
                                                 else Expr.div(Expr.f32(1.0), divisor))))]
    col = Expr.load("b", Expr.add(Expr.mul(Expr.var("j"), Expr.u32(k)), Expr.rem(Expr.gid_x(), Expr.u32(k))))
    step = Node.assign("acc", Expr.add(Expr.var("acc"), Expr.mul(Expr.var("w"), col)))
    loop = [Node.let_bind("acc", Expr.f32(0.0)),
            Node.loop_for("j", Expr.u32(0), Expr.u32(s), dot + [step]),
            Node.store("out", Expr.gid_x(), Expr.var("acc"))]
    body = [Node.let_bind("key", key)] + ([Node.if_then(Expr.lt(Expr.gid_x(), Expr.u32(keys * c)), loop)] if guard else loop)
    bufs = [ro_decl("a", 0, keys * k), ro_decl("b", 1, s * k), out_decl("out", 2, keys * c)]
    if wg:
        bufs.append(BufferDecl.workgroup("tmp", 4, F32))
    return Program.wrapped(bufs, (64, 1, 1), [wrap_anonymous("test::keyed", body)])


def test_keyed_program_tabulates_and_keeps_bits():
    p = _keyed_program(8, 20, 6, 9)
    t = tabulate(p)
    # round 1: the dot (a reduction); the exp of it waits for round 2, which reads the dot's table
    assert t is not None and [(b.name[-4:], b.count) for b in t.scratch] == [("dot0", 9 * 20)]
    graph, _ = _check(p, _inputs(p, np.random.default_rng(0), specials=True), ["tabulate"])
    assert [(b.name.split("_")[-1], b.count) for b in graph.scratch] == [("dot0", 9 * 20), ("w0", 9 * 20)]


@pytest.mark.parametrize("why,kwargs", [
    ("no guard bounds the keys", dict(guard=False)),
    ("workgroup memory without a guard over the whole program", dict(wg=True, guard=False)),
    ("a table over MAX_TABLE elements", dict(keys=MAX_TABLE // 20 + 1)),
])
def test_refusals_keep_the_program(why, kwargs):
    args = dict(c=8, s=20, k=6, keys=9)
    args.update({k: v for k, v in kwargs.items() if k in args})
    p = _keyed_program(**args, **{k: v for k, v in kwargs.items() if k not in args})
    assert tabulate(p) is None, why


def test_value_of_the_id_alone_is_left_to_hoist():
    """A region that reads no key (only j) is hoist_invariant's: tabulate leaves it."""
    p = _keyed_program(8, 20, 6, 9)
    p2 = Program(tuple(b if b.name != "a" else b for b in p.buffers), p.workgroup_size,
                 (wrap_anonymous("test::keyed", [Node.let_bind("key", Expr.u32(0))] + list(p.entry[0].body[1:])),),
                 p.entry_op_id)
    assert tabulate(p2) is None


# ----------------------------------------------------------------------------- random keyed programs
@st.composite
def keyed_programs(draw):
    c = draw(st.sampled_from([1, 2, 3, 8, 64]))
    return (_keyed_program(c, draw(st.integers(1, 17)), draw(st.integers(1, 9)), draw(st.integers(1, 12)),
                           trip=draw(st.none() | st.integers(0, 4))),
            draw(st.integers(0, 2**31)), draw(st.booleans()))


@settings(max_examples=40, deadline=None)
@given(keyed_programs())
def test_random_keyed_programs_bit_identical(case):
    p, seed, specials = case
    graph, reports = _check(p, _inputs(p, np.random.default_rng(seed), specials), True)
    assert "tabulate" in {r.name for r in reports if r.changed}, reports


# ----------------------------------------------------------------------------- Vulkan
@pytest.mark.parametrize("op,kw", ATTENTION[:1] + ATTENTION[2:4], ids=["attention", "flash", "gqa"])
def test_vulkan_tabulated_schedule_matches_reference(vk_device, op, kw):
    p = get("vyre-libs::" + op).build_with(**kw)
    inputs = _inputs(p, np.random.default_rng(5))
    k = vk_device.compile(p)
    assert "computed once per" in k.explain()
    same(reference.run(p, inputs), k.run(inputs))
