"""The branch-free f32 helpers (vyre_vk.lower.helpers.BRANCHLESS, chosen per stage by
vyre_vk.opt.dispatch.latency_bound) give the reference's bits, as the branchy ones do: every pair
of special operands (signed zeros, infinities, NaN, subnormals that canonicalise, FLT_MIN/MAX)
and random operands whose results overflow or fall below FLT_MIN, through +, -, * and a chain."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BinOp, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.lower import lower
from vyre_vk.lower.helpers import BRANCHLESS, GLSL_HELPERS
from vyre_vk.opt.dispatch import latency_bound

from .conftest import run_vulkan

F = np.float32
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-38, -1e-38, 1e-45, -1e-45,
                    np.finfo(F).tiny, -np.finfo(F).tiny, np.finfo(F).max, -np.finfo(F).max, 3.0, 2.5e-20], F)


def _operands():
    rng = np.random.default_rng(4)
    sa, sb = np.meshgrid(SPECIAL, SPECIAL)
    n = 1 << 15
    with np.errstate(over="ignore"):  # beyond FLT_MAX: infinities, on purpose
        ra = (rng.standard_normal(n) * 2.0 ** rng.integers(-130, 128, n)).astype(F)
        rb = (rng.standard_normal(n) * 2.0 ** rng.integers(-130, 128, n)).astype(F)
    return np.concatenate([sa.ravel(), ra]), np.concatenate([sb.ravel(), rb])


def _program(n: int) -> Program:
    """out[5i..5i+4] = (((a + b) * a - b) * b then 4 loop-carried steps acc = acc * a + b),
    a + 0.0, 0.0 - a, a * -0.0, a - -0.0: the literal zeros are what lavapipe folds (helpers.py)."""
    i, a, b = Expr.gid_x(), Expr.load("a", Expr.gid_x()), Expr.load("b", Expr.gid_x())
    acc, z, nz = Expr.var("acc"), Expr.f32(0.0), Expr.f32(-0.0)
    at = lambda k: Expr.add(Expr.mul(i, Expr.u32(5)), Expr.u32(k))  # noqa: E731
    body = [Node.let_bind("acc", Expr.binop(BinOp.Mul, Expr.binop(BinOp.Sub, Expr.binop(
                BinOp.Mul, Expr.binop(BinOp.Add, a, b), a), b), b)),
            Node.loop_for("k", Expr.u32(0), Expr.u32(4), [
                Node.assign("acc", Expr.binop(BinOp.Add, Expr.binop(BinOp.Mul, acc, a), b))]),
            Node.store("out", at(0), acc),
            Node.store("out", at(1), Expr.binop(BinOp.Add, a, z)),
            Node.store("out", at(2), Expr.binop(BinOp.Sub, z, a)),
            Node.store("out", at(3), Expr.binop(BinOp.Mul, a, nz)),
            Node.store("out", at(4), Expr.binop(BinOp.Sub, a, nz))]
    return Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(n),
                            BufferDecl.read("b", 1, DataType.F32).with_count(n),
                            BufferDecl.output("out", 2, DataType.F32).with_count(5 * n)], (64, 1, 1),
                           [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(n)), body)])])


@pytest.mark.parametrize("branchless", [False, True], ids=["branchy", "branchless"])
def test_both_helper_sets_give_the_reference_bits(vk_device, branchless):
    a, b = _operands()
    p = _program(a.size)
    glsl = lower(p, latency_bound=branchless).glsl
    assert (BRANCHLESS["vyre_fadd"] in glsl) == branchless and (GLSL_HELPERS["vyre_fadd"] in glsl) != branchless
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b})["out"]
    got = run_vulkan(p, {"a": a, "b": b}, latency_bound=branchless)["out"]
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (bad[:5], a[bad[:5] // 5], b[bad[:5] // 5], got[bad[:5]], want[bad[:5]])


def test_the_choice_follows_loops_and_acting_invocations():
    small = _program(1024)
    assert latency_bound(small, "nvidia")  # loops, 1,024 invocations
    assert not latency_bound(_program(1 << 18), "nvidia")  # 5 * 2^18 result words: throughput-bound
