"""vyre_vk.opt.critical_path: chains of dependent operations and bytes moved, on hand-built
programs whose answers can be counted by hand (UNIT: every operation 1 cycle, memory free)."""
import doctest
from dataclasses import replace

import pytest

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
from vyre_vk.ops import all_ops, get
from vyre_vk.opt import critical_path as cp
from vyre_vk.opt.critical_path import NVIDIA_H200, UNIT, bytes_moved, model_for, program_bound, stage_cycles

F32, U32 = DataType.F32, DataType.U32
acc, j = Expr.var("acc"), Expr.var("j")


def program(body, n=100, out=1, wg=(1, 1, 1), extra=()):
    return Program.wrapped([BufferDecl.read("x", 0, F32).with_count(n),
                            BufferDecl.output("out", 1, F32).with_count(out), *extra], wg, body)


def fold(update, trips=100, init=Expr.f32(0.0)):
    """acc = init; for j in 0..trips: acc = update; out[0] = acc."""
    return [Node.let_bind("acc", init), Node.loop_for("j", Expr.u32(0), Expr.u32(trips), [Node.assign("acc", update)]),
            Node.store("out", Expr.u32(0), acc)]


def test_doctests():
    assert doctest.testmod(cp).failed == 0


def test_a_loop_of_dependent_adds_is_a_chain_of_that_many_adds():
    assert stage_cycles(program(fold(Expr.add(acc, Expr.load("x", j)))), UNIT) == 100
    assert stage_cycles(program(fold(Expr.add(acc, Expr.f32(1.0)), trips=37)), UNIT) == 37


def test_independent_iterations_count_once():
    # out[j] = x[j] + 1 for every j: nothing carried, the body's depth once
    p = program([Node.loop_for("j", Expr.u32(0), Expr.u32(100),
                               [Node.store("out", j, Expr.add(Expr.load("x", j), Expr.f32(1.0)))])], out=100)
    assert stage_cycles(p, UNIT) == 1
    # the off-chain work of an iteration (a mul and an add on the load) counts once, the carried add per trip
    update = Expr.add(acc, Expr.add(Expr.mul(Expr.load("x", j), Expr.f32(2.0)), Expr.f32(1.0)))
    assert stage_cycles(program(fold(update)), UNIT) == 2 + 100


def test_nested_loops_multiply_and_cross_coupled_recurrences_add_up():
    inner = Node.loop_for("k", Expr.u32(0), Expr.u32(10), [Node.assign("acc", Expr.add(acc, Expr.f32(1.0)))])
    p = program([Node.let_bind("acc", Expr.f32(0.0)), Node.loop_for("j", Expr.u32(0), Expr.u32(10), [inner]),
                 Node.store("out", Expr.u32(0), acc)])
    assert stage_cycles(p, UNIT) == 100
    a, b = Expr.var("a"), Expr.var("b")
    p = program([Node.let_bind("a", Expr.f32(0.0)), Node.let_bind("b", Expr.f32(0.0)),
                 Node.loop_for("j", Expr.u32(0), Expr.u32(10), [Node.assign("a", Expr.add(b, Expr.f32(1.0))),
                                                                Node.assign("b", Expr.add(a, Expr.f32(1.0)))]),
                 Node.store("out", Expr.u32(0), b)])
    assert stage_cycles(p, UNIT) == 20


def test_trip_counts_come_from_constants_and_buffer_lengths():
    n = Expr.var("n")
    body = [Node.let_bind("n", Expr.div(Expr.buf_len("x"), Expr.u32(4))), Node.let_bind("acc", Expr.f32(0.0)),
            Node.loop_for("j", Expr.u32(0), n, [Node.assign("acc", Expr.add(acc, Expr.f32(1.0)))]),
            Node.store("out", Expr.u32(0), acc)]
    assert stage_cycles(program(body, n=400), UNIT) == 1 + 100  # buf_len(x) / 4 trips, after that division
    unknown = [Node.let_bind("acc", Expr.f32(0.0)),
               Node.loop_for("j", Expr.u32(0), Expr.cast(U32, Expr.load("x", Expr.u32(0))),
                             [Node.assign("acc", Expr.add(acc, Expr.f32(1.0)))]),
               Node.store("out", Expr.u32(0), acc)]
    notes = []
    assert stage_cycles(program(unknown), UNIT, notes=notes) == 1 + 1  # the bound's cast, then one add
    assert notes == ["loop j: trip count not constant, counted once"]


def test_latencies_of_the_h200_model():
    # first load (480), then 100 dependent f32 adds (4 each) and the load of each later iteration overlapped
    assert stage_cycles(program(fold(Expr.add(acc, Expr.load("x", j)))), NVIDIA_H200) == 480 + 100 * 4
    # an exact f32 division in the recurrence: the fused-fma path's 20 cycles a trip on the H200,
    # the integer long division's 340 on a device not known to fuse (lowering: ieee.FUSED)
    div = program(fold(Expr.div(acc, Expr.load("x", j)), init=Expr.f32(1.0)))
    assert stage_cycles(div, NVIDIA_H200) == 480 + 100 * 20
    assert stage_cycles(div, model_for("default")) == 480 + 100 * 340
    # an integer division by a literal is a multiply-high and shift
    p = program([Node.store("out", Expr.u32(0), Expr.cast(F32, Expr.div(Expr.gid_x(), Expr.u32(3))))])
    assert stage_cycles(p, NVIDIA_H200) == 8 + 8


