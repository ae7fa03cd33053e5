"""One value check per Expr/Node kind on the reference, plus the arithmetic edge cases."""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import (AtomicOp, BinOp, BufferDecl, DataType, Expr, MemoryOrdering, Node, Program, UnOp,
                        wrap_anonymous)
from vyre_vk.errors import InputError
from vyre_vk.ir import binding
from vyre_vk.reference import EvalError, TrapError, dispatch_grid, fma_f32

from .helpers import eval_expr, f32_bits_of, scalar_program

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
u, i_, f, b = Expr.u32, Expr.i32, Expr.f32, Expr.bool
NAN_BITS = 0x7FC00000


def prog(buffers, body, wg=(64, 1, 1)):
    return Program.wrapped(buffers, wg, [wrap_anonymous("test::op", body)])


# ----------------------------------------------------------------------------- leaves
def test_literals():
    assert eval_expr(u(0xFFFFFFFF), U32) == 0xFFFFFFFF
    assert eval_expr(i_(-5), I32) == -5
    assert eval_expr(f(1.5), F32) == np.float32(1.5)
    assert eval_expr(Expr.cast(U32, b(True)), U32) == 1


def test_f32_literal_is_canonicalised_nan_and_subnormal():
    from vyre_vk.ir import LitF32
    assert f32_bits_of(eval_expr(LitF32(0xFFC00001), F32)) == NAN_BITS  # -NaN with payload
    assert f32_bits_of(eval_expr(LitF32(0x00000001), F32)) == 0  # smallest subnormal -> +0
    assert f32_bits_of(eval_expr(LitF32(0x80000001), F32)) == 0x80000000  # -> -0


def test_var_let_assign():
    lets = [Node.let_bind("a", u(3)), Node.assign("a", Expr.add(Expr.var("a"), u(4)))]
    assert eval_expr(Expr.var("a"), U32, lets) == 7


def test_load_and_out_of_bounds_load_is_zero():
    p = prog([BufferDecl.read("a", 0, U32).with_count(2), BufferDecl.output("out", 1, U32).with_count(4)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(4)),
                           [Node.store("out", Expr.var("i"), Expr.load("a", Expr.var("i")))])])
    assert reference.run(p, {"a": np.array([7, 9], np.uint32)})["out"].tolist() == [7, 9, 0, 0]


def test_buf_len_is_bound_length_not_declared_count():
    p = prog([BufferDecl.read("a", 0, U32).with_count(2), BufferDecl.output("out", 1, U32).with_count(1)],
             [Node.store("out", u(0), Expr.buf_len("a"))])
    assert reference.run(p, {"a": np.arange(5, dtype=np.uint32)})["out"].tolist() == [5]


def test_invocation_local_and_workgroup_ids():
    p = prog([BufferDecl.output("out", 0, U32).with_count(8)],
             [Node.let_bind("g", Expr.gid_x()),
              Node.store("out", Expr.var("g"),
                         Expr.add(Expr.mul(Expr.workgroup_x(), u(100)), Expr.mul(Expr.local_x(), u(10))))],
             wg=(4, 1, 1))
    assert reference.run(p, {})["out"].tolist() == [0, 10, 20, 30, 100, 110, 120, 130]


def test_two_dimensional_ids():
    p = prog([BufferDecl.output("out", 0, U32).with_count(16)],
             [Node.store("out", Expr.add(Expr.mul(Expr.gid_y(), u(4)), Expr.gid_x()),
                         Expr.add(Expr.mul(Expr.local_y(), u(10)), Expr.workgroup_y()))], wg=(2, 2, 1))
    assert dispatch_grid(p, {"out": 16}) == (2, 2, 1)
    out = reference.run(p, {})["out"].reshape(4, 4)
    assert out[:, 0].tolist() == [0, 10, 1, 11]


