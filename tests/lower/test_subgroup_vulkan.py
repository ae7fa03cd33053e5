"""Subgroup collectives on Vulkan vs the reference: random programs with every collective (u32 and
f32 ballot/shuffle/reduce, local id, size) in straight code, literal-bound loops, predicated
subgroup-uniform ifs and lane-divergent ifs, at workgroup sizes 32, 64, 256 and 48 (a partial
last subgroup). The device's own subgroup size (8 on lavapipe, 32 on an H200) must not matter:
results are bit-identical to the reference (f32 folds included), compiled as written and optimised.
"""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, validate, wrap_anonymous
from vyre_vk.lower import lower

U32, F32 = DataType.U32, DataType.F32
u, f, v = Expr.u32, Expr.f32, Expr.var
U32_OPS = ["Add", "Mul", "Min", "Max", "And", "Or", "Xor"]
F32_OPS = ["Add", "Mul", "Min", "Max"]


class _Gen:
    """Random statements over x (u32), y (f32), lane (u32 in 0..39) and accumulators au (u32), af (f32)."""

    def __init__(self, rng: np.random.Generator, wg: int):
        self.rng, self.wg, self.names = rng, wg, 0

    def pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def u_expr(self, loop_vars):
        opts = [v("x"), v("lane"), Expr.bitxor(v("x"), v("au")), Expr.mul(v("x"), u(2654435761)),
                Expr.subgroup_local_id()] + [Expr.add(v("x"), v(j)) for j in loop_vars]
        return self.pick(opts)

    def f_expr(self, loop_vars):
        return self.pick([v("y"), Expr.mul(v("y"), f(1.5)), Expr.add(v("y"), v("af")),
                          Expr.cast(F32, Expr.bitand(v("x"), u(7)))])

    def collective_stmt(self, loop_vars):
        k = int(self.rng.integers(6))
        if k == 0:
            return Node.assign("au", Expr.bitxor(v("au"), Expr.subgroup_reduce(self.pick(U32_OPS),
                                                                              self.u_expr(loop_vars))))
        if k == 1:
            return Node.assign("af", Expr.add(v("af"), Expr.subgroup_reduce(self.pick(F32_OPS), self.f_expr(loop_vars))))
        if k == 2:
            cond = self.pick([Expr.gt(v("x"), u(1 << 31)), Expr.lt(v("y"), f(0.0)), Expr.bitand(v("x"), u(1))])
            return Node.assign("au", Expr.add(v("au"), Expr.subgroup_ballot(cond)))
        if k == 3:
            lane = self.pick([v("lane"), Expr.rem(Expr.add(v("lane"), u(7)), u(40)), u(0), u(31)])
            return Node.assign("au", Expr.add(v("au"), Expr.subgroup_shuffle(self.u_expr(loop_vars), lane)))
        if k == 4:
            return Node.assign("af", Expr.add(v("af"), Expr.subgroup_shuffle(self.f_expr(loop_vars), v("lane"))))
        return Node.assign("au", Expr.add(v("au"), Expr.mul(Expr.subgroup_size(), Expr.subgroup_local_id())))

    def sg_uniform_cond(self):
        opts = [Expr.eq(Expr.rem(Expr.workgroup_x(), u(2)), u(0)),
                Expr.eq(Expr.bitand(Expr.subgroup_add(v("x")), u(1)), u(0)),
                Expr.gt(Expr.subgroup_ballot(Expr.bitand(v("x"), u(1))), u(0x7FFF))]
        if self.wg % 32 == 0:
            opts.append(Expr.eq(Expr.rem(Expr.div(Expr.local_x(), u(32)), u(2)), u(0)))
            opts.append(Expr.lt(Expr.shr(Expr.gid_x(), u(5)), u(3)))
        return self.pick(opts)

    def body(self, depth, loop_vars, size):
        out = []
        for _ in range(size):
            k = int(self.rng.integers(10 if depth < 2 else 6))
            if k < 5:
                out.append(self.collective_stmt(loop_vars))
            elif k == 5:  # lane-divergent if without collectives (a real branch)
                out.append(Node.if_then(Expr.bitand(v("x"), u(1 << int(self.rng.integers(8)))),
                                        [Node.assign("au", Expr.add(v("au"), u(3)))]))
            elif k in (6, 7):
                then = self.body(depth + 1, loop_vars, 2)
                other = self.body(depth + 1, loop_vars, 1) if k == 7 else []
                out.append(Node.if_then_else(self.sg_uniform_cond(), then, other))
            else:
                self.names += 1
                j = f"j{self.names}"
                out.append(Node.loop_for(j, u(0), u(int(self.rng.integers(1, 3))),
                                         self.body(depth + 1, loop_vars + [j], 2)))
        return out


