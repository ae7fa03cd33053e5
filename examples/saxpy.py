"""A hand-written vyre program: y[i] = a * x[i] + y[i], checked against the reference.

    python examples/saxpy.py
"""
import numpy as np

import vyre_vk
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from vyre_vk.testing.parity import assert_parity

F32 = DataType.F32
i = Expr.var("i")
program = Program.wrapped(
    [BufferDecl.read("x", 0, F32), BufferDecl.read("a", 1, F32).with_count(1),
     BufferDecl.read_write("y", 2, F32)],           # y: an input the program updates (a result)
    (64, 1, 1),                                     # lanes per workgroup
    [wrap_anonymous("example::saxpy", [
        Node.let_bind("i", Expr.gid_x()),
        Node.if_then(Expr.lt(i, Expr.buf_len("y")), [
            Node.store("y", i, Expr.add(Expr.mul(Expr.load("a", Expr.u32(0)), Expr.load("x", i)),
                                        Expr.load("y", i)))])])])

rng = np.random.default_rng(0)
inputs = {"x": rng.standard_normal(10_000, dtype=np.float32), "a": np.float32([2.5]),
          "y": rng.standard_normal(10_000, dtype=np.float32)}
report = assert_parity(program, inputs)             # reference vs Vulkan, bit for bit (f32: ULP window)
y = vyre_vk.run(program, inputs)["y"]
assert np.array_equal(y, inputs["a"][0] * inputs["x"] + inputs["y"])   # and NumPy, written from the math
print(f"saxpy: {y.size} elements, worst {report.worst_ulps} ULP from the reference")
