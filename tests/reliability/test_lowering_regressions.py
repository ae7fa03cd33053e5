"""Lowering bugs found by tools/fuzz, each with the reference's answer pinned."""
import numpy as np
import pytest

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


_EDGES = np.array([np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.0, 0.5, 3.4028235e38, 1.17549435e-38],
                  np.float32)
_LITS = (0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"))


def _constant_operand_exprs():
    """Every f32 Add/Sub/Mul/Div/Min/Max and Fma with a literal operand, plus Abs/Negate of one."""
    x = Expr.load("a", Expr.gid_x())
    out = []
    for op in (BinOp.Add, BinOp.Sub, BinOp.Mul, BinOp.Div, BinOp.Min, BinOp.Max):
        for c in _LITS:
            out.append((f"{op.name}({c}, x)", Expr.binop(op, Expr.f32(c), x)))
            if not (op is BinOp.Div and c == 0.0):  # a literal zero divisor is invalid (V044)
                out.append((f"{op.name}(x, {c})", Expr.binop(op, x, Expr.f32(c))))
    for c in _LITS:
        lit = Expr.f32(c)
        for args in ((lit, x, x), (x, lit, x), (x, x, lit), (x, lit, lit), (lit, x, lit), (lit, lit, x)):
            out.append((f"Fma{tuple('c' if a is lit else 'x' for a in args)} c={c}", Expr.fma(*args)))
        out += [(f"Abs({c})", Expr.unop(UnOp.Abs, lit)), (f"Negate({c})", Expr.unop(UnOp.Negate, lit))]
    return out


@pytest.mark.parametrize("optimize", [False, True])
def test_f32_ops_with_a_constant_operand_are_bit_exact(vk_device, optimize):
    """lavapipe folds `x + 0.0` -> x, `0.0 - x` -> -x, `x * 0.0` -> 0.0, `0.0 / x` -> 0.0 and
    abs(-0.0) -> -0.0 when the zero is a compile-time constant, `precise` notwithstanding.
    Found by tools/fuzz as `out[0] = 0.0 / out[0]` giving 0.0 where the reference gives NaN
    (0.0 / NaN), and by this sweep: 0 * inf, fma(0, inf, c), fma(-0, x, -0) and every signed
    zero. The helpers (vyre_fadd/fsub/fmul/fdiv/fma) now decide zero operands with bit tests."""
    exprs = _constant_operand_exprs()
    n, i = _EDGES.size, Expr.gid_x()
    body = [Node.store("out", Expr.add(i, Expr.u32(k * n)), e) for k, (_, e) in enumerate(exprs)]
    p = Program.wrapped([BufferDecl.read("a", 0, F32).with_count(n),
                         BufferDecl.output("out", 1, F32).with_count(n * len(exprs))], (1, 1, 1),
                        [wrap_anonymous("t", [Node.if_then(Expr.lt(i, Expr.u32(n)), body)])])
    want = reference.run(p, {"a": _EDGES})["out"].view(np.uint32).reshape(len(exprs), n)
    got = vk_device.compile(p, optimize=optimize).run({"a": _EDGES})["out"].view(np.uint32).reshape(len(exprs), n)
    bad = [(name, [(float(_EDGES[j]), hex(want[k, j]), hex(got[k, j])) for j in np.nonzero(want[k] != got[k])[0][:3]])
           for k, (name, _) in enumerate(exprs) if (want[k] != got[k]).any()]
    assert not bad, bad