def random_program(seed: int, wg: int, n: int) -> Program:
    g = _Gen(np.random.default_rng(seed), wg)
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("x", Expr.load("a", v("g"))),
            Node.let_bind("y", Expr.load("fa", v("g"))), Node.let_bind("lane", Expr.load("b", v("g"))),
            Node.let_bind("au", u(0)), Node.let_bind("af", f(0.0)),
            *g.body(0, [], 6),
            Node.store("out", v("g"), v("au")), Node.store("fout", v("g"), v("af"))]
    return Program.wrapped([BufferDecl.read("a", 0, U32).with_count(n), BufferDecl.read("fa", 1, F32).with_count(n),
                            BufferDecl.read("b", 2, U32).with_count(n), BufferDecl.output("out", 3, U32).with_count(n),
                            BufferDecl.read_write("fout", 4, F32).with_count(n)],
                           (wg, 1, 1), [wrap_anonymous("test::subgroup_random", body)])


def random_inputs(seed: int, n: int) -> dict:
    rng = np.random.default_rng(seed + 1000)
    return {"a": rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
            "fa": (rng.standard_normal(n) * np.exp2(rng.integers(-4, 12, n))).astype(np.float32),
            "b": rng.integers(0, 40, n).astype(np.uint32), "fout": np.zeros(n, np.float32)}


def _bits(d: dict) -> dict:
    return {k: np.asarray(a).view(np.uint32) for k, a in d.items()}


@pytest.mark.parametrize("wg", [32, 64, 256, 48])
@pytest.mark.parametrize("seed", range(3))
def test_random_subgroup_programs_match_the_reference_bit_for_bit(vk_device, wg, seed):
    n = 2 * wg - 5  # two workgroups; the last invocations load 0 and their stores drop
    p = random_program(seed * 7 + wg, wg, n)
    validate(p)
    ins = random_inputs(seed, n)
    want = _bits(reference.run(p, ins))
    for optimize in (False, True):
        got = _bits(vk_device.compile(p, optimize=optimize).run(ins))
        for name in want:
            bad = np.nonzero(want[name] != got[name])[0]
            assert bad.size == 0, (f"{name} optimize={optimize}: {bad.size} lanes differ, first {bad[:5]}: "
                                   f"{want[name][bad[:5]]} vs {got[name][bad[:5]]}\n{lower(p).glsl}")


def test_f32_reduce_is_a_lane_order_fold_on_the_gpu(vk_device):
    """(1e8 + 1) - 1e8 folds to 0 in lane order; a tree (native subgroupAdd) would give 1 or 0."""
    n = 64
    body = [Node.let_bind("g", Expr.gid_x()),
            Node.store("fout", v("g"), Expr.subgroup_add(Expr.load("fa", v("g"))))]
    p = Program.wrapped([BufferDecl.read("fa", 0, F32).with_count(n), BufferDecl.output("fout", 1, F32).with_count(n)],
                        (32, 1, 1), [wrap_anonymous("test::subgroup", body)])
    a = np.zeros(n, np.float32)
    a[[0, 1, 2]] = [1e8, 1.0, -1e8]
    a[[32, 40]] = [1.0, 2.0]
    got = vk_device.compile(p, optimize=False).run({"fa": a})["fout"]
    assert got[:32].tolist() == [0.0] * 32 and got[32:].tolist() == [3.0] * 32


def test_predicated_if_keeps_effects_of_inactive_subgroups_off(vk_device):
    """Subgroup 0 of each 64-lane workgroup skips the if: its store and its assign must not run --
    in workgroup 0 that assign is an i32 division by zero (sum(0..31) - 496), which would trap --
    yet its lanes join every barrier of the predicated body."""
    n = 128
    body = [Node.let_bind("g", Expr.gid_x()), Node.let_bind("acc", Expr.i32(5)),
            Node.if_then(Expr.ge(Expr.div(Expr.local_x(), u(32)), u(1)), [
                Node.let_bind("s", Expr.subgroup_add(v("g"))),
                Node.assign("acc", Expr.div(Expr.i32(100), Expr.cast(DataType.I32, Expr.sub(v("s"), u(496))))),
                Node.store("out", v("g"), v("s"))]),
            Node.store("iout", v("g"), v("acc"))]
    p = Program.wrapped([BufferDecl.output("out", 0, U32).with_count(n),
                         BufferDecl.read_write("iout", 1, DataType.I32).with_count(n)],
                        (64, 1, 1), [wrap_anonymous("test::subgroup", body)])
    ins = {"iout": np.zeros(n, np.int32)}
    want = reference.run(p, ins)
    got = vk_device.compile(p, optimize=False).run(ins)
    assert want["out"][32:64].tolist() == [sum(range(32, 64))] * 32 and want["out"][:32].tolist() == [0] * 32
    assert want["iout"][:32].tolist() == [5] * 32 and want["iout"][32:64].tolist() == [100 // 1024] * 32
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
