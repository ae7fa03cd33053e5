"""Small builders shared by the IR tests."""
from __future__ import annotations

import numpy as np

from vyre_vk import reference
from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous


def ulp_ok(actual: np.ndarray, expected: np.ndarray, ulps: int = 4) -> bool:
    """|a - b| <= ulps * ulp(max|expected|), elementwise (the brief's definition)."""
    expected = np.asarray(expected, np.float64)
    scale = np.float32(np.max(np.abs(expected))) if expected.size else np.float32(0)
    tol = ulps * float(np.spacing(scale))
    return bool(np.all(np.abs(np.asarray(actual, np.float64) - expected) <= tol))


def scalar_program(value: Expr, dtype: DataType, lets=(), n: int = 1) -> Program:
    """Lanes i < n store `value` (which may use var `i` and earlier `lets`) to out[i]."""
    body = [Node.let_bind("i", Expr.gid_x()), *lets,
            Node.if_then(Expr.lt(Expr.var("i"), Expr.u32(n)), [Node.store("out", Expr.var("i"), value)])]
    return Program.wrapped([BufferDecl.output("out", 0, dtype).with_count(n)], (64, 1, 1),
                           [wrap_anonymous("test::scalar", body)])


def eval_expr(value: Expr, dtype: DataType, lets=()):
    """Evaluate one expression in lane 0 and return the stored element."""
    return reference.run(scalar_program(value, dtype, lets), {})["out"][0]


def f32_bits_of(x) -> int:
    return int(np.asarray(x, np.float32).view(np.uint32))