def test_select_evaluates_both_arms():
    assert eval_expr(Expr.select(b(False), u(1), u(2)), U32) == 2
    # an atomic in the unused arm still executes
    p = prog([BufferDecl.read_write("c", 0, U32).with_count(1)],
             [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
                 Node.let_bind("r", Expr.select(b(True), u(5), Expr.atomic_add("c", u(0), u(1))))])])
    assert reference.run(p, {"c": np.zeros(1, np.uint32)})["c"].tolist() == [1]


def test_select_nan_condition_is_true_via_cast():
    assert eval_expr(Expr.select(Expr.cast(BOOL, f(float("nan"))), u(1), u(2)), U32) == 1


def test_fma_is_single_rounding():
    a, c = np.float32(1 + 2**-12), np.float32(-(1 + 2**-11))
    fused = eval_expr(Expr.fma(f(a), f(a), f(c)), F32)
    assert fused == np.float32(2**-24)  # exact: (1+2^-12)^2 - (1+2^-11) = 2^-24
    unfused = eval_expr(Expr.add(Expr.mul(f(a), f(a)), f(c)), F32)
    assert unfused == 0.0  # two roundings lose it


def test_fma_matches_exact_rational_on_random_values():
    from fractions import Fraction
    rng = np.random.default_rng(5)
    a, b_, c = (rng.standard_normal(2000).astype(np.float32) * 2.0 ** rng.integers(-20, 20, 2000)
                for _ in range(3))
    got = fma_f32(a, b_, c)
    for k in range(0, 2000, 7):
        exact = Fraction(float(a[k])) * Fraction(float(b_[k])) + Fraction(float(c[k]))
        # round the exact value to f32 via float64 candidates: it must be the nearest f32
        g = Fraction(float(got[k]))
        lo, hi = np.nextafter(got[k], np.float32(-np.inf)), np.nextafter(got[k], np.float32(np.inf))
        assert abs(g - exact) <= abs(Fraction(float(lo)) - exact)
        assert abs(g - exact) <= abs(Fraction(float(hi)) - exact)


def test_cast_kinds():
    assert eval_expr(Expr.cast(U32, i_(-1)), U32) == 0xFFFFFFFF
    assert eval_expr(Expr.cast(I32, u(0xFFFFFFFE)), I32) == -2
    assert eval_expr(Expr.cast(F32, u(16777217)), F32) == np.float32(16777216)  # RNE
    assert eval_expr(Expr.cast(F32, i_(-3)), F32) == -3.0


@pytest.mark.parametrize("value,u32,i32", [
    (float("nan"), 0, 0), (float("inf"), 0xFFFFFFFF, 2**31 - 1), (float("-inf"), 0, -2**31),
    (-1.5, 0, -1), (-0.0, 0, 0), (3.99, 3, 3), (4294967296.0, 0xFFFFFFFF, 2**31 - 1),
    (2147483648.0, 2147483648, 2**31 - 1), (-2147483904.0, 0, -2**31)])
def test_float_to_int_casts_saturate_and_map_nan_to_zero(value, u32, i32):
    assert eval_expr(Expr.cast(U32, f(value)), U32) == u32
    assert eval_expr(Expr.cast(I32, f(value)), I32) == i32


def test_atomic_add_returns_old_values_in_invocation_order():
    p = prog([BufferDecl.read_write("c", 0, U32).with_count(1), BufferDecl.output("out", 1, U32).with_count(8)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(8)), [
                  Node.let_bind("old", Expr.atomic_add("c", u(0), u(2))),
                  Node.store("out", Expr.var("i"), Expr.var("old"))])])
    out = reference.run(p, {"c": np.array([10], np.uint32)})
    assert out["out"].tolist() == [10, 12, 14, 16, 18, 20, 22, 24]
    assert out["c"].tolist() == [26]


@pytest.mark.parametrize("op,init,val,new", [
    ("atomic_or", 0b0101, 0b0011, 0b0111), ("atomic_and", 0b0101, 0b0011, 0b0001),
    ("atomic_xor", 0b0101, 0b0011, 0b0110), ("atomic_min", 5, 3, 3), ("atomic_max", 5, 0xFFFFFFFF, 0xFFFFFFFF),
    ("atomic_exchange", 5, 9, 9), ("atomic_add", 0xFFFFFFFF, 2, 1)])
