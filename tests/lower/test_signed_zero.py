"""Exact zero sums follow IEEE round-to-nearest: +0 unless both addends are -0 (a - b: a=-0, b=+0)."""
import numpy as np

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program


def program(op):
    i = Expr.var("i")
    return Program.wrapped(
        [BufferDecl.read("a", 0, DataType.F32).with_count(4), BufferDecl.read("b", 1, DataType.F32).with_count(4),
         BufferDecl.output("out", 2, DataType.F32).with_count(4)], (4, 1, 1),
        [Node.let_bind("i", Expr.gid_x()),
         Node.store("out", i, op(Expr.load("a", i), Expr.load("b", i)))])


def test_signed_zero_sums_match_the_reference(vk_device):
    a = np.array([0.0, -0.0, -0.0, 1.5], np.float32)
    b = np.array([-0.0, -0.0, 0.0, -1.5], np.float32)
    lit_add = lambda x, y: Expr.add(Expr.f32(0.0), y)  # noqa: E731  (drivers fold 0.0 + y to y)
    lit_sub = lambda x, y: Expr.sub(y, Expr.f32(0.0))  # noqa: E731
    for op, want_sign in ((Expr.add, [0, 1, 0, 0]), (Expr.sub, [0, 0, 1, 0]),
                          (lit_add, [0, 0, 0, 1]), (lit_sub, [1, 1, 0, 1])):
        p = program(op)
        want = reference.run(p, {"a": a, "b": b})["out"]
        assert (want.view(np.uint32) >> 31).tolist() == want_sign  # the reference is IEEE here
        for optimize in (False, True):
            got = vk_device.compile(p, optimize=optimize).run({"a": a, "b": b})["out"]
            assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist(), (op, optimize)
