"""bounds.py: u32 ranges that let a load skip its clamp only when it provably stays inside
the buffer's declared count; every other load keeps vyre's OOB-reads-0 rule (checked on Vulkan)."""
from __future__ import annotations

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.lower import bounds
from vyre_vk.lower.glsl import lower

U32 = DataType.U32
GID = Expr.gid_x()
MAX = 0xFFFFFFFF


def iv(e, **env):
    return bounds.interval(e, lambda n: env.get(n))


@pytest.mark.parametrize("e,env,want", [
    (Expr.u32(7), {}, (7, 7)),
    (GID, {}, (0, MAX)),
    (Expr.add(Expr.var("i"), Expr.u32(3)), {"i": (0, 9)}, (3, 12)),
    (Expr.mul(Expr.var("i"), Expr.u32(16)), {"i": (1, 4)}, (16, 64)),
    (Expr.sub(Expr.var("i"), Expr.u32(2)), {"i": (2, 9)}, (0, 7)),
    (Expr.sub(Expr.var("i"), Expr.u32(2)), {"i": (1, 9)}, None),  # may wrap
    (Expr.mul(Expr.var("i"), Expr.u32(1 << 20)), {"i": (0, 1 << 12)}, None),  # may overflow
    (Expr.div(Expr.var("i"), Expr.u32(4)), {"i": (5, 17)}, (1, 4)),
    (Expr.rem(GID, Expr.u32(10)), {}, (0, 9)),
    (Expr.bitand(GID, Expr.u32(255)), {}, (0, 255)),
    (Expr.shr(Expr.var("i"), Expr.u32(2)), {"i": (8, 33)}, (2, 8)),
    (Expr.min(GID, Expr.u32(5)), {}, (0, 5)),
    (Expr.var("unknown"), {}, None),
    (Expr.i32(3), {}, None),
])
def test_interval(e, env, want):
    assert iv(e, **env) == want


def test_refinements_from_guards():
    env = {"n": (10, 10)}.get
    lt = Expr.lt(GID, Expr.u32(10))
    assert bounds.refinements(lt, env, set(), True) == {"<gid.0>": (0, 9)}
    assert bounds.refinements(lt, env, set(), False) == {"<gid.0>": (10, MAX)}
    ge = Expr.ge(Expr.var("i"), Expr.var("n"))  # i >= n  ==  n <= i
    assert bounds.refinements(ge, env, set(), False) == {"i": (0, 9)}
    both = Expr.and_(Expr.lt(GID, Expr.u32(100)), Expr.gt(GID, Expr.u32(4)))
    assert bounds.refinements(both, env, set(), True) == {"<gid.0>": (5, 99)}
    assert bounds.refinements(Expr.lt(Expr.var("i"), Expr.u32(3)), env, {"i"}, True) == {}  # assigned: untrusted
    # t + 1 < 16 with t in [0, 15]: t <= 14 in the then-branch; nothing in the else-branch
    plus = Expr.lt(Expr.add(Expr.var("t"), Expr.u32(1)), Expr.u32(16))
    assert bounds.refinements(plus, {"t": (0, 15)}.get, set(), True) == {"t": (0, 14)}
    assert bounds.refinements(plus, {"t": (0, 15)}.get, set(), False) == {}
    assert bounds.refinements(plus, {}.get, set(), True) == {}  # t unknown: t + 1 may wrap


def program(index, count, guard=8, extra=()):
    body = [Node.let_bind("i", GID), *extra,
            Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(guard)), [Node.store("out", Expr.var("i"), Expr.load("a", index))])]
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(count), BufferDecl.output("out", 1, U32).with_count(8)],
                           (4, 1, 1), [wrap_anonymous("t", body)])


@pytest.mark.parametrize("index,count,unclamped", [
    (Expr.var("i"), 8, True),                                   # i <= 7 < 8
    (Expr.var("i"), 7, False),                                  # i = 7 is past the end
    (Expr.add(Expr.var("i"), Expr.u32(1)), 8, False),           # i + 1 = 8 is past the end
    (Expr.add(Expr.var("i"), Expr.u32(1)), 9, True),
    (Expr.sub(Expr.var("i"), Expr.u32(1)), 100, False),         # i = 0 wraps to 0xFFFFFFFF
    (Expr.mul(Expr.var("i"), Expr.u32(3)), 22, True),           # 7 * 3 = 21
])
def test_lowering_uses_the_unclamped_load_only_when_proven(index, count, unclamped):
    src = lower(program(index, count)).glsl
    assert ("vk_ldn_a(" in src) is unclamped
    assert ("vk_ld_a(" in src) is not unclamped