def test_atomic_ops(op, init, val, new):
    p = prog([BufferDecl.read_write("c", 0, U32).with_count(2), BufferDecl.output("out", 1, U32).with_count(1)],
             [Node.if_then(Expr.eq(Expr.gid_x(), u(0)), [
                 Node.let_bind("old", getattr(Expr, op)("c", u(0), u(val))),
                 Node.let_bind("oob", getattr(Expr, op)("c", u(7), u(val))),  # OOB: returns 0, no write
                 Node.store("out", u(0), Expr.add(Expr.var("old"), Expr.var("oob")))])])
    out = reference.run(p, {"c": np.array([init, 0], np.uint32)})
    assert out["c"].tolist() == [new, 0] and out["out"].tolist() == [init]


def test_compare_exchange_is_strong_and_sequential():
    p = prog([BufferDecl.read_write("c", 0, U32).with_count(1), BufferDecl.output("out", 1, U32).with_count(4)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(4)), [
                  Node.let_bind("old", Expr.atomic_compare_exchange("c", u(0), Expr.var("i"),
                                                                    Expr.add(Expr.var("i"), u(1)))),
                  Node.store("out", Expr.var("i"), Expr.var("old"))])])
    out = reference.run(p, {"c": np.zeros(1, np.uint32)})
    assert out["out"].tolist() == [0, 1, 2, 3] and out["c"].tolist() == [4]


# ----------------------------------------------------------------------------- nodes
def test_store_out_of_bounds_dropped_and_last_writer_wins():
    p = prog([BufferDecl.output("out", 0, U32).with_count(2)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.store("out", Expr.rem(Expr.var("i"), u(3)), Expr.var("i"))])
    out = reference.run(p, {}, grid=(1, 1, 1))["out"]
    # lanes 0..63 write index i % 3; index 2 is out of bounds; the highest lane wins
    assert out.tolist() == [63, 61]


def test_if_then_else_masks_lanes():
    p = prog([BufferDecl.output("out", 0, U32).with_count(4)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(4)), [
                  Node.if_then_else(Expr.eq(Expr.rem(Expr.var("i"), u(2)), u(0)),
                                    [Node.store("out", Expr.var("i"), u(100))],
                                    [Node.store("out", Expr.var("i"), u(200))])])])
    assert reference.run(p, {})["out"].tolist() == [100, 200, 100, 200]


def test_loop_with_per_lane_bounds_and_accumulator():
    p = prog([BufferDecl.output("out", 0, U32).with_count(5)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(5)), [
                  Node.let_bind("acc", u(0)),
                  Node.loop_for("j", Expr.var("i"), u(5), [
                      Node.if_then(Expr.ne(Expr.var("j"), u(3)), [
                          Node.assign("acc", Expr.add(Expr.var("acc"), Expr.var("j")))])]),
                  Node.store("out", Expr.var("i"), Expr.var("acc"))])])
    assert reference.run(p, {})["out"].tolist() == [7, 7, 6, 4, 4]


def test_loop_from_ge_to_runs_zero_times_and_bounds_evaluated_once():
    p = prog([BufferDecl.output("out", 0, U32).with_count(2)],
             [Node.let_bind("n", u(3)), Node.let_bind("c", u(0)),
              Node.loop_for("j", u(0), Expr.var("n"), [
                  Node.assign("n", u(10)), Node.assign("c", Expr.add(Expr.var("c"), u(1)))]),
              Node.let_bind("z", u(0)),
              Node.loop_for("k", u(5), u(2), [Node.assign("z", u(1))]),
              Node.store("out", u(0), Expr.var("c")), Node.store("out", u(1), Expr.var("z"))])
    assert reference.run(p, {}, grid=(1, 1, 1))["out"].tolist() == [3, 0]


