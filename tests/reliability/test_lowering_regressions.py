"""Lowering bugs found by tools/fuzz, each with the reference's answer pinned."""
import numpy as np

from vyre_vk import reference
from vyre_vk.ir import BinOp, BufferDecl, DataType, Expr, Node, Program, UnOp, wrap_anonymous

F32 = DataType.F32


def test_f32_division_by_a_constant_zero_expression(vk_device):
    """lavapipe folded `a / (false ? 1.0 : 0.0)` to 0.0; vyre (IEEE) gives NaN / +-inf.
    (A literal 0.0 divisor is rejected by validation, V044; a constant *expression* is not.)"""
    i = Expr.gid_x()
    zero = Expr.cast(F32, Expr.bool(False))
    for divisor in (zero, Expr.unop(UnOp.Negate, zero)):
        p = Program.wrapped([BufferDecl.read("a", 0, F32).with_count(5), BufferDecl.output("out", 1, F32).with_count(5)],
                            (1, 1, 1), [wrap_anonymous("t", [Node.store("out", i, Expr.binop(BinOp.Div, Expr.load("a", i), divisor))])])
        a = np.array([0.0, 1.0, -1.0, np.inf, np.nan], np.float32)
        want = reference.run(p, {"a": a})["out"]
        got = vk_device.compile(p).run({"a": a})["out"]
        assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
        assert np.isnan(got[0]) and np.isinf(got[1])