def test_loop_variable_and_assigned_names():
    k = Expr.var("k")
    loop = [Node.let_bind("acc", Expr.u32(0)),
            Node.loop_for("k", Expr.u32(0), Expr.u32(4), [
                Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", Expr.add(Expr.mul(k, Expr.u32(8)), GID))))]),
            Node.store("out", GID, Expr.var("acc"))]
    guarded = [Node.if_then(Expr.lt(GID, Expr.u32(8)), loop)]
    p = Program.wrapped([BufferDecl.read("a", 0, U32).with_count(32), BufferDecl.output("out", 1, U32).with_count(8)],
                        (4, 1, 1), [wrap_anonymous("t", guarded)])
    assert "vk_ldn_a(" in lower(p).glsl  # k*8 + gid <= 3*8 + 7 = 31
    p2 = Program.wrapped(p.buffers, (4, 1, 1), [wrap_anonymous("t", loop)])  # no guard: gid unbounded
    assert "vk_ldn_a(" not in lower(p2).glsl
    # a let that is later reassigned is not trusted
    reassigned = [Node.let_bind("j", Expr.u32(0)), Node.assign("j", Expr.add(GID, Expr.u32(100))),
                  Node.store("out", GID, Expr.load("a", Expr.var("j")))]
    p3 = Program.wrapped(p.buffers, (4, 1, 1), [wrap_anonymous("t", reassigned)])
    assert "vk_ldn_a(" not in lower(p3).glsl


@pytest.mark.parametrize("index,count", [(Expr.var("i"), 8), (Expr.add(Expr.var("i"), Expr.u32(1)), 8),
                                         (Expr.sub(Expr.var("i"), Expr.u32(1)), 8)])
@pytest.mark.parametrize("optimize", [False, True])
def test_vulkan_matches_reference_at_the_edge(vk_device, index, count, optimize):
    """In-bounds and one-past loads: the OOB element reads 0 on both, the rest the data."""
    p = program(index, count)
    a = np.arange(10, 10 + count, dtype=np.uint32)
    want = reference.run(p, {"a": a})["out"]
    got = vk_device.compile(p, optimize=optimize).run({"a": a})["out"]
    assert got.tolist() == want.tolist()
    if index == Expr.add(Expr.var("i"), Expr.u32(1)):
        assert want[7] == 0  # the one-past read returns 0, not a neighbour's data


@pytest.mark.parametrize("cond,env,want", [
    (Expr.lt(Expr.var("i"), Expr.u32(8)), {"i": (0, 7)}, True),
    (Expr.lt(Expr.var("i"), Expr.u32(7)), {"i": (0, 7)}, None),    # i = 7 fails it
    (Expr.le(Expr.var("i"), Expr.u32(7)), {"i": (0, 7)}, True),
    (Expr.ge(Expr.var("i"), Expr.u32(8)), {"i": (0, 7)}, False),
    (Expr.gt(Expr.var("i"), Expr.u32(0)), {"i": (1, 7)}, True),
    (Expr.lt(GID, Expr.u32(8)), {}, None),                          # gid unbounded
    (Expr.and_(Expr.lt(Expr.var("i"), Expr.u32(8)), Expr.lt(GID, Expr.u32(8))), {"i": (0, 7)}, None),
    (Expr.and_(Expr.lt(Expr.var("i"), Expr.u32(8)), Expr.lt(GID, Expr.u32(8))), {"i": (9, 9)}, False),
    (Expr.lt(Expr.i32(1), Expr.i32(2)), {}, None),                  # not u32: no range known
])
def test_decided(cond, env, want):
    assert bounds.decided(cond, lambda n: env.get(n)) is want


def test_proven_guards_lower_to_the_arm_that_runs_with_the_reference_results(vk_device):
    k = Expr.var("k")
    idx = Expr.add(Expr.mul(k, Expr.u32(8)), Expr.var("i"))
    body = [Node.let_bind("i", GID),
            Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(8)), [
                Node.let_bind("acc", Expr.u32(0)),
                Node.loop_for("k", Expr.u32(0), Expr.u32(4), [
                    Node.if_then_else(Expr.lt(idx, Expr.u32(32)),            # always true: 3*8 + 7 = 31
                                      [Node.assign("acc", Expr.add(Expr.var("acc"), Expr.load("a", idx)))],
                                      [Node.assign("acc", Expr.u32(999))]),
                    Node.if_then_else(Expr.ge(idx, Expr.u32(32)),            # always false: the else runs
                                      [Node.assign("acc", Expr.u32(777))],
                                      [Node.assign("acc", Expr.add(Expr.var("acc"), Expr.u32(1)))]),
                    Node.if_then(Expr.lt(idx, Expr.u32(20)),                  # undecided: a real branch
                                 [Node.assign("acc", Expr.add(Expr.var("acc"), Expr.u32(100)))])]),
                Node.store("out", Expr.var("i"), Expr.var("acc"))])]
    p = Program.wrapped([BufferDecl.read("a", 0, U32).with_count(32), BufferDecl.output("out", 1, U32).with_count(8)],
                        (4, 1, 1), [wrap_anonymous("t", body)])
    src = lower(p).glsl
    assert src.count("always true (value ranges)") == 1 and src.count("always false (value ranges)") == 1
    assert "999u" not in src and "777u" not in src and "< 20u" in src
    a = np.arange(32, dtype=np.uint32) * 3
    want = reference.run(p, {"a": a})["out"]
    assert want.tolist() == [sum(a[k * 8 + i] + 1 + (100 if k * 8 + i < 20 else 0) for k in range(4)) for i in range(8)]
    for optimize in (False, True):
        assert vk_device.compile(p, optimize=optimize).run({"a": a})["out"].tolist() == want.tolist()