def test_integer_accumulate_fast_path_wraps():
    p = prog([BufferDecl.output("out", 0, U32).with_count(1)],
             [Node.let_bind("acc", u(0)),
              Node.loop_for("j", u(0), u(4), [Node.assign("acc", Expr.add(Expr.var("acc"), u(0x7FFFFFFF)))]),
              Node.store("out", u(0), Expr.var("acc"))])
    assert reference.run(p, {})["out"].tolist() == [(4 * 0x7FFFFFFF) & 0xFFFFFFFF]


def test_f32_accumulate_with_subnormal_partial_sums_flushes_each_step():
    # acc = 1.5*2^-126; step 1 adds -2^-126 -> 2^-127 (subnormal) -> flushed to 0;
    # step 2 adds 2^-125 -> 2^-125. Without the per-step flush it would be 1.25*2^-125.
    p = prog([BufferDecl.output("out", 0, F32).with_count(1)],
             [Node.let_bind("acc", f(1.5 * 2.0**-126)),
              Node.loop_for("j", u(0), u(2), [
                  Node.assign("acc", Expr.add(Expr.var("acc"), Expr.select(Expr.eq(Expr.var("j"), u(0)),
                                                                           f(-2.0**-126), f(2.0**-125))))]),
              Node.store("out", u(0), Expr.var("acc"))])
    assert reference.run(p, {})["out"].tolist() == [np.float32(2.0**-125)]


def test_block_and_region_scopes():
    p = prog([BufferDecl.output("out", 0, U32).with_count(1)],
             [Node.let_bind("a", u(1)),
              Node.block([Node.let_bind("t", u(5)), Node.assign("a", Expr.var("t"))]),
              Node.region("inner::gen", [Node.let_bind("t", u(2)),
                                         Node.assign("a", Expr.add(Expr.var("a"), Expr.var("t")))]),
              Node.store("out", u(0), Expr.var("a"))])
    assert reference.run(p, {})["out"].tolist() == [7]


def test_return_retires_lanes():
    p = prog([BufferDecl.output("out", 0, U32).with_count(4)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.ge(Expr.var("i"), u(4)), [Node.return_()]),
              Node.if_then(Expr.eq(Expr.var("i"), u(1)), [Node.return_()]),
              Node.store("out", Expr.var("i"), u(9))])
    assert reference.run(p, {})["out"].tolist() == [9, 0, 9, 9]


def test_workgroup_memory_barrier_and_per_workgroup_zeroing():
    # each workgroup reverses its lanes through shared memory; grid = 2 workgroups of 4
    p = prog([BufferDecl.output("out", 0, U32).with_count(8), BufferDecl.workgroup("tile", 4, U32)],
             [Node.let_bind("l", Expr.local_x()),
              Node.let_bind("seen", Expr.load("tile", Expr.var("l"))),  # zero at workgroup start
              Node.store("tile", Expr.var("l"), Expr.add(Expr.gid_x(), Expr.var("seen"))),
              Node.barrier(),
              Node.store("out", Expr.gid_x(), Expr.load("tile", Expr.sub(u(3), Expr.var("l"))))],
             wg=(4, 1, 1))
    assert dispatch_grid(p, {"out": 8}) == (2, 1, 1)
    assert reference.run(p, {})["out"].tolist() == [3, 2, 1, 0, 7, 6, 5, 4]


def test_trap_raises():
    p = prog([BufferDecl.output("out", 0, U32).with_count(1)], [Node.trap(u(3), "bad-args")])
    with pytest.raises(TrapError, match="tag=bad-args"):
        reference.run(p, {})


def test_bool_buffer_round_trip():
    p = prog([BufferDecl.read("a", 0, BOOL).with_count(3), BufferDecl.output("out", 1, BOOL).with_count(3)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(3)),
                           [Node.store("out", Expr.var("i"), Expr.not_(Expr.load("a", Expr.var("i"))))])])
    out = reference.run(p, {"a": np.array([0, 5, 1], np.uint32)})["out"]
    assert out.dtype == np.uint32 and out.tolist() == [1, 0, 0]


