"""Every operator of the table, every cast and every expression kind: Vulkan vs reference
on edge values (integers bit-exact, f32 within vyre's ULP window).

Ops are batched: one program per operand type writes one output buffer per operator, so a
few shader compiles cover the whole table; a failure names the operator's buffer.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import (ATOMICS, BINOPS, CASTS, UNOPS, AtomicOp, BinOp, BufferDecl, DataType, Expr, Node,
                        Program, UnOp, wrap_anonymous)
from vyre_vk.ir.optable import TRANSCENDENTAL_F32_ULP

from .conftest import GpuTrap, assert_same, run_vulkan

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
I32_MIN, I32_MAX = -2**31, 2**31 - 1

U32_EDGE = np.array([0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 0x7FFFFFFF, 0x80000000, 0x80000001,
                     0xFFFFFFFE, 0xFFFFFFFF, 0x12345678, 65535, 65536], np.uint32)
I32_EDGE = np.array([0, 1, -1, 2, -2, 7, -7, 31, 32, 33, I32_MAX, I32_MIN, I32_MIN + 1, -32, 100000,
                     -100000, 0x12345678, -0x12345678], np.int32)
_f = np.float32
F32_EDGE = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997,
                     3.7, -3.7, 1e-38, 1e-45, -1e-45, 1.17549435e-38, 3.4028235e38, -3.4028235e38,
                     np.inf, -np.inf, np.nan, 4294967296.0, 4294967040.0, 2147483648.0, -2147483648.0,
                     2147483520.0, -2147483904.0, 1e20, -1e20, 0.1, 1234.5678, 8388608.5, 16777217.0,
                     1e-30, 7e-39], np.float32)
# a NaN with a payload and a negative NaN: the GPU must canonicalise loads like the reference
F32_EDGE = np.concatenate([F32_EDGE, np.array([0x7FC00001, 0xFFC00000, 0x00000001, 0x80400000],
                                              np.uint32).view(np.float32)])
BOOL_EDGE = np.array([0, 1], np.uint32)
EDGE = {U32: U32_EDGE, I32: I32_EDGE, F32: F32_EDGE, BOOL: BOOL_EDGE}


def _pairs(t: DataType) -> tuple[np.ndarray, np.ndarray]:
    v = EDGE[t]
    a, b = (np.array(x, v.dtype) for x in zip(*itertools.product(v, v)))
    return a, b


def _program(t_in: tuple[DataType, ...], outs: list[tuple[str, DataType, object]], n: int) -> Program:
    """Inputs a (and b) of the given types; out_k[i] = expr_k(load a[i], load b[i])."""
    bufs = [BufferDecl.read(name, k, t).with_count(n) for k, (name, t) in enumerate(zip("ab", t_in))]
    body = [Node.let_bind("i", Expr.gid_x())]
    guarded = []
    for k, (name, t, make) in enumerate(outs):
        bufs.append(BufferDecl.read_write(name, len(t_in) + k, t).with_count(n).with_pipeline_live_out(True))
        guarded.append(Node.store(name, Expr.var("i"), make(Expr.load("a", Expr.var("i")),
                                                              Expr.load("b", Expr.var("i")) if len(t_in) > 1 else None)))
    body.append(Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(n)), guarded))
    return Program.wrapped(bufs, (64, 1, 1), [wrap_anonymous("test::ops", body)])


def _check(p: Program, inputs: dict, ulp: int = 0) -> None:
    want = reference.run(p, inputs)
    got = run_vulkan(p, inputs)
    assert_same(got, want, ulp)


def _binops_for(t: DataType, exclude=()) -> list[BinOp]:
    return [op for op, i in BINOPS.items() if i.supported and t in i.types and op not in exclude
            and (i.match or t in (U32, BOOL))]


@pytest.mark.parametrize("t", [U32, I32, F32, BOOL], ids=lambda t: t.value)
def test_binops_edge_values(t: DataType) -> None:
    a, b = _pairs(t)
    if t is I32:  # the reference raises on these lanes (tested separately as traps)
        keep = (b != 0) & ~((a == I32_MIN) & (b == -1))
        a, b = a[keep], b[keep]
    ops = _binops_for(t)
    outs = [(f"out_{op.name}", BINOPS[op].result_type(t) if BINOPS[op].result_type(t) is not BOOL else BOOL,
             (lambda op: lambda x, y: Expr.binop(op, x, y))(op)) for op in ops]
    p = _program((t, t), outs, a.size)
    _check(p, {"a": a, "b": b}, ulp=0)  # a single IEEE op per element: bit-exact


@pytest.mark.parametrize("t", [U32, I32, F32, BOOL], ids=lambda t: t.value)
def test_unops_edge_values(t: DataType) -> None:
    a = EDGE[t]
    if t is F32:
        a = np.concatenate([a, np.linspace(-10, 10, 41, dtype=np.float32), _f([0.9, -0.9, 0.3])])
    ops = [op for op, i in UNOPS.items() if t in i.types]
    elementary = [op for op in ops if not (t is F32 and op.name in _TRANSCENDENTAL_NAMES)]
    outs = [(f"out_{op.name}", UNOPS[op].result_type(t), (lambda op: lambda x, y: Expr.unop(op, x))(op))
            for op in elementary]
    _check(_program((t,), outs, a.size), {"a": a}, ulp=0)


_TRANSCENDENTAL_NAMES = {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Exp", "Exp2",
                         "Log", "Log2", "Sqrt", "InverseSqrt"}


def test_transcendentals_within_window() -> None:
    # Sqrt / InverseSqrt are correctly rounded on lavapipe, but Vulkan allows more: 128 ULP.
    a = np.concatenate([np.linspace(-3, 3, 61, dtype=np.float32), _f([0.0, -0.0, 1e-3, 10.0, 40.0, -40.0,
                                                                      100.0, np.inf, -np.inf, np.nan, 1e-40])])
    ops = [op for op in UNOPS if op.name in _TRANSCENDENTAL_NAMES]
    outs = [(f"out_{op.name}", F32, (lambda op: lambda x, y: Expr.unop(op, x))(op)) for op in ops]
    _check(_program((F32,), outs, a.size), {"a": a}, ulp=TRANSCENDENTAL_F32_ULP)


@pytest.mark.parametrize("src", [U32, I32, F32, BOOL], ids=lambda t: t.value)
def test_casts_edge_values(src: DataType) -> None:
    a = EDGE[src]
    outs = [(f"to_{dst.value}", dst, (lambda dst: lambda x, y: Expr.cast(dst, x))(dst))
            for (s, dst) in CASTS if s is src]
    _check(_program((src,), outs, a.size), {"a": a})


def test_select_fma_and_bool_storage() -> None:
    a, b = _pairs(F32)
    outs = [
        ("sel", F32, lambda x, y: Expr.select(Expr.lt(x, y), x, y)),
        ("sel_u", U32, lambda x, y: Expr.select(Expr.cast(U32, x), Expr.u32(7), Expr.u32(9))),
        ("fma", F32, lambda x, y: Expr.fma(x, y, Expr.f32(1.0))),
        ("fma2", F32, lambda x, y: Expr.fma(x, x, Expr.mul(y, Expr.f32(-1.0)))),
        # Mul then Add is two roundings in the reference: must not be contracted to an fma
        ("muladd", F32, lambda x, y: Expr.add(Expr.mul(x, y), Expr.f32(1.0))),
        ("isbig", BOOL, lambda x, y: Expr.gt(x, y)),
        ("bool_as_u32", U32, lambda x, y: Expr.ge(x, y)),
    ]
    _check(_program((F32, F32), outs, a.size), {"a": a, "b": b})


def test_fma_is_fused_and_muladd_is_not() -> None:
    # x*x - 1 with x = 1 + 2^-12: fused keeps the 2^-24 term, two roundings lose it.
    x = _f([1 + 2**-12, 1 - 2**-12, 3.0])
    outs = [("fused", F32, lambda a, b: Expr.fma(a, a, Expr.f32(-1.0))),
            ("split", F32, lambda a, b: Expr.add(Expr.mul(a, a), Expr.f32(-1.0)))]
    p = _program((F32,), outs, x.size)
    got = run_vulkan(p, {"a": x})
    assert_same(got, reference.run(p, {"a": x}))
    assert got["fused"][0] != got["split"][0]


def test_literals_canonical() -> None:
    lits = [0.0, -0.0, 1.0, -1.5, 3.4028235e38, 1e-45, -1e-45, float("inf"), float("-inf"), float("nan"),
            0.1, 1.17549435e-38, -2.5e-10]
    outs = [(f"lit{k}", F32, (lambda v: lambda x, y: Expr.f32(v))(v)) for k, v in enumerate(lits)]
    outs += [("imin", I32, lambda x, y: Expr.i32(I32_MIN)), ("imax", I32, lambda x, y: Expr.i32(I32_MAX)),
             ("ineg", I32, lambda x, y: Expr.i32(-5)), ("umax", U32, lambda x, y: Expr.u32(0xFFFFFFFF)),
             ("btrue", BOOL, lambda x, y: Expr.bool(True))]
    p = _program((U32,), outs, 2)
    _check(p, {"a": np.zeros(2, np.uint32)})


@pytest.mark.parametrize("op", [BinOp.Div, BinOp.Mod], ids=lambda o: o.name)
@pytest.mark.parametrize("a,b", [(5, 0), (I32_MIN, -1)])
def test_i32_division_traps_like_reference(op: BinOp, a: int, b: int) -> None:
    p = _program((I32, I32), [("out", I32, lambda x, y: Expr.binop(op, x, y))], 2)
    inputs = {"a": np.array([7, a], np.int32), "b": np.array([2, b], np.int32)}
    with pytest.raises(reference.EvalError):
        reference.run(p, inputs)
    with pytest.raises(GpuTrap, match="division"):
        run_vulkan(p, inputs)


def test_trap_node() -> None:
    body = [Node.let_bind("i", Expr.gid_x()),
            Node.if_then(Expr.eq(Expr.load("a", Expr.var("i")), Expr.u32(3)), [Node.trap(Expr.var("i"), "bad-input")]),
            Node.store("out", Expr.var("i"), Expr.u32(1))]
    p = Program.wrapped([BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.output("out", 1, U32).with_count(4)],
                        (4, 1, 1), [wrap_anonymous("test::trap", body)])
    with pytest.raises(reference.TrapError):
        reference.run(p, {"a": np.array([0, 1, 3, 0], np.uint32)})
    with pytest.raises(GpuTrap, match="bad-input.*address 2"):
        run_vulkan(p, {"a": np.array([0, 1, 3, 0], np.uint32)})
    ok = {"a": np.array([0, 1, 2, 0], np.uint32)}
    assert_same(run_vulkan(p, ok), reference.run(p, ok))


def test_atomics_return_old_and_oob() -> None:
    # Lane i adds/ors/... into counter words; each lane stores the old value it saw for the
    # commutative ops only into a checksum (orders differ on a GPU), and the final words.
    n = 100
    ops = [AtomicOp.Add, AtomicOp.Or, AtomicOp.And, AtomicOp.Xor, AtomicOp.Min, AtomicOp.Max, AtomicOp.LruUpdate]
    body = [Node.let_bind("i", Expr.gid_x())]
    then = []
    for k, op in enumerate(ops):
        then.append(Node.let_bind(f"o{k}", Expr.atomic(op, "ctr", Expr.u32(k), Expr.add(Expr.var("i"), Expr.u32(1)))))
    # out of bounds: returns 0, writes nothing
    then.append(Node.let_bind("oob", Expr.atomic(AtomicOp.Add, "ctr", Expr.u32(1000), Expr.u32(5))))
    then.append(Node.store("oob_seen", Expr.var("i"), Expr.var("oob")))
    body.append(Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(n)), then))
    p = Program.wrapped([BufferDecl.read_write("ctr", 0, U32).with_count(8),
                         BufferDecl.output("oob_seen", 1, U32).with_count(n)],
                        (64, 1, 1), [wrap_anonymous("test::atomics", body)])
    init = np.array([0, 0, 0xFFFFFFFF, 0, 0xFFFFFFFF, 0, 0, 0], np.uint32)
    assert_same(run_vulkan(p, {"ctr": init}), reference.run(p, {"ctr": init}))


def test_atomic_exchange_and_cas_single_lane_sequence() -> None:
    # One lane: the order is program order, so every returned old value is defined.
    seq = [("x0", Expr.atomic(AtomicOp.Exchange, "ctr", Expr.u32(0), Expr.u32(11))),
           ("x1", Expr.atomic(AtomicOp.Exchange, "ctr", Expr.u32(0), Expr.u32(12))),
           ("c_hit", Expr.atomic_compare_exchange("ctr", Expr.u32(0), Expr.u32(12), Expr.u32(99))),
           ("c_miss", Expr.atomic_compare_exchange("ctr", Expr.u32(0), Expr.u32(12), Expr.u32(7))),
           ("two", Expr.sub(Expr.atomic(AtomicOp.Add, "ctr", Expr.u32(1), Expr.u32(5)),
                            Expr.atomic(AtomicOp.Add, "ctr", Expr.u32(1), Expr.u32(3))))]
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)),
                         [Node.let_bind(n, e) for n, e in seq]
                         + [Node.store("seen", Expr.u32(k), Expr.var(n)) for k, (n, _) in enumerate(seq)])]
    p = Program.wrapped([BufferDecl.read_write("ctr", 0, U32).with_count(2),
                         BufferDecl.output("seen", 1, U32).with_count(len(seq))],
                        (1, 1, 1), [wrap_anonymous("test::cas", body)])
    init = {"ctr": np.array([3, 100], np.uint32)}
    want = reference.run(p, init)
    assert list(want["seen"]) == [3, 11, 12, 99, (100 - 105) & 0xFFFFFFFF]
    assert_same(run_vulkan(p, init), want)


def test_buffers_named_like_accessor_parameters() -> None:
    """Buffers named `i`, `v`, `e` (AdamW's `v`) must not shadow the load/store/atomic helpers'
    parameters (found porting vyre-libs::optim::adamw_step)."""
    f32 = DataType.F32
    body = [Node.let_bind("k", Expr.gid_x()),
            Node.if_then(Expr.lt(Expr.var("k"), Expr.u32(4)), [
                Node.store("v", Expr.var("k"), Expr.add(Expr.load("v", Expr.var("k")), Expr.f32(1.0))),
                Node.let_bind("old", Expr.atomic(AtomicOp.Add, "e", Expr.u32(0), Expr.u32(1))),
                Node.let_bind("o2", Expr.atomic_compare_exchange("i", Expr.var("k"), Expr.u32(7), Expr.u32(9))),
            ])]
    p = Program.wrapped([BufferDecl.read_write("v", 0, f32).with_count(4),
                         BufferDecl.read_write("e", 1, U32).with_count(1),
                         BufferDecl.read_write("i", 2, U32).with_count(4)],
                        (64, 1, 1), [wrap_anonymous("test::names", body)])
    ins = {"v": np.arange(4, dtype=np.float32), "e": np.zeros(1, np.uint32),
           "i": np.array([7, 1, 7, 1], np.uint32)}
    assert_same(run_vulkan(p, ins), reference.run(p, ins))
