"""Streamed chains (vyre_vk.opt.stream): few long serial chains read their loads from tiles in
workgroup memory that every lane of the workgroup loads. Which stages qualify, the grid (at least
one workgroup per C chains), and the same bits as without it: on random chain programs (both
layouts, one-per-step loads, offsets, partial last workgroups, zeros and subnormals that make the
speculative chain re-run), on the ops it fires on at their benchmark sizes' shape, and on Vulkan
(lavapipe in CI)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.ir.grid import dispatch_grid
from vyre_vk.ops import all_ops, get
from vyre_vk.opt import PASS_NAMES, coarsen_factor, optimize
from vyre_vk.opt.protocol import OptimizerError
from vyre_vk.opt.stream import stream, stream_shape

from .test_passes import same

F, U = np.float32, np.uint32
WITHOUT = set(PASS_NAMES) - {"stream"}
SPECIALS = np.array([0.0, -0.0, 1e-40, -1e-39, 3e38, -3e38, np.inf, -np.inf, np.nan], F)


@pytest.fixture
def streaming_on(monkeypatch):
    monkeypatch.setenv("VYRE_VK_STREAM", "1")


def _chains(R: int, K: int, layout: str = "rows", lo: int = 0, offset: int = 0, pre_base: bool = False,
            store_in_loop: bool = False, divide: bool = False, extra: int = 0) -> Program:
    """out[r] = relu(b[r] + sum over k in lo..lo+K of x[k] * w[idx(r, k)]), one chain per invocation;
    ``rows``: idx = r*K + k (+offset), ``cols``: idx = k*R + r. The knobs build shapes it must refuse."""
    v = Expr.var
    k, r = v("k"), v("r")
    kk = Expr.sub(k, Expr.u32(lo)) if lo else k
    if layout == "rows":
        idx = Expr.add(v("base"), kk) if pre_base else Expr.add(Expr.mul(r, Expr.u32(K)), kk)
    else:
        idx = Expr.add(Expr.mul(kk, Expr.u32(R)), r)
    if offset:
        idx = Expr.add(idx, Expr.u32(offset))
    term = Expr.mul(Expr.load("x", kk), Expr.load("w", idx))
    if divide:
        term = Expr.div(term, Expr.load("x", kk))
    body = [Node.assign("acc", Expr.add(v("acc"), term))]
    if store_in_loop:
        body.append(Node.store("out", r, v("acc")))
    pre = [Node.let_bind("acc", Expr.load("b", r))]
    if pre_base:
        pre.append(Node.let_bind("base", Expr.mul(r, Expr.u32(K))))
    return Program.wrapped(
        [BufferDecl.read("x", 0, DataType.F32).with_count(K), BufferDecl.read("w", 1, DataType.F32).with_count(R * K + extra),
         BufferDecl.read("b", 2, DataType.F32).with_count(R), BufferDecl.output("out", 3, DataType.F32).with_count(R)],
        (64, 1, 1),
        [wrap_anonymous("t::chains", [Node.let_bind("r", Expr.gid_x()), Node.if_then(Expr.lt(r, Expr.u32(R)), [
            *pre, Node.loop_for("k", Expr.u32(lo), Expr.u32(lo + K), body),
            Node.store("out", r, Expr.max(Expr.f32(0.0), v("acc")))])])])


def _inputs(p: Program, seed: int, specials: bool = False) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for b in p.buffers:
        if b.is_input:
            x = rng.standard_normal(b.count).astype(F)
            if specials:
                x[rng.choice(b.count, size=min(b.count, 12), replace=False)] = np.resize(SPECIALS, min(b.count, 12))
            out[b.name] = x
    return out


def test_rows_and_columns_stream_with_the_same_bits():
    for layout in ("rows", "cols"):
        p = _chains(R=80, K=256, layout=layout)
        s = stream(p)
        assert s is not None and (s.chains, s.steps, s.per_group, s.lanes) == (80, 256, 32, 256)
        assert s.tile == 64 and set(s.buffers) == {"x", "w"}  # 2 x 64 x 33 words of w + 2 x 64 of x <= 32 KB
        validate(s.program)
        shared = {b.name: b.count for b in s.program.buffers if b.is_workgroup}
        assert sorted(shared.values()) == [2 * 64, 2 * 64 * 33]
        # the grid reaches one workgroup per 32 chains (80 -> 3), over every bound buffer's count
        counts = {b.name: b.count for b in p.buffers}
        g = dispatch_grid(s.program, counts)
        assert -(-g[0] // coarsen_factor(s.program)) >= 3
        for specials in (False, True):
            ins = _inputs(p, 1, specials)
            same(reference.run(p, ins), reference.run(s.program, ins))


def test_more_workgroup_memory_takes_larger_tiles_and_the_shape_knob_is_checked(monkeypatch):
    p = _chains(R=64, K=1024)
    assert stream(p, "nvidia").tile == 64 and stream(p, "nvidia", 49152).tile == 128  # 2 x 128 x 33 words of w
    few = stream(p, "nvidia", 49152, min_workgroups=8)  # 64 chains: C halves to 8 for 8 workgroups
    assert few.per_group == 8 and few.tile == 256
    ins = _inputs(p, 3, specials=True)
    same(reference.run(p, ins), reference.run(few.program, ins))
    monkeypatch.setenv("VYRE_VK_STREAM_SHAPE", "16,256")
    assert stream(p, "nvidia", 49152, min_workgroups=8).per_group == 16  # the knob's shape as given
    s = stream(p, "nvidia", 49152)
    assert (s.per_group, s.lanes, s.tile) == (16, 256, 256)
    ins = _inputs(p, 2)
    same(reference.run(p, ins), reference.run(s.program, ins))
    for bad in ("12,256", "32", "64,32", "a,b"):
        monkeypatch.setenv("VYRE_VK_STREAM_SHAPE", bad)
        with pytest.raises(OptimizerError, match="Fix:"):
            stream_shape("nvidia")


@pytest.mark.parametrize("why,kw", [
    ("a store inside the loop", dict(store_in_loop=True)),
    ("a division may trap? no: f32 division is fine, so this one streams", None),
    ("fewer than two tiles of steps", dict(K=48)),
    ("too few elements for the grid rule to reach a workgroup per 32 chains", dict(R=64, K=2)),
])
def test_refused(why, kw):
    if kw is None:
        assert stream(_chains(R=40, K=128, divide=True)) is not None
        return
    args = dict(R=40, K=128)
    args.update(kw)
    assert stream(_chains(**args)) is None, why


def _two_arms(M: int, Ka: int, Kb: int, inner: int = 0) -> Program:
    """fission's shape: ids < M run chain a (columns of w, guarded by ``j < inner`` when set), ids
    M..2M-1 chain b (rows of v); each stores at its own id."""
    v, g = Expr.var, Expr.gid_x()
    arm_a = [Node.let_bind("j", g), Node.let_bind("acc", Expr.load("b", v("j"))),
             Node.loop_for("m", Expr.u32(0), Expr.u32(Ka), [Node.assign("acc", Expr.add(v("acc"), Expr.mul(
                 Expr.load("x", v("m")), Expr.load("w", Expr.add(Expr.mul(v("m"), Expr.u32(M)), v("j"))))))]),
             Node.store("out", g, v("acc"))]
    if inner:
        arm_a = [arm_a[0], Node.if_then(Expr.lt(v("j"), Expr.u32(inner)), arm_a[1:])]
    arm_b = [Node.let_bind("j2", Expr.sub(g, Expr.u32(M))), Node.let_bind("acc2", Expr.f32(1.0)),
             Node.let_bind("base", Expr.mul(v("j2"), Expr.u32(Kb))),
             Node.loop_for("k", Expr.u32(0), Expr.u32(Kb), [Node.assign("acc2", Expr.add(v("acc2"), Expr.mul(
                 Expr.load("y", v("k")), Expr.load("v", Expr.add(v("base"), v("k"))))))]),
             Node.store("out", g, v("acc2"))]
    return Program.wrapped(
        [BufferDecl.read("x", 0, DataType.F32).with_count(Ka), BufferDecl.read("w", 1, DataType.F32).with_count(Ka * M),
         BufferDecl.read("b", 2, DataType.F32).with_count(M), BufferDecl.read("y", 3, DataType.F32).with_count(Kb),
         BufferDecl.read("v", 4, DataType.F32).with_count(Kb * M),
         BufferDecl.output("out", 5, DataType.F32).with_count(2 * M)], (64, 1, 1),
        [wrap_anonymous("t::arms", [Node.if_then(Expr.lt(g, Expr.u32(2 * M)), [
            Node.if_then_else(Expr.lt(g, Expr.u32(M)), arm_a, arm_b)])])])


@pytest.mark.parametrize("M,Ka,Kb,inner", [(64, 64, 128, 0), (96, 128, 64, 0), (64, 64, 64, 40), (64, 64, 64, 1)])
def test_two_arms_by_id_stream_each_with_the_same_bits(M, Ka, Kb, inner):
    """Both chains of a fissioned stage; an inner guard leaves a gap of ids between the arms whose
    workgroup must act on none of them (inner = 40: ids 40..63 store nothing)."""
    p = _two_arms(M, Ka, Kb, inner)
    s = stream(p)
    assert s is not None and s.loop_vars == ("m", "k") and s.chains == (inner or M) + M
    validate(s.program)
    for specials in (False, True):
        ins = _inputs(p, 4, specials)
        same(reference.run(p, ins), reference.run(s.program, ins))


def test_two_arms_split_inside_a_workgroup_are_refused():
    assert stream(_two_arms(48, 64, 64)) is None  # ids 32..63 would take both branches


def test_two_arms_on_vulkan(vk_device):
    p = _two_arms(64, 64, 64, 40)
    s = stream(p, "llvmpipe")
    ins = _inputs(p, 6, specials=True)
    got = vk_device.compile(s.program, optimize=False).run(ins)
    assert got["out"].view(U).tolist() == reference.run(p, ins)["out"].view(U).tolist()


def test_loop_of_one_load_per_step_only_is_left_alone():
    """Without a load that depends on both the chain and the step there is nothing to stream."""
    v = Expr.var
    p = Program.wrapped(
        [BufferDecl.read("x", 0, DataType.F32).with_count(256), BufferDecl.output("out", 1, DataType.F32).with_count(64)],
        (64, 1, 1),
        [Node.let_bind("r", Expr.gid_x()), Node.if_then(Expr.lt(v("r"), Expr.u32(64)), [
            Node.let_bind("acc", Expr.f32(0.0)),
            Node.loop_for("k", Expr.u32(0), Expr.u32(256), [Node.assign("acc", Expr.add(v("acc"), Expr.load("x", v("k"))))]),
            Node.store("out", v("r"), v("acc"))])])
    assert stream(p) is None


@st.composite
def chain_programs(draw):
    R = draw(st.integers(1, 70))
    K = draw(st.sampled_from([64, 96, 128, 192]))
    return _chains(R, K, draw(st.sampled_from(["rows", "cols"])), lo=draw(st.sampled_from([0, 3])),
                   offset=draw(st.sampled_from([0, 0, 5])), pre_base=draw(st.booleans()),
                   extra=draw(st.sampled_from([0, 0, 4096])))


FIRED: list = []


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(chain_programs(), st.integers(0, 3), st.booleans())
def test_random_chains_identical(program, seed, specials):
    """Chain counts that leave the last workgroup partial, loads past the buffer (offsets: they read
    zero in both), both layouts: wherever the pass fires, the reference's bits; and through every
    pass for nvidia."""
    ins = _inputs(program, seed, specials)
    want = reference.run(program, ins)
    s = stream(program)
    FIRED.append(s is not None)
    if s is not None:
        same(want, reference.run(s.program, ins))


def test_fired_on_random_chains():
    if not FIRED:
        pytest.skip("runs after test_random_chains_identical")
    assert len(FIRED) // 4 <= sum(FIRED), f"fired in {sum(FIRED)} of {len(FIRED)}"


#: The ops it fires on at their benchmark sizes, at sizes the reference runs quickly: the stage shape
#: is the same (checked: it fires).
OP_SIZES = [
    ("vyre-libs::nn::linear_relu", dict(in_dim=128, out_dim=48)),
    ("vyre-libs::nn::linear_silu", dict(in_dim=128, out_dim=48)),
    ("vyre-libs::nn::linear_4bit", dict(in_dim=128, out_dim=48)),
    ("vyre-libs::nn::mlp_backward", dict(model_dim=64, hidden_dim=128)),
    ("vyre-libs::nn::attention", dict(seq_len=128, head_dim=8)),
    ("vyre-libs::nn::gqa_attention", dict(n_q_heads=8, n_kv_heads=2, seq_len=64, head_dim=16)),
]


def _random_inputs(p: Program, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for b in p.buffers:
        if b.is_input:
            dt = np.dtype(b.element.numpy)
            n = max(b.count, 1)
            out[b.name] = (rng.standard_normal(n).astype(dt) if dt.kind == "f"
                           else rng.integers(0, 16, n).astype(dt))
    return out


@pytest.mark.parametrize("op,params", OP_SIZES, ids=[o for o, _ in OP_SIZES])
def test_ops_it_fires_on_identical(streaming_on, op, params):
    p = get(op).build_with(**params)
    graph, reports = optimize(p, True, device_class="nvidia")
    assert any(r.name == "stream" and r.changed for r in reports), reports
    if op.endswith("mlp_backward"):  # both chains of the fissioned stage 0 (two arms) and stage 2
        assert {"stage 0: loop m, k:", "stage 2: loop j:"} <= {w for r in reports if r.name == "stream"
                                                               for w in ("stage 0: loop m, k:", "stage 2: loop j:")
                                                               if w in r.why}
    for st_ in graph.stages:
        validate(st_)
    ins = _random_inputs(p, 5)
    same(reference.run(p, ins), graph.run_reference(ins))


def test_every_registered_op_identical_where_it_fires(streaming_on):
    """Every registered op at its default size with the pass forced on (nvidia): the test vectors'
    bits wherever it fires (at these sizes its chains are mostly too short to)."""
    for entry in all_ops():
        p = entry.build()
        graph, reports = optimize(p, True, device_class="nvidia")
        if any(r.name == "stream" and r.changed for r in reports):
            for case in entry.test_inputs():
                same(reference.run(p, case), graph.run_reference(case))


def test_on_for_nvidia_only_and_explained(monkeypatch):
    monkeypatch.delenv("VYRE_VK_STREAM", raising=False)
    p = _chains(R=64, K=256)
    for cls in ("default", "llvmpipe", "amd", "intel"):
        assert not any(r.name == "stream" and r.changed for r in optimize(p, True, device_class=cls)[1]), cls
    monkeypatch.setenv("VYRE_VK_STREAM", "0")
    assert not any(r.name == "stream" and r.changed for r in optimize(p, True, device_class="nvidia")[1])
    monkeypatch.delenv("VYRE_VK_STREAM")
    graph, reports = optimize(p, True, device_class="nvidia")
    why = next(r.why for r in reports if r.name == "stream")
    # the tile's loop reads workgroup memory nothing writes while it runs: unroll issues those loads ahead
    assert "loop opt_st_kk" in next(r.why for r in reports if r.name == "unroll")
    ins = _inputs(p, 8, specials=True)
    same(reference.run(p, ins), graph.run_reference(ins))
    assert "64 chains of 256 steps, 8 per workgroup of 256 lanes" in why and "8x128 tile of" in why  # C halved: nvidia wants 132 workgroups
    monkeypatch.setenv("VYRE_VK_STREAM", "yes")
    with pytest.raises(OptimizerError, match="Fix:"):
        optimize(p, True, device_class="nvidia")


@pytest.mark.parametrize("op,params", [OP_SIZES[0], OP_SIZES[3]], ids=["linear_relu", "mlp_backward"])
def test_on_vulkan(vk_device, streaming_on, op, params):
    """The GPU's bits (lavapipe in CI) equal the reference's with and without the pass."""
    p = get(op).build_with(**params)
    ins = _random_inputs(p, 9)
    want = reference.run(p, ins)
    on = vk_device.compile(p)
    assert any(r.name == "stream" and r.changed for r in on.reports)
    off = vk_device.compile(p, optimize=WITHOUT)
    a, b = on.run(ins), off.run(ins)
    for name, w in want.items():
        assert a[name].view(U).tolist() == w.view(U).tolist() == b[name].view(U).tolist()


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(chain_programs(), st.integers(0, 3))
def test_random_chains_on_vulkan(vk_device, program, seed):
    """The pass's output as written (its coarsened grid included) on the GPU: the original's bits."""
    s = stream(program, "llvmpipe")
    if s is None:
        return
    ins = _inputs(program, seed, specials=True)
    want = reference.run(program, ins)
    got = vk_device.compile(s.program, optimize=False).run(ins)
    for name, w in want.items():
        assert got[name].view(U).tolist() == w.view(U).tolist()


def test_a_knob_changed_between_compiles_is_not_served_from_the_caches(vk_device, monkeypatch):
    """Compile's and the device's caches key on the schedule knobs set (opt.pipeline.SCHEDULE_KNOBS):
    an equal program compiled with stream off and then on is two kernels, each as asked. (The very
    same Program object is served by Device.compile's recent-object path, which reads no knobs.)"""
    build = lambda: get("vyre-libs::nn::linear_relu").build_with(in_dim=128, out_dim=40)  # noqa: E731
    p = build()
    monkeypatch.setenv("VYRE_VK_STREAM", "0")
    off = vk_device.compile(p)
    monkeypatch.setenv("VYRE_VK_STREAM", "1")
    on = vk_device.compile(build())
    assert on is not off and any(r.name == "stream" and r.changed for r in on.reports)
    assert not any(r.name == "stream" and r.changed for r in off.reports)
    ins = _random_inputs(p, 3)
    assert on.run(ins)["out"].view(U).tolist() == off.run(ins)["out"].view(U).tolist()