def test_output_byte_range_cuts_result():
    p = prog([BufferDecl.output("out", 0, U32).with_count(4).with_output_byte_range(4, 12)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(4)), [Node.store("out", Expr.var("i"), Expr.var("i"))])])
    assert reference.run(p, {})["out"].tolist() == [1, 2]


def test_read_write_buffer_is_input_and_output():
    p = prog([BufferDecl.read_write("s", 0, F32).with_count(2)],
             [Node.if_then(Expr.lt(Expr.gid_x(), u(2)), [
                 Node.store("s", Expr.gid_x(), Expr.mul(Expr.load("s", Expr.gid_x()), f(2.0)))])])
    assert reference.run(p, [np.array([1.5, -3], np.float32)])["s"].tolist() == [3.0, -6.0]


# ----------------------------------------------------------------------------- integer edge cases
@pytest.mark.parametrize("op,a,b_,want", [
    (BinOp.Add, 0xFFFFFFFF, 1, 0), (BinOp.Sub, 0, 1, 0xFFFFFFFF), (BinOp.Mul, 0x10000, 0x10000, 0),
    (BinOp.Div, 7, 0, 0xFFFFFFFF), (BinOp.Mod, 7, 0, 0), (BinOp.Div, 7, 2, 3), (BinOp.Mod, 7, 3, 1),
    (BinOp.Shl, 1, 33, 2), (BinOp.Shr, 0x80000000, 63, 1), (BinOp.Shl, 1, 32, 1),
    (BinOp.RotateLeft, 0x80000001, 1, 3), (BinOp.RotateRight, 3, 33, 0x80000001),
    (BinOp.SaturatingAdd, 0xFFFFFFF0, 0x20, 0xFFFFFFFF), (BinOp.SaturatingSub, 1, 2, 0),
    (BinOp.SaturatingMul, 0x10000, 0x10000, 0xFFFFFFFF), (BinOp.MulHigh, 0x80000000, 4, 2),
    (BinOp.AbsDiff, 3, 10, 7), (BinOp.WrappingAdd, 0xFFFFFFFF, 2, 1), (BinOp.WrappingSub, 1, 2, 0xFFFFFFFF),
    (BinOp.BitAnd, 0b1100, 0b1010, 0b1000), (BinOp.BitOr, 0b1100, 0b1010, 0b1110),
    (BinOp.BitXor, 0b1100, 0b1010, 0b0110), (BinOp.Min, 3, 0xFFFFFFFF, 3), (BinOp.Max, 3, 0xFFFFFFFF, 0xFFFFFFFF)])
def test_u32_binops(op, a, b_, want):
    a_e = Expr.var("a")  # through a variable, so V044 (literal zero divisor) does not apply
    assert eval_expr(Expr.binop(op, a_e, Expr.var("b")), U32,
                     [Node.let_bind("a", u(a)), Node.let_bind("b", u(b_))]) == want


@pytest.mark.parametrize("op,a,b_,want", [
    (BinOp.Add, 2**31 - 1, 1, -2**31), (BinOp.Sub, -2**31, 1, 2**31 - 1), (BinOp.Mul, 2**16, 2**15, -2**31),
    (BinOp.Div, -7, 2, -3), (BinOp.Mod, -7, 2, -1), (BinOp.Div, 7, -2, -3), (BinOp.Mod, 7, -2, 1),
    (BinOp.Min, -1, 1, -1), (BinOp.Max, -1, 1, 1), (BinOp.BitAnd, -1, 5, 5)])
def test_i32_binops(op, a, b_, want):
    assert eval_expr(Expr.binop(op, Expr.var("a"), Expr.var("b")), I32,
                     [Node.let_bind("a", i_(a)), Node.let_bind("b", i_(b_))]) == want


@pytest.mark.parametrize("a,b_", [(5, 0), (-2**31, -1)])
@pytest.mark.parametrize("op", [BinOp.Div, BinOp.Mod])
def test_i32_division_by_zero_and_min_by_minus_one_abort(op, a, b_):
    with pytest.raises(EvalError, match="Fix:"):
        eval_expr(Expr.binop(op, Expr.var("a"), Expr.var("b")), I32,
                  [Node.let_bind("a", i_(a)), Node.let_bind("b", i_(b_))])


