"""Runtime fixes the ops needed (vyre_vk/runtime/kernel.py):
- Kernel.run returns only ``with_output_byte_range`` bytes, like the reference (cross_entropy);
- programs with gaps in their binding numbers run (rms_norm_linear binds 0, 1, 2, 4): kp binds
  tensor k at binding k, so unused slots get a filler tensor."""
import numpy as np

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous


def _copy_program(bindings=(0, 1), out_count=8, byte_range=None):
    out = BufferDecl.output("o", bindings[1], DataType.U32).with_count(out_count)
    if byte_range:
        out = out.with_output_byte_range(*byte_range)
    i = Expr.var("i")
    return Program.wrapped(
        [BufferDecl.read("a", bindings[0], DataType.U32).with_count(8), out], (64, 1, 1),
        [wrap_anonymous("test::copy", [Node.let_bind("i", Expr.gid_x()), Node.if_then(
            Expr.lt(i, Expr.u32(8)), [Node.store("o", i, Expr.add(Expr.load("a", i), Expr.u32(1)))])])])


def test_output_byte_range_is_applied_on_vulkan(vk_device):
    p = _copy_program(byte_range=(0, 12))
    a = np.arange(8, dtype=np.uint32)
    got, want = vk_device.compile(p).run({"a": a})["o"], reference.run(p, {"a": a})["o"]
    assert got.tolist() == want.tolist() == [1, 2, 3]


def test_byte_range_inside_the_buffer(vk_device):
    p = _copy_program(byte_range=(8, 20))
    a = np.arange(8, dtype=np.uint32)
    assert vk_device.compile(p).run({"a": a})["o"].tolist() == reference.run(p, {"a": a})["o"].tolist() == [3, 4, 5]


def test_binding_gaps_run(vk_device):
    for bindings in ((0, 2), (1, 4), (3, 0)):
        p = _copy_program(bindings=bindings)
        a = np.arange(8, dtype=np.uint32) * 3
        assert vk_device.compile(p).run({"a": a})["o"].tolist() == (a + 1).tolist(), bindings


def test_rms_norm_linear_binding_4(vk_device):
    from vyre_vk.ops import get
    p = get("vyre-libs::nn::rms_norm_linear").build()
    assert [b.binding for b in p.buffers if not b.is_workgroup] == [0, 1, 2, 4]
    ins = {"input": np.arange(1, 5, dtype=np.float32), "w": np.arange(16, dtype=np.float32),
           "b": np.zeros(4, np.float32)}
    assert np.allclose(vk_device.compile(p).run(ins)["out"], reference.run(p, ins)["out"], rtol=1e-5)
