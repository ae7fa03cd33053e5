"""Division, reciprocal, sqrt and inverse sqrt: bit-exact with the reference's IEEE float32.

The lowering computes them in integers (vyre_vk/lower/ieee.py), not with the driver's `/` and
sqrt(), so on any Vulkan driver -- lavapipe's correctly rounded ones included -- these tests
exercise our code: every operand range, the inputs whose quotients lie next to a rounding
midpoint (1 / 0.49999997 = 2.0000002, where NVIDIA's `/` gives 2.0), the FLT_MIN boundary
(the reference flushes subnormal results, but one that rounds up to FLT_MIN stays), overflow,
and the special operands (zeros, infinities, NaN; inf / FLT_MAX is NaN on NVIDIA).
"""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BinOp, BufferDecl, DataType, Expr, Node, Program, UnOp, wrap_anonymous

F = np.float32
FLT_MAX, FLT_MIN = np.finfo(F).max, np.finfo(F).tiny


def _bits(*words):
    return np.array(words, np.uint32).view(F)


def _normals(rng, n, lo=-126, hi=127, signed=True):
    x = rng.uniform(1, 2, n) * 2.0 ** rng.integers(lo, hi + 1, n)
    return (x * (rng.choice([-1, 1], n) if signed else 1)).astype(F)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, 3.0, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN],
                   F)


def _pairs(rng):
    """(a, b) for a / b: random over all exponents; 1 / x and x / y for consecutive significands
    below 1 and 2 (quotients next to midpoints); quotients straddling FLT_MIN and FLT_MAX."""
    n = 1 << 18
    below_one = (np.arange(1 << 16, dtype=np.uint32) + np.uint32(0x3F800000 - (1 << 16))).view(F)
    below_two = (np.arange(1 << 16, dtype=np.uint32) + np.uint32(0x40000000 - (1 << 16))).view(F)
    sa, sb = np.meshgrid(SPECIAL, SPECIAL)
    tiny = _normals(rng, 1 << 14, -126, -125)
    huge = _normals(rng, 1 << 14, 126, 127)
    a = np.concatenate([_normals(rng, n), np.ones_like(below_one), below_two, below_one, tiny, huge,
                        sa.ravel(), _bits(0x00FFFFFF, 0x00FFFFFE, 0x00800000, 0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF)])
    b = np.concatenate([_normals(rng, n), below_one, below_one, below_two,
                        rng.uniform(1, 2.5, tiny.size).astype(F), rng.uniform(0.4, 1.0, huge.size).astype(F),
                        sb.ravel(), _bits(0x40000000, 0x40000000, 0x3F800001, 0x3F7FFFFF, 0x3F800000, 0x3F000000)])
    return a.astype(F), b.astype(F)


def _roots(rng):
    n = 1 << 18
    around = np.concatenate([(np.arange(-(1 << 14), 1 << 14) + np.int64(c)).astype(np.uint32)
                             for c in (0x3F800000, 0x40000000, 0x40800000)]).view(F)
    return np.concatenate([_normals(rng, n, signed=False), around, SPECIAL, -_normals(rng, 64)]).astype(F)


def _program(op, n):
    i = Expr.gid_x()
    a, b = Expr.load("a", i), Expr.load("b", i)
    e = Expr.binop(op, a, b) if isinstance(op, BinOp) else Expr.unop(op, a)
    return Program.wrapped([BufferDecl.read("a", 0, DataType.F32).with_count(n),
                            BufferDecl.read("b", 1, DataType.F32).with_count(n),
                            BufferDecl.output("out", 2, DataType.F32).with_count(n)], (64, 1, 1),
                           [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(n)), [Node.store("out", i, e)])])])


@pytest.mark.parametrize("op", [BinOp.Div, UnOp.Reciprocal, UnOp.Sqrt, UnOp.InverseSqrt],
                         ids=lambda o: o.name)
def test_bits_equal_the_reference(vk_device, op):
    rng = np.random.default_rng(7)
    if op is BinOp.Div:
        a, b = _pairs(rng)
    else:
        a = _pairs(rng)[1] if op is UnOp.Reciprocal else _roots(rng)
        b = np.zeros_like(a)
    p = _program(op, a.size)
    with np.errstate(all="ignore"):
        want = reference.run(p, {"a": a, "b": b})["out"]
        ieee = (a / b if op is BinOp.Div else F(1) / a if op is UnOp.Reciprocal
                else np.sqrt(a) if op is UnOp.Sqrt else F(1) / np.sqrt(a))
    # the reference is IEEE float32 with subnormal results flushed and NaNs made canonical
    plain = np.isfinite(ieee) & (np.abs(ieee) >= FLT_MIN)
    assert (want[plain].view(np.uint32) == ieee[plain].view(np.uint32)).all()
    got = vk_device.compile(p).run({"a": a, "b": b})["out"]
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (a[bad[:5]], b[bad[:5]], got[bad[:5]], want[bad[:5]])


def test_boundaries_are_the_ones_intended():
    """The hand-picked rows of _pairs hit what they are there for (in the reference)."""
    with np.errstate(all="ignore"):
        q = _bits(0x00FFFFFF, 0x00FFFFFE, 0x00800000, 0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF) / \
            _bits(0x40000000, 0x40000000, 0x3F800001, 0x3F7FFFFF, 0x3F800000, 0x3F000000)
    assert q[0] == FLT_MIN                         # subnormal midpoint rounds up to FLT_MIN
    assert 0 < q[1] < FLT_MIN and 0 < q[2] < FLT_MIN  # subnormal: the reference flushes to 0
    assert np.isinf(q[3]) and q[4] == FLT_MAX and np.isinf(q[5])
    assert F(1) / F(0.49999997) == F(2.0000002)