def test_i32_division_error_only_counts_active_lanes():
    # lanes >= 1 would divide by zero, but they are masked off by the if
    p = prog([BufferDecl.output("out", 0, I32).with_count(1)],
             [Node.let_bind("d", Expr.cast(I32, Expr.select(Expr.eq(Expr.gid_x(), u(0)), u(2), u(0)))),
              Node.if_then(Expr.eq(Expr.gid_x(), u(0)),
                           [Node.store("out", u(0), Expr.div(i_(9), Expr.var("d")))])])
    assert reference.run(p, {})["out"].tolist() == [4]


def test_signed_vs_unsigned_compares():
    assert eval_expr(Expr.lt(Expr.cast(U32, i_(-1)), u(1)), BOOL) == 0  # 0xFFFFFFFF < 1 is false
    assert eval_expr(Expr.lt(i_(-1), i_(1)), BOOL) == 1
    assert eval_expr(Expr.gt(u(0x80000000), u(1)), BOOL) == 1
    assert eval_expr(Expr.gt(i_(-2**31), i_(1)), BOOL) == 0


def test_logical_and_or_use_truthiness_and_not():
    assert eval_expr(Expr.and_(u(2), u(4)), BOOL) == 1  # logical, not bitwise (2 & 4 == 0)
    assert eval_expr(Expr.or_(u(0), b(False)), BOOL) == 0
    assert eval_expr(getattr(Expr, "and")(u(1), b(True)), BOOL) == 1
    assert eval_expr(Expr.not_(u(7)), BOOL) == 0
    assert eval_expr(getattr(Expr, "not")(u(0)), BOOL) == 1


@pytest.mark.parametrize("op,x,want", [
    (UnOp.Negate, 1, 0xFFFFFFFF), (UnOp.BitNot, 0, 0xFFFFFFFF), (UnOp.Popcount, 0xF0F0, 8),
    (UnOp.Clz, 0, 32), (UnOp.Clz, 1, 31), (UnOp.Ctz, 0, 32), (UnOp.Ctz, 8, 3),
    (UnOp.ReverseBits, 1, 0x80000000), (UnOp.Unpack4Low, 0xABCD, 0xD), (UnOp.Unpack4High, 0xABCD, 0xC),
    (UnOp.Unpack8Low, 0x12345678, 0x78), (UnOp.Unpack8High, 0x12345678, 0x12)])
def test_u32_unops(op, x, want):
    assert eval_expr(Expr.unop(op, u(x)), U32) == want


def test_i32_unops_keep_type():
    assert eval_expr(Expr.bitnot(i_(0)), I32) == -1
    assert eval_expr(Expr.popcount(i_(-1)), I32) == 32
    assert eval_expr(Expr.clz(i_(-1)), I32) == 0


# ----------------------------------------------------------------------------- f32 semantics
@pytest.mark.parametrize("op,x,want", [
    (UnOp.Round, 0.5, 1.0), (UnOp.Round, -0.5, -1.0), (UnOp.Round, 2.5, 3.0), (UnOp.Round, 0.49999997, 0.0),
    (UnOp.Sign, -0.0, 0.0), (UnOp.Sign, -3.0, -1.0), (UnOp.Sign, 2.0, 1.0), (UnOp.Abs, -2.0, 2.0),
    (UnOp.Floor, -1.5, -2.0), (UnOp.Ceil, -1.5, -1.0), (UnOp.Trunc, -1.5, -1.0), (UnOp.Sqrt, 4.0, 2.0),
    (UnOp.InverseSqrt, 4.0, 0.5), (UnOp.Reciprocal, 4.0, 0.25), (UnOp.Negate, 2.0, -2.0),
    (UnOp.Exp, 0.0, 1.0), (UnOp.Log, 1.0, 0.0), (UnOp.Exp2, 3.0, 8.0), (UnOp.Log2, 8.0, 3.0),
    (UnOp.Sin, 0.0, 0.0), (UnOp.Cos, 0.0, 1.0), (UnOp.Tan, 0.0, 0.0), (UnOp.Asin, 0.0, 0.0),
    (UnOp.Acos, 1.0, 0.0), (UnOp.Atan, 0.0, 0.0), (UnOp.Tanh, 0.0, 0.0), (UnOp.Sinh, 0.0, 0.0),
    (UnOp.Cosh, 0.0, 1.0)])
