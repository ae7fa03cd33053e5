"""The ring prefetch of heavy loops (vyre_vk/opt/unroll.py: rolling_prefetch): the same bits as the
loop as written, on the reference and on Vulkan, each load keyed by its resolved index (sibling
blocks that bind the same names read different elements), and when it is on."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Program, validate
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir.walk import walk_nodes
from vyre_vk.opt import optimize
from vyre_vk.opt.unroll import rolling, unroll_loads

from .test_passes import same

N_OUT, TRIPS = 32, 400


def _heavy(copies: int = 4, trips: int = TRIPS) -> Program:
    """Each invocation l: ``for c in 0..TRIPS/copies { copies blocks, each `let k = c*copies + j;
    let x = a[k*32 + l]; acc_j = acc_j + x / f32(k + 1)` }``: a body with a division (too heavy to
    copy), its blocks binding the same names, as reassociate's copies do."""
    l, v = Expr.var("l"), Expr.var
    blocks = []
    for j in range(copies):
        blocks.append(N.Block((
            N.Let("k", Expr.add(Expr.mul(v("c"), Expr.u32(copies)), Expr.u32(j))),
            N.Let("x", Expr.load("a", Expr.add(Expr.mul(v("k"), Expr.u32(N_OUT)), l))),
            N.Assign(f"acc{j}", Expr.add(v(f"acc{j}"), Expr.div(v("x"), E.Cast(DataType.F32, Expr.add(v("k"), Expr.u32(1)))))))))
    total = v("acc0")
    for j in range(1, copies):
        total = Expr.add(total, v(f"acc{j}"))
    body = [N.Let("l", Expr.gid_x()), N.If(Expr.lt(l, Expr.u32(N_OUT)), (
        *(N.Let(f"acc{j}", Expr.f32(0.0)) for j in range(copies)),
        N.Loop("c", Expr.u32(0), Expr.u32(trips // copies), tuple(blocks)),
        N.Store("out", l, total)), ())]
    return Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(trips * N_OUT),
                            BufferDecl.output("out", 1, DataType.F32).with_count(N_OUT)], (N_OUT, 1, 1), body)


def _inputs() -> dict:
    return {"a": np.random.default_rng(5).standard_normal(TRIPS * N_OUT).astype(np.float32)}


def test_ring_keeps_bits_and_keys_loads_by_resolved_index():
    p = _heavy()
    q, why = unroll_loads(p, 16, roll=True)
    validate(q)
    assert "16 load(s) kept in flight by a ring" in why
    loops = [n for n in walk_nodes(q.entry) if isinstance(n, N.Loop)]
    assert len(loops) == 1  # no copies, no remainder loop
    ring = [n for n in loops[0].body if isinstance(n, N.Assign) and isinstance(n.value, E.Load)]
    assert len(ring) == 4 and len({r.value.index for r in ring}) == 4  # one ring per block's element
    same(reference.run(p, _inputs()), reference.run(q, _inputs()))
    assert unroll_loads(p, 16, roll=False)[1] == ""  # the division keeps copies away, as before


def test_ring_runs_on_vulkan_with_the_same_bits(vk_device):
    p = _heavy()
    q, _ = unroll_loads(p, 16, roll=True)
    want = reference.run(p, _inputs())
    same(want, vk_device.compile(q, optimize=False).run(_inputs()))


def test_when_the_ring_is_on(monkeypatch):
    monkeypatch.delenv("VYRE_VK_ROLL", raising=False)
    assert rolling("fast") and not rolling("exact")
    monkeypatch.setenv("VYRE_VK_ROLL", "1")
    assert rolling("exact")
    monkeypatch.setenv("VYRE_VK_ROLL", "0")
    assert not rolling("fast")
    monkeypatch.delenv("VYRE_VK_ROLL")
    _, reports = optimize(_heavy(), ["unroll"], precision="fast")
    assert "kept in flight by a ring" in reports[0].why
    _, reports = optimize(_heavy(), ["unroll"])
    assert not reports[0].changed


@pytest.mark.parametrize("trips", [16, 63])
def test_short_loops_keep_their_shape(trips):
    assert unroll_loads(_heavy(trips=trips * 4), 16, roll=True)[1] == ""


def test_pipelined_blocks_issue_the_next_blocks_loads_first(vk_device, monkeypatch):
    """$VYRE_VK_PIPELINE=1: rms_norm's spread chain (41 chunks: two blocks of 16, then 9) loads block
    0 before the loop and block b+1 at the top of block b; same bits on the reference and Vulkan."""
    from vyre_vk.ops import get

    monkeypatch.setenv("VYRE_VK_PIPELINE", "1")
    monkeypatch.setenv("VYRE_VK_UNROLL", "16")  # the blocks below are 16 chunks (nvidia's factor is 32)
    p = get("vyre-libs::nn::rms_norm").build_with(n=40 * 256 + 5)
    graph, reports = optimize(p, ["split_phases", "spread", "unroll"], device_class="nvidia")
    assert "the next block's loads issued before each block" in next(r.why for r in reports if r.name == "unroll")
    chain = graph.stages[0].entry[0].body[1].then
    first = next(k for k, n in enumerate(chain) if isinstance(n, N.Loop))
    assert sum(isinstance(n, N.Let) and isinstance(n.value, E.Load) for n in chain[:first]) == 16
    outer = chain[first]
    ahead = [n for n in outer.body if isinstance(n, N.Let) and isinstance(n.value, E.Load)]
    assert len(ahead) == 16 and outer.body.index(ahead[-1]) < next(k for k, n in enumerate(outer.body) if isinstance(n, N.Block))
    assert sum(isinstance(n, N.Assign) for n in outer.body) == 16  # the look-ahead becomes the next block's
    x = {"input": np.random.default_rng(2).standard_normal(40 * 256 + 5).astype(np.float32)}
    want = reference.run(p, x)
    same(want, graph.run_reference(x))
    same(want, vk_device.compile(p).run(x))


@pytest.mark.parametrize("op,params,marker", [
    ("vyre-libs::nn::flash_attention", {"seq_len": 128, "head_dim": 16}, ("keychain", "run once per key")),
    ("vyre-libs::quant::int4_dot_f32_scaled", {"lane_count": 512}, ("unroll", "kept in flight by a ring"))])
def test_registered_ops_with_a_ring_stay_within_the_fast_contract(vk_device, op, params, marker):
    """Sizes where the fast schedule's heavy loop gets a ring (the int4 dot's reassociated lanes) or,
    flash_attention's key loop since keychain, no heavy loop left (its exponentials run per (query,
    key) in a map kernel): float64 errors within the contract, as without them."""
    from vyre_vk.ops import get
    from tests.ops.oracles import ORACLES
    from tests.ops.precision import FAST_EXTRA_ULP, fast_errors

    _, reports = optimize(get(op).build_with(**{**ORACLES[op].params, **params}), True, device_class="nvidia",
                          precision="fast")
    assert marker[1] in next(r.why for r in reports if r.name == marker[0])
    r = fast_errors(op, vk_device, seeds=(0, 1), params=params)
    assert r.ints_equal and r.fast <= r.window + FAST_EXTRA_ULP and r.fast <= r.exact + FAST_EXTRA_ULP, r