def _rows(stride: int, guard: int, count: int) -> Program:
    """out[k] = a[g + k] for k < 8, g = workgroup id * stride, guarded by g < guard: a workgroup's
    first id, as the stream pass writes it (g + lane, lane < stride)."""
    g = Expr.var("g")
    body = [Node.let_bind("g", Expr.mul(Expr.WorkgroupId(0), Expr.u32(stride))),
            Node.if_then(Expr.lt(g, Expr.u32(guard)), [
                Node.loop_for("k", Expr.u32(0), Expr.u32(8), [
                    Node.store("out", Expr.add(Expr.mul(Expr.WorkgroupId(0), Expr.u32(8)), Expr.var("k")),
                               Expr.load("a", Expr.add(g, Expr.var("k"))))])])]
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(count), BufferDecl.output("out", 1, U32).with_count(64)],
                           (1, 1, 1), [wrap_anonymous("t", body)])


@pytest.mark.parametrize("stride,guard,count,unclamped", [
    (8, 64, 64, True),     # g a multiple of 8 below 64: g <= 56, g + 7 <= 63
    (8, 64, 63, False),    # a[63] is past the end
    (8, 60, 60, False),    # g <= 56 still, g + 7 = 63 >= 60
    (12, 48, 48, False),   # a multiple of 12 is one of 4 only: g <= 44, g + 7 = 51
    (12, 48, 51, False),   # g < 48 a multiple of 4 only (12 does not divide 2^32): g <= 44, so 51 must fit
    (12, 48, 52, True),
])
def test_a_multiple_of_a_power_of_two_rounds_its_guard(stride, guard, count, unclamped):
    p = _rows(stride, guard, count)
    assert ("vk_ldn_a(" in lower(p).glsl) is unclamped
    assert bounds.stride(Expr.mul(Expr.WorkgroupId(0), Expr.u32(stride)), {}.get) == stride & -stride


@pytest.mark.parametrize("stride,guard,count", [(8, 64, 64), (8, 64, 63), (12, 48, 52)])
def test_strided_rows_on_vulkan(vk_device, stride, guard, count):
    """Eight workgroups: the ones past the guard store nothing, the last row's last read is
    the buffer's last element (or one past it: 0)."""
    p = _rows(stride, guard, count)
    a = np.arange(100, 100 + count, dtype=np.uint32)
    want = reference.run(p, {"a": a}, grid=(8, 1, 1))["out"]
    got = vk_device.compile(p, optimize=False).run({"a": a}, grid=(8, 1, 1))["out"]
    assert got.tolist() == want.tolist()