def test_f32_unops(op, x, want):
    got = eval_expr(Expr.unop(op, f(x)), F32)
    assert f32_bits_of(got) == f32_bits_of(want)


def test_f32_predicates_and_sign_of_nan():
    nan = float("nan")
    assert eval_expr(Expr.is_nan(f(nan)), BOOL) == 1
    assert eval_expr(Expr.is_inf(f(float("-inf"))), BOOL) == 1
    assert eval_expr(Expr.is_finite(f(float("inf"))), BOOL) == 0
    assert f32_bits_of(eval_expr(Expr.sign(f(nan)), F32)) == NAN_BITS
    assert f32_bits_of(eval_expr(Expr.negate(f(nan)), F32)) == NAN_BITS  # -NaN canonicalised


def test_f32_arithmetic_is_float32_not_float64():
    # 16777216 + 1 rounds back to 16777216 in f32 (it would be exact in f64)
    assert eval_expr(Expr.add(f(16777216.0), f(1.0)), F32) == np.float32(16777216.0)
    assert eval_expr(Expr.div(f(1.0), f(3.0)), F32) == np.float32(1) / np.float32(3)


def test_f32_division_by_zero_and_nan_canonical():
    assert eval_expr(Expr.div(f(1.0), Expr.var("z")), F32, [Node.let_bind("z", f(-0.0))]) == -np.inf
    assert f32_bits_of(eval_expr(Expr.div(Expr.var("z"), Expr.var("z")), F32,
                                 [Node.let_bind("z", f(0.0))])) == NAN_BITS


def test_f32_results_flush_subnormals_to_signed_zero():
    got = eval_expr(Expr.mul(f(1e-30), f(-1e-10)), F32)
    assert f32_bits_of(got) == 0x80000000
    assert eval_expr(Expr.eq(Expr.mul(f(1e-30), f(1e-10)), f(0.0)), BOOL) == 1


def test_f32_min_max_ignore_nan_and_return_first_on_signed_zero_tie():
    nan = float("nan")
    assert eval_expr(Expr.min(f(nan), f(2.0)), F32) == 2.0
    assert eval_expr(Expr.max(f(1.0), f(nan)), F32) == 1.0
    assert f32_bits_of(eval_expr(Expr.min(f(nan), f(nan)), F32)) == NAN_BITS
    assert f32_bits_of(eval_expr(Expr.min(f(-0.0), f(0.0)), F32)) == 0x80000000
    assert f32_bits_of(eval_expr(Expr.max(f(0.0), f(-0.0)), F32)) == 0


def test_f32_compares_with_nan():
    nan = f(float("nan"))
    assert eval_expr(Expr.eq(nan, nan), BOOL) == 0
    assert eval_expr(Expr.ne(nan, nan), BOOL) == 1
    assert eval_expr(Expr.lt(nan, f(1.0)), BOOL) == 0
    assert eval_expr(Expr.eq(f(-0.0), f(0.0)), BOOL) == 1


def test_f32_input_and_store_canonicalised():
    p = prog([BufferDecl.read("a", 0, F32).with_count(3), BufferDecl.output("out", 1, F32).with_count(3)],
             [Node.let_bind("i", Expr.gid_x()),
              Node.if_then(Expr.lt(Expr.var("i"), u(3)),
                           [Node.store("out", Expr.var("i"), Expr.load("a", Expr.var("i")))])])
    a = np.array([0xFFC00001, 0x00000010, 0x3F800000], np.uint32).view(np.float32)
    out = reference.run(p, {"a": a})["out"]
    assert out.view(np.uint32).tolist() == [NAN_BITS, 0, 0x3F800000]


