"""ConvergenceContract semantics (vyre-harness ConvergenceContract + the conform runner's loop):
which ops carry one, which buffers the loop drives, converging, the exact round bound on the
reference and on Vulkan (a typed error with a Fix hint past it), the device loop's guard, and how
often the host reads the device."""
import math

import numpy as np
import pytest

from vyre_vk import ops
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.ops.convergence import (ConvergenceContract, ConvergenceError, all_contracts, contract_for,
                                     convergence_contract, infer_fixpoint_buffers)
from vyre_vk.reference.convergence import converge as ref_converge
from vyre_vk.runtime.convergence import converge as vk_converge

from ..oracles.security_fixpoint_reach import ASSIGNMENT
from .graph_oracles import csr, seeded

P = "vyre-libs::security::"
CONTRACTED = [P + op for op in ("bounded_by_comparison", "dominator_tree", "flows_to", "sanitized_by", "taint_flow")]
U32 = DataType.U32


def test_the_five_contracts_of_vyre_libs_and_no_others():
    assert [(c.op_id, c.max_iterations) for c in all_contracts()] == [(op, 4096) for op in CONTRACTED]
    for op in ("flows_to_to_sink", "taint_pollution", "flows_to_with_sanitizer"):
        assert convergence_contract(P + op) is None


@pytest.mark.parametrize("op_id", CONTRACTED)
def test_the_loop_drives_fin_into_fout_as_vyres_lens_infers(op_id):
    program = ops.get(op_id).build()
    assert infer_fixpoint_buffers(program) == ("fin", "fout")
    assert infer_fixpoint_buffers(ops.get(op_id).build_with(node_count=1)) == ("fin", "fout")  # pg_nodes has 1 word too
    assert contract_for(None, program) == convergence_contract(op_id)  # keyed by the program's Region generator


def test_missing_contract_and_bad_layouts_are_typed_errors_with_a_fix():
    plain = ops.get("vyre-libs::logical::and").build()
    body = [Node.store("y", Expr.u32(0), Expr.load("x", Expr.u32(0)))]
    uneven = Program.wrapped([BufferDecl.read("x", 0, U32).with_count(2), BufferDecl.read_write("y", 1, U32)
                              .with_count(1)], (1, 1, 1), [wrap_anonymous("test::uneven", body)])
    no_rw = Program.wrapped([BufferDecl.read("x", 0, U32).with_count(1)], (1, 1, 1), [wrap_anonymous("test::ro", [])])
    for call in (lambda: contract_for(None, plain), lambda: infer_fixpoint_buffers(uneven),
                 lambda: infer_fixpoint_buffers(no_rw), lambda: ConvergenceContract("x", 0),
                 lambda: ref_converge(uneven, {"x": np.zeros(2, np.uint32), "y": np.zeros(1, np.uint32)}, 4)):
        with pytest.raises(ConvergenceError) as err:
            call()
        assert "Fix:" in str(err.value)


def chain(n):
    g = csr(n, [(v, v + 1, ASSIGNMENT) for v in range(n - 1)])
    return {**g, **seeded(n, [0])}


@pytest.mark.parametrize("n", [4, 37])
def test_a_chain_converges_in_exactly_n_rounds_and_not_in_one_fewer(n, vk_device):
    program = ops.get(P + "flows_to").build_with(node_count=n, edge_count=n - 1)
    want = np.zeros(-(-n // 32), np.uint32)
    want[: n // 32] = 0xFFFFFFFF
    if n % 32:
        want[n // 32] = (1 << (n % 32)) - 1
    for run in (lambda c: ref_converge(program, chain(n), c),
                lambda c: vk_converge(vk_device, program, chain(n), c, rounds_per_submit=3)):
        res = run(n)
        assert res.rounds == n and list(res.outputs["fout"]) == list(want)
        with pytest.raises(ConvergenceError) as err:
            run(n - 1)
        assert err.value.rounds == n - 1 and err.value.fix.startswith("raise the ConvergenceContract")


def counter_program(limit=5):
    """fout = min(fin + 1, limit) and a round counter: converges after limit + 1 rounds from fin = 0;
    a loop that ran extra rounds would count them (the program is not idempotent)."""
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.store("count", Expr.u32(0), Expr.add(Expr.load("count", Expr.u32(0)), Expr.u32(1))),
        Node.store("fout", Expr.u32(0), Expr.min(Expr.add(Expr.load("fin", Expr.u32(0)), Expr.u32(1)),
                                                 Expr.u32(limit)))])]
    buffers = [BufferDecl.read("fin", 0, U32).with_count(1), BufferDecl.read_write("count", 1, U32).with_count(1),
               BufferDecl.read_write("fout", 2, U32).with_count(1)]
    return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous("test::counter", body)])


@pytest.mark.parametrize("per_submit", [1, 4, 64])
def test_rounds_after_convergence_change_nothing_on_the_device(per_submit, vk_device):
    ins = {"fin": np.zeros(1, np.uint32), "count": np.zeros(1, np.uint32), "fout": np.zeros(1, np.uint32)}
    ref = ref_converge(counter_program(), ins, 100)
    got = vk_converge(vk_device, counter_program(), ins, 100, rounds_per_submit=per_submit)
    assert ref.rounds == got.rounds == 6
    assert ref.outputs.keys() == got.outputs.keys()
    assert all(np.array_equal(ref.outputs[k], got.outputs[k]) for k in ref.outputs)
    assert int(got.outputs["count"][0]) == 6 and int(got.outputs["fout"][0]) == 5


@pytest.mark.parametrize("per_submit", [1, 5, 16])
def test_the_host_reads_one_flag_word_per_submission(per_submit, vk_device):
    n = 40
    program = ops.get(P + "flows_to").build_with(node_count=n, edge_count=n - 1)
    res = vk_converge(vk_device, program, chain(n), None, rounds_per_submit=per_submit)
    assert res.rounds == n
    assert res.readbacks == math.ceil(n / per_submit)  # flag reads: one per batch of rounds
    assert res.submits == res.readbacks + 2           # + one upload, + one download of the results


def test_a_program_with_a_barrier_cannot_take_the_device_guard(vk_device):
    e = ops.get(P + "flows_to_to_sink")
    with pytest.raises(ConvergenceError, match="Barrier.*Fix:"):
        vk_converge(vk_device, e.build(), e.test_inputs()[0], 16, current="source", next="reach")
    res = ref_converge(e.build(), e.test_inputs()[0], 16, current="source", next="reach")  # the reference can
    assert int(res.outputs["reach"][0]) == 0b1111
