"""Regressions for runtime bugs the reliability work found.

1. A program whose lowering needs the trap word buffer (any i32 Div/Mod, any Trap node)
   segfaulted the process: the shader declared binding `trap_binding` but the Kernel never
   bound a tensor there. Now the Kernel binds it, zeroes it per run and raises KernelTrapError.
2. Sparse binding numbers (e.g. 0 and 5) silently returned zeros: Kompute binds tensor k at
   binding k, so `out` at binding 5 was never bound. Gaps are now padded with dummies.
"""
import numpy as np
import pytest

from vyre_vk import reference
from vyre_vk.ir import BinOp, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.reference import EvalError, TrapError
from vyre_vk.runtime import KernelTrapError, LaunchError

U32, I32 = DataType.U32, DataType.I32


def _div_program(op=BinOp.Div):
    i = Expr.gid_x()
    return Program.wrapped(
        [BufferDecl.read("a", 0, I32).with_count(4), BufferDecl.read("b", 1, I32).with_count(4),
         BufferDecl.output("out", 2, I32).with_count(4)], (4, 1, 1),
        [wrap_anonymous("t", [Node.store("out", i, Expr.binop(op, Expr.load("a", i), Expr.load("b", i)))])])


@pytest.mark.parametrize("op", [BinOp.Div, BinOp.Mod])
def test_i32_division_runs_and_traps_like_the_reference(vk_device, op):
    k = vk_device.compile(_div_program(op))
    a = np.array([7, -7, 2**31 - 1, -2**31], np.int32)
    ok = {"a": a, "b": np.array([2, 2, -3, 3], np.int32)}
    got = k.run(ok)
    assert got["out"].tolist() == reference.run(k.program, ok)["out"].tolist()
    for b, lane in (([1, 0, 1, 1], 1), ([1, 1, 1, -1], 3)):
        bad = {"a": a, "b": np.array(b, np.int32)}
        with pytest.raises(EvalError):
            reference.run(k.program, bad)
        with pytest.raises(KernelTrapError) as ei:
            k.run(bad)
        assert ei.value.invocation == lane and ei.value.code == 1
    # the trap word is reset: a good run after a trapping one succeeds
    assert k.run(ok)["out"].tolist() == got["out"].tolist()


def test_trap_node_raises_kernel_trap(vk_device):
    i = Expr.gid_x()
    p = Program.wrapped([BufferDecl.read("a", 0, U32).with_count(4), BufferDecl.output("out", 1, U32).with_count(4)],
                        (4, 1, 1), [wrap_anonymous("t", [
                            Node.if_then(Expr.eq(Expr.load("a", i), Expr.u32(3)), [Node.trap(i, "bad-input")]),
                            Node.store("out", i, Expr.load("a", i))])])
    k = vk_device.compile(p)
    assert k.run({"a": np.arange(4, dtype=np.uint32) * 0})["out"].tolist() == [0] * 4
    with pytest.raises(TrapError):
        reference.run(p, {"a": np.arange(4, dtype=np.uint32)})
    with pytest.raises(KernelTrapError) as ei:
        k.run({"a": np.arange(4, dtype=np.uint32)})
    assert ei.value.invocation == 3 and ei.value.address == 3


@pytest.mark.parametrize("bindings", [(0, 5), (3, 1), (2, 0)])
def test_sparse_bindings_are_bound_where_the_shader_reads_them(vk_device, bindings):
    i = Expr.gid_x()
    p = Program.wrapped([BufferDecl.read("a", bindings[0], U32).with_count(4),
                         BufferDecl.output("out", bindings[1], U32).with_count(4)], (4, 1, 1),
                        [wrap_anonymous("t", [Node.store("out", i, Expr.add(Expr.load("a", i), Expr.u32(1)))])])
    assert vk_device.compile(p).run({"a": np.arange(4, dtype=np.uint32)})["out"].tolist() == [1, 2, 3, 4]


def test_binding_past_the_slot_limit_is_a_launch_error(vk_device):
    p = Program.wrapped([BufferDecl.output("out", 100_000, U32).with_count(4)], (4, 1, 1),
                        [wrap_anonymous("t", [Node.store("out", Expr.gid_x(), Expr.u32(1))])])
    with pytest.raises(LaunchError, match="slots"):
        vk_device.compile(p)


@pytest.mark.parametrize("element,value", [(U32, 0.5), (I32, -2.5), (DataType.Bool, 0.5), (DataType.F32, 1e300)])
def test_lossy_float_lists_are_input_errors(vk_device, element, value):
    """Bug 3: any float list without NaN counted as 'lossless' (the NaN clause excused every
    element), so [0.5] became 0 in a u32 buffer and [1e300] became inf in an f32 one."""
    from vyre_vk.runtime import InputError
    i = Expr.gid_x()
    p = Program.wrapped([BufferDecl.read("a", 0, element).with_count(2), BufferDecl.output("out", 1, U32).with_count(2)],
                        (2, 1, 1), [wrap_anonymous("t", [Node.store("out", i, Expr.u32(1))])])
    k = vk_device.compile(p)
    with pytest.raises(InputError, match="convert exactly"):
        k.run({"a": [value, value]})
    assert k.run({"a": [1.0, 0.0]})["out"].tolist() == [1, 1]  # exact floats still convert
    if element is DataType.F32:
        assert k.run({"a": [float("nan"), 2.0]})["out"].tolist() == [1, 1]  # NaN stays NaN


@pytest.mark.parametrize("optimize", [False, True])
def test_all_resident_read_write_f32_input_runs_and_is_canonical(vk_device, optimize):
    """Bug 4 (found checking issue 7's bind-time canonicalisation with Device.array): a program
    whose only buffer is a resident DeviceArray raised Kompute's 'OpTensorSyncDevice called
    with less than 1 tensor' (an empty upload was recorded). And a resident f32 ReadWrite
    input came back with its raw bytes; like every f32 input it is canonicalised at bind time."""
    p = Program.wrapped([BufferDecl.read_write("rw", 0, DataType.F32).with_count(3)], (1, 1, 1),
                        [wrap_anonymous("t", [])])
    raw = np.array([0x00000371, 0x7FC00001, 0x80000001], np.uint32).view(np.float32)
    want = reference.run(p, {"rw": raw})["rw"].view(np.uint32).tolist()
    assert want == [0, 0x7FC00000, 0x80000000]
    got = vk_device.compile(p, optimize=optimize).run({"rw": vk_device.array(raw)})["rw"]
    assert got.view(np.uint32).tolist() == want