# ----------------------------------------------------------------------------- grid and inputs
def test_dispatch_grid_rules():
    out_only = prog([BufferDecl.read("a", 0, U32).with_count(1000), BufferDecl.output("o", 1, U32).with_count(100)],
                    [Node.store("o", u(0), u(1))])
    assert dispatch_grid(out_only, {"a": 1000, "o": 100}) == (2, 1, 1)  # largest output: 100 / 64
    atomic = prog([BufferDecl.read("a", 0, U32).with_count(1000), BufferDecl.read_write("o", 1, U32).with_count(1)],
                  [Node.let_bind("x", Expr.atomic_add("o", u(0), u(1)))])
    assert dispatch_grid(atomic, {"a": 1000, "o": 1}) == (16, 1, 1)  # largest non-workgroup count
    serial = Program.wrapped([BufferDecl.output("o", 0, U32).with_count(4)], (1, 1, 1), [Node.store("o", u(0), u(1))])
    assert dispatch_grid(serial, {"o": 4}) == (4, 1, 1)
    square = Program.wrapped([BufferDecl.output("o", 0, U32).with_count(1024)], (16, 16, 1),
                             [Node.store("o", u(0), u(1))])
    assert dispatch_grid(square, {"o": 1024}) == (2, 2, 1)


def test_every_invocation_of_the_grid_runs_including_the_tail():
    p = prog([BufferDecl.read_write("c", 0, U32).with_count(1), BufferDecl.read("a", 1, U32).with_count(100)],
             [Node.let_bind("x", Expr.atomic_add("c", u(0), u(1)))])
    assert reference.run(p, {"c": np.zeros(1, np.uint32), "a": np.zeros(100, np.uint32)})["c"].tolist() == [128]


def test_input_errors_are_clear():
    """The reference binds inputs under the runtime's rules (vyre_vk.ir.binding): InputError, never a
    silent conversion."""
    p = prog([BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.output("o", 1, U32).with_count(1)],
             [Node.store("o", u(0), Expr.load("a", u(0)))])
    with pytest.raises(InputError, match="has 2 elements, the program declares 4"):
        reference.run(p, {"a": np.zeros(2, np.uint32)})
    with pytest.raises(InputError, match="no input given"):
        reference.run(p, {})
    with pytest.raises(InputError, match="expected dtype uint32, got float32"):
        reference.run(p, {"a": np.zeros(4, np.float32)})
    with pytest.raises(InputError, match="expected dtype uint32, got int64"):  # used to wrap silently
        reference.run(p, {"a": np.arange(4)})
    with pytest.raises(InputError, match="is an output"):
        reference.run(p, {"a": np.zeros(4, np.uint32), "o": np.zeros(1, np.uint32)})
    assert reference.run(p, [bytes(16)])["o"].tolist() == [0]
    assert reference.run(p, {"a": [7, 1, 2, 3]})["o"].tolist() == [7]  # a lossless list is fine


def test_float64_is_refused_like_the_runtime():
    """Issue 14: the reference used to round float64 to f32 where Vulkan refuses it."""
    p = prog([BufferDecl.read("x", 0, F32).with_count(2), BufferDecl.output("y", 1, F32).with_count(2)],
             [Node.store("y", u(0), Expr.load("x", u(0)))])
    with pytest.raises(InputError, match="expected dtype float32, got float64") as info:
        reference.run(p, {"x": np.array([0.1, 0.2])})
    assert info.value.buffer == "x" and "astype(np.float32)" in info.value.fix
    with pytest.raises(InputError, match="do not convert exactly"):
        reference.run(p, {"x": [0.1, 0.2]})  # 0.1 is no f32
    assert reference.run(p, {"x": [0.5, 2.0]})["y"].tolist() == [0.5, 0.0]
    assert binding.bind(p.buffers, {"x": np.ones(2, np.float32)})["y"].tolist() == [0.0, 0.0]
