"""Subgroup collectives on the reference: vyre's simulated width 32 (IR-SPEC 2.6), one value test
per kind and element type, with full, partial (workgroup 48, 100) and multi-workgroup layouts.

Expected values come from a per-lane Python model written from the spec (`_groups`), plus a
few hand-computed constants."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous

U32, F32 = DataType.U32, DataType.F32
u, v = Expr.u32, Expr.var
W = 32


def lane_program(value: Expr, wg: int, n: int, elem=U32, in_elem=U32) -> Program:
    """out[gid] = value, with x = a[gid] and lane = b[gid] bound; n invocations."""
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("x", Expr.load("a", v("g"))),
            Node.let_bind("lane", Expr.load("b", v("g"))), Node.store("out", v("g"), value)]
    return Program.wrapped([BufferDecl.read("a", 0, in_elem).with_count(n), BufferDecl.read("b", 1, U32).with_count(n),
                            BufferDecl.output("out", 2, elem).with_count(n)], (wg, 1, 1),
                           [wrap_anonymous("test::subgroup", body)])


def _groups(n: int, wg: int):
    """(first lane, lane count) of the subgroup of every lane: [32k, min(32k+32, wg)) per workgroup."""
    for g in range(n):
        w, li = divmod(g, wg)
        start = w * wg + (li // W) * W
        yield g, start, min(W, wg - (li // W) * W)


def run(p: Program, a, b=None) -> np.ndarray:
    validate(p)
    n = len(a)
    return reference.run(p, {"a": np.asarray(a), "b": np.zeros(n, np.uint32) if b is None else np.asarray(b, np.uint32)})["out"]


LAYOUTS = [(32, 64), (64, 64), (48, 96), (100, 100), (256, 256)]  # (workgroup x, invocations)


@pytest.mark.parametrize("wg,n", LAYOUTS)
def test_ballot(wg, n):
    rng = np.random.default_rng(wg)
    a = rng.integers(0, 3, n).astype(np.uint32)  # truthy where non-zero
    got = run(lane_program(Expr.subgroup_ballot(v("x")), wg, n), a)
    want = [sum(1 << j for j in range(cnt) if a[s + j]) for _, s, cnt in _groups(n, wg)]
    assert got.tolist() == want


def test_ballot_bits_by_hand_and_f32_truthiness():
    a = np.zeros(32, np.uint32)
    a[[0, 2, 3, 31]] = 1
    assert run(lane_program(Expr.subgroup_ballot(v("x")), 32, 32), a)[5] == 0x8000000D
    f = np.zeros(32, np.float32)
    f[1], f[4] = np.nan, -0.0  # NaN is truthy, -0.0 is not
    p = lane_program(Expr.subgroup_ballot(v("x")), 32, 32, in_elem=F32)
    assert run(p, f)[0] == 0b10


@pytest.mark.parametrize("elem", [U32, F32])
@pytest.mark.parametrize("wg,n", LAYOUTS)
def test_shuffle(wg, n, elem):
    rng = np.random.default_rng(n)
    a = (rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) if elem is U32
         else rng.standard_normal(n).astype(np.float32))
    lanes = rng.integers(0, 40, n).astype(np.uint32)  # 32..39 and past a partial subgroup: 0
    got = run(lane_program(Expr.subgroup_shuffle(v("x"), v("lane")), wg, n, elem, elem), a, lanes)
    want = [a[s + lanes[g]] if lanes[g] < cnt else 0 for g, s, cnt in _groups(n, wg)]
    np.testing.assert_array_equal(got, np.asarray(want, got.dtype))


def test_shuffle_broadcast_and_out_of_range_by_hand():
    a = np.arange(100, 148, dtype=np.uint32)  # workgroup 48: subgroups of 32 and 16 lanes
    lanes = np.full(48, 20, np.uint32)
    got = run(lane_program(Expr.subgroup_shuffle(v("x"), v("lane")), 48, 48), a, lanes)
    assert got[:32].tolist() == [120] * 32 and got[32:].tolist() == [0] * 16  # lane 20 of a 16-lane group


@pytest.mark.parametrize("op", ["Add", "Mul", "Min", "Max", "And", "Or", "Xor"])
@pytest.mark.parametrize("wg,n", LAYOUTS)
def test_reduce_u32(wg, n, op):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    if op == "Mul":
        a = rng.integers(1, 4, n).astype(np.uint32) * np.uint32(0x10001)  # wraps, stays non-zero often
    got = run(lane_program(Expr.subgroup_reduce(op, v("x")), wg, n), a)
    fold = {"Add": lambda x, y: (x + y) & 0xFFFFFFFF, "Mul": lambda x, y: (x * y) & 0xFFFFFFFF, "Min": min,
            "Max": max, "And": lambda x, y: x & y, "Or": lambda x, y: x | y, "Xor": lambda x, y: x ^ y}[op]
    ident = {"Add": 0, "Mul": 1, "Min": 0xFFFFFFFF, "Max": 0, "And": 0xFFFFFFFF, "Or": 0, "Xor": 0}[op]
    want = []
    for _, s, cnt in _groups(n, wg):
        acc = ident
        for j in range(cnt):
            acc = fold(acc, int(a[s + j]))
        want.append(acc)
    assert got.tolist() == want


def test_reduce_u32_by_hand():
    a = np.array([3, 1, 4, 1, 5] + [0] * 27, np.uint32)
    assert run(lane_program(Expr.subgroup_add(v("x")), 32, 32), a)[0] == 14
    a = np.array([2, 3, 5, 7] + [1] * 28, np.uint32)
    assert run(lane_program(Expr.subgroup_mul(v("x")), 32, 32), a)[9] == 210
    a = np.full(32, 0x80000000, np.uint32)
    assert run(lane_program(Expr.subgroup_add(v("x")), 32, 32), a)[0] == 0  # wraps


def _f32_fold(op, vals):
    acc = np.float32({"Add": 0.0, "Mul": 1.0, "Min": np.inf, "Max": -np.inf}[op])
    for x in vals:
        x = np.float32(x)
        if op == "Add":
            acc = np.float32(acc + x)
        elif op == "Mul":
            acc = np.float32(acc * x)
        elif not np.isnan(x):  # Rust f32::min/max ignore a NaN operand
            acc = x if (x < acc if op == "Min" else x > acc) else acc
        if acc != 0 and abs(acc) < np.finfo(np.float32).tiny:
            acc = np.float32(np.copysign(0.0, acc))  # flush a subnormal step result
    return acc


@pytest.mark.parametrize("op", ["Add", "Mul", "Min", "Max"])
@pytest.mark.parametrize("wg,n", LAYOUTS)
def test_reduce_f32_folds_in_lane_order(wg, n, op):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 20, n))).astype(np.float32)
    if op == "Mul":
        a = (1.0 + rng.standard_normal(n) * 0.3).astype(np.float32)
    got = run(lane_program(Expr.subgroup_reduce(op, v("x")), wg, n, F32, F32), a)
    want = np.asarray([_f32_fold(op, a[s:s + cnt]) for _, s, cnt in _groups(n, wg)], np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_reduce_f32_order_is_observable_and_identities_by_hand():
    a = np.zeros(32, np.float32)
    a[0], a[1], a[2] = 1e8, 1.0, -1e8  # lane order: (1e8 + 1) - 1e8 = 0 in f32 (a tree would differ)
    assert run(lane_program(Expr.subgroup_add(v("x")), 32, 32, F32, F32), a)[0] == 0.0
    a = np.full(32, -5.0, np.float32)
    a[3] = -2.0
    assert run(lane_program(Expr.subgroup_max(v("x")), 32, 32, F32, F32), a)[0] == -2.0  # -inf identity
    a = np.full(32, np.nan, np.float32)
    assert run(lane_program(Expr.subgroup_min(v("x")), 32, 32, F32, F32), a)[0] == np.inf  # NaN lanes ignored
    a = np.array([2.0, 3.0, 0.5, 4.0] + [1.0] * 28, np.float32)
    assert run(lane_program(Expr.subgroup_mul(v("x")), 32, 32, F32, F32), a)[0] == 12.0


@pytest.mark.parametrize("wg,n", LAYOUTS)
def test_subgroup_local_id_and_size(wg, n):
    got = run(lane_program(Expr.subgroup_local_id(), wg, n), np.zeros(n, np.uint32))
    assert got.tolist() == [(g % wg) % W for g in range(n)]
    got = run(lane_program(Expr.subgroup_size(), wg, n), np.zeros(n, np.uint32))
    assert got.tolist() == [W] * n  # also in a partial last subgroup


def test_collectives_in_a_loop_and_under_a_subgroup_uniform_branch():
    """Per-subgroup prefix structure: in iteration j, lane 0 of each subgroup adds lane j's value;
    only subgroups with an even index run the branch (local_x / 32 is subgroup-uniform)."""
    n, wg = 128, 64
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("x", Expr.load("a", v("g"))),
            Node.let_bind("acc", u(0)),
            Node.if_then(Expr.eq(Expr.rem(Expr.div(Expr.local_x(), u(32)), u(2)), u(0)), [
                Node.loop_for("j", u(0), u(4), [
                    Node.assign("acc", Expr.add(v("acc"), Expr.subgroup_shuffle(v("x"), v("j"))))])]),
            Node.store("out", v("g"), v("acc"))]
    p = Program.wrapped([BufferDecl.read("a", 0, U32).with_count(n), BufferDecl.output("out", 1, U32).with_count(n)],
                        (wg, 1, 1), [wrap_anonymous("test::subgroup", body)])
    validate(p)
    a = np.arange(n, dtype=np.uint32) * 10
    got = reference.run(p, {"a": a})["out"]
    for g in range(n):
        start = (g // 32) * 32
        want = sum(a[start:start + 4]) if (g % wg) // 32 % 2 == 0 else 0
        assert got[g] == want, g


def test_fast_loop_path_is_not_taken_for_collectives():
    n = 64
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("acc", u(0)),
            Node.loop_for("j", u(0), u(3), [Node.assign("acc", Expr.add(v("acc"), Expr.subgroup_add(v("j"))))]),
            Node.store("out", v("g"), v("acc"))]
    p = Program.wrapped([BufferDecl.output("out", 0, U32).with_count(n)], (64, 1, 1),
                        [wrap_anonymous("test::subgroup", body)])
    assert reference.run(p, {})["out"].tolist() == [32 * (0 + 1 + 2)] * n
