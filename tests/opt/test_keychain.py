"""Key chains (vyre_vk.opt.keychain, distribute.py): the carried part of a loop that depends only on
the key ``g // c`` runs once per key -- one serial kernel per group of carried values, parallel map
kernels between them -- and the bits stay the loop's: random key-chain programs and flash_attention
on the reference (finite and special values) and on Vulkan, and the loops it must refuse."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ir import node as N
from vyre_vk.ops import get
from vyre_vk.opt import PASS_NAMES, optimize
from vyre_vk.opt.keychain import keychain

from .test_passes import same

F, U = np.float32, np.uint32
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-39, 3e38], F)
WITHOUT = set(PASS_NAMES) - {"keychain"}


def _chain(c: int, keys: int, trips: int, update_a: str = "max", b_reads_a: bool = True, lane_reads: str = "p",
           assign_first: bool = False) -> Program:
    """out[g] = sum over j of (p_j * v[j*c + g % c]), where per key (g // c): s_j = t[key*trips + j],
    a = update_a(a, s_j) (carried), p_j = exp(s_j - a'), b = b * e + p_j (carried, e = exp(a - a') or 1),
    and the final b is added once. The knobs build the shapes the pass must refuse."""
    v, g = Expr.var, Expr.gid_x()
    key, lane = v("key"), v("lane")
    s = Expr.load("t", Expr.add(Expr.mul(key, Expr.u32(trips)), v("j")))
    a_new = {"max": Expr.select(Expr.gt(v("s"), v("a")), v("s"), v("a")),
             "add": Expr.add(v("a"), v("s"))}[update_a]
    e = Expr.exp(Expr.sub(v("a"), v("a_new"))) if b_reads_a else Expr.f32(1.0)
    body = [Node.let_bind("s", s), Node.let_bind("a_new", a_new),
            Node.let_bind("p", Expr.exp(Expr.sub(v("s"), v("a_new")))),
            Node.let_bind("e", e), Node.let_bind("b_new", Expr.add(Expr.mul(v("e"), v("b")), v("p"))),
            Node.assign("o", Expr.add(v("o"), Expr.mul(v(lane_reads), Expr.load("v", Expr.add(
                Expr.mul(v("j"), Expr.u32(c)), lane)))))]
    assigns = [Node.assign("a", v("a_new")), Node.assign("b", v("b_new"))]
    body = assigns + body if assign_first else body + assigns
    return Program.wrapped(
        [BufferDecl.read("t", 0, DataType.F32).with_count(keys * trips),
         BufferDecl.read("v", 1, DataType.F32).with_count(trips * c),
         BufferDecl.output("out", 2, DataType.F32).with_count(keys * c)], (64, 1, 1),
        [wrap_anonymous("t::keychain", [
            Node.let_bind("g", g), Node.let_bind("key", Expr.div(v("g"), Expr.u32(c))),
            Node.let_bind("lane", Expr.rem(v("g"), Expr.u32(c))), Node.let_bind("row", key),
            Node.if_then(Expr.lt(v("row"), Expr.u32(keys)), [
                Node.let_bind("a", Expr.f32(-3.0e38)), Node.let_bind("b", Expr.f32(0.0)), Node.let_bind("o", Expr.f32(0.0)),
                Node.loop_for("j", Expr.u32(0), Expr.u32(trips), body),
                Node.store("out", v("g"), Expr.add(v("o"), v("b")))])])])


def _inputs(p: Program, seed: int, specials: bool = False) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for b in p.buffers:
        if b.is_input:
            x = (rng.standard_normal(b.count) * 3).astype(F)
            if specials:
                x[rng.choice(b.count, size=min(b.count, len(SPECIALS)), replace=False)] = SPECIALS[:min(b.count, 8)]
            out[b.name] = x
    return out


def test_two_groups_two_serial_kernels_and_maps_between():
    p = _chain(c=8, keys=5, trips=12)
    k = keychain(p)
    assert k is not None and k.carried == ("a", "b") and set(k.tables) == {"p", "b"}
    # s (map) | chain {a} | e, p (map) | chain {b} | the main loop
    assert k.kernels == 4 and len(optimize(p, ["keychain"])[0].stages) == 5
    for st_ in k.prepasses + (k.main,):
        validate(st_)
    for specials in (False, True):
        ins = _inputs(p, 3, specials)
        same(reference.run(p, ins), optimize(p, ["keychain"])[0].run_reference(ins))


@pytest.mark.parametrize("why,kw", [
    ("the lane part reads a carried value", dict(lane_reads="a")),
    ("a carried value is assigned before the lets", dict(assign_first=True)),
    ("one invocation per key (c = 1): nothing is shared", dict(c=1)),
])
def test_refused(why, kw):
    args = dict(c=8, keys=5, trips=12)
    args.update(kw)
    assert keychain(_chain(**args)) is None, why


def test_independent_groups_need_no_tables_of_each_other():
    # b no longer reads a: two groups, neither waits for the other's values
    p = _chain(c=4, keys=3, trips=9, b_reads_a=False)
    k = keychain(p)
    assert k is not None
    ins = _inputs(p, 1, True)
    same(reference.run(p, ins), optimize(p, ["keychain"])[0].run_reference(ins))


@pytest.mark.parametrize("keys,trips", [(300, 12), (5, 200), (1024, 1024)])
def test_table_chain_dispatches_one_invocation_per_key(keys, trips):
    """A chain kernel that stores a per-(key, iteration) table takes its grid from that table; its
    coarsening factor brings the grid back to >= keys invocations (not keys * trips, one acting lane
    per workgroup), and for nvidia the local size spreads the keys over the SMs."""
    from vyre_vk.compile import Options, compile_program

    c = compile_program(_chain(c=8, keys=keys, trips=trips), Options(device_class="nvidia"))
    counts = {b.name: b.count for b in c.program.buffers}
    chains = [(st, g) for st, g in zip(c.stages, c.grids(counts)) if st.factor > 1]
    assert len(chains) == 1 and chains[0][0].factor == trips  # chain {a}: stores a at each iteration
    st, g = chains[0]
    # nvidia: halved from 256 while under 132 workgroups, not below 16 lanes
    assert st.program.workgroup_size[0] == 16 and g[0] == -(-keys // 16)


FIRED: list = []


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.integers(2, 9), st.integers(1, 7), st.integers(1, 20), st.sampled_from(["max", "add"]), st.booleans(),
       st.sampled_from(["p", "e", "s"]), st.integers(0, 3), st.booleans())
def test_random_key_chains_identical(c, keys, trips, update, b_reads_a, lane_reads, seed, specials):
    p = _chain(c, keys, trips, update, b_reads_a, lane_reads)
    ins = _inputs(p, seed, specials)
    graph, reports = optimize(p, ["keychain"])
    FIRED.append(len(graph.stages) > 1)
    want = reference.run(p, ins)
    same(want, graph.run_reference(ins))
    same(want, optimize(p, device_class="nvidia")[0].run_reference(ins))


def test_fired_on_random_key_chains():
    if not FIRED:
        pytest.skip("runs after test_random_key_chains_identical")
    assert sum(FIRED) >= len(FIRED) // 2, f"fired in {sum(FIRED)} of {len(FIRED)}"


def test_flash_attention_on_vulkan(vk_device):
    """flash_attention's running max, exponentials and sum once per query: the GPU's bits equal the
    reference's with and without the pass, finite and special scores."""
    p = get("vyre-libs::nn::flash_attention").build_with(seq_len=40, head_dim=12)
    on = vk_device.compile(p)
    assert any(b.name.startswith("opt_kc_") for b in on.compiled.scratch)
    assert len(on.compiled.stages) >= 6  # copy, dot, score, chain m, exps, chain l, the main loop
    off = vk_device.compile(p, optimize=WITHOUT)
    assert not any(b.name.startswith("opt_kc_") for b in off.compiled.scratch)
    for specials in (False, True):
        ins = _inputs(p, 7, specials)
        want = reference.run(p, ins)
        a, b = on.run(ins), off.run(ins)
        for name, w in want.items():
            assert a[name].view(U).tolist() == w.view(U).tolist() == b[name].view(U).tolist()