def test_a_chain_through_workgroup_memory_and_barriers():
    lid = Expr.local_x()
    tile = BufferDecl.workgroup("tile", 64, F32)
    body = [Node.store("tile", lid, Expr.f32(0.0)), Node.barrier(),
            Node.loop_for("s", Expr.u32(0), Expr.u32(8), [
                Node.store("tile", lid, Expr.add(Expr.load("tile", lid), Expr.f32(1.0))), Node.barrier()]),
            Node.store("out", Expr.u32(0), Expr.load("tile", Expr.u32(0)))]
    p = program(body, wg=(64, 1, 1), extra=(tile,))
    assert stage_cycles(p, UNIT) == 8
    model = replace(UNIT, load_shared=30, barrier=20)
    # each trip: load 30 + add 1 + barrier 20; then the final load (30) after the first barrier (20)
    assert stage_cycles(p, model) == 20 + 8 * 51 + 30


def test_the_longer_branch_counts_and_the_condition_is_on_the_chain():
    x0 = Expr.load("x", Expr.u32(0))
    long = Expr.add(Expr.add(Expr.add(x0, x0), x0), x0)
    p = program([Node.if_then_else(Expr.lt(x0, Expr.f32(0.0)), [Node.store("out", Expr.u32(0), long)],
                                   [Node.store("out", Expr.u32(0), x0)])])
    assert stage_cycles(p, UNIT) == 1 + 3  # the compare, then the three adds of the longer arm
    p = program([Node.if_then(Expr.lt(Expr.add(Expr.add(x0, x0), x0), Expr.f32(0.0)),
                              [Node.store("out", Expr.u32(0), x0)])])
    assert stage_cycles(p, UNIT) == 3  # two adds and the compare decide whether the store happens


def test_bytes_moved_reads_what_is_loaded_once_and_writes_what_is_stored_once():
    i = Expr.gid_x()
    assert bytes_moved(program([Node.store("out", Expr.u32(0), Expr.load("x", i))])) == 100 * 4 + 4
    assert bytes_moved(program([])) == 0  # declared but never touched: nothing must move
    y = Expr.load("y", i)
    rw = Program.wrapped([BufferDecl.read_write("y", 0, F32).with_count(10), BufferDecl.workgroup("t", 64, F32)],
                         (64, 1, 1), [Node.store("y", i, Expr.add(y, y))])
    assert bytes_moved(rw) == 2 * 10 * 4  # read and written; workgroup memory moves nothing
    # a gather reads at most one table element per invocation (6 outputs), not the whole table
    emb = get("vyre-libs::nn::embedding").build()  # tokens[2], output[6]
    assert bytes_moved(emb, {"table": 1000}) == 6 * 4 + 2 * 4 + 6 * 4


def test_a_loop_whose_work_stops_behind_a_flag_counts_once():
    found = Expr.var("found")
    body = [Node.let_bind("acc", Expr.f32(0.0)), Node.let_bind("found", Expr.u32(0)),
            Node.loop_for("j", Expr.u32(0), Expr.u32(100), [
                Node.if_then(Expr.eq(found, Expr.u32(0)), [
                    Node.assign("acc", Expr.add(acc, Expr.load("x", j))),
                    Node.if_then(Expr.gt(acc, Expr.f32(10.0)), [Node.assign("found", Expr.u32(1))])])]),
            Node.store("out", Expr.u32(0), acc)]
    notes = []
    assert stage_cycles(program(body), UNIT, notes=notes) == 1 + 1  # the flag's test, then one add
    assert notes == ["loop j: its work stops behind the flag `found`, counted once"]


def test_program_bound_sums_the_dispatched_stages():
    b = program_bound(get("vyre-libs::nn::mlp_backward").build_with(model_dim=64, hidden_dim=256), "nvidia")
    assert len(b.stage_cycles) >= 2 and all(c > 0 for c in b.stage_cycles)
    assert b.critical_path_s == pytest.approx(sum(b.stage_cycles) / 1.98e9)
    assert b.memory_s == pytest.approx(b.bytes_moved / 4.8e12)
    assert b.bound_s == max(b.critical_path_s, b.memory_s)
    assert cp.model_for("llvmpipe") is cp.LLVMPIPE and cp.model_for("amd") is cp.DEFAULT  # no fused fma assumed


def test_every_registered_op_has_a_positive_bound():
    for entry in all_ops():
        b = program_bound(entry.build(), "nvidia", {"table": 64})
        assert b.bound_s > 0, entry.id
