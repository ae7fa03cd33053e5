"""`vyre-libs::math::atomic::atomic_compare_exchange_u32`
(port of vyre-libs/src/math/atomic/atomic_compare_exchange.rs and ``build_atomic_compare_exchange``).

One invocation loops ``i < buf_len(expected)``: ``old = CompareExchange(state[0], expected[i],
desired[i])`` (state becomes ``desired[i]`` when it equals ``expected[i]``); ``trace[i] = old``.
Buffers: expected, desired ro u32 (n), state plain ReadWrite u32 (1), trace output u32 (n).
Workgroup [1,1,1].

Example::

    >>> [b.name for b in atomic_compare_exchange_u32("expected", "desired", "state", "trace", 4).buffers]
    ['expected', 'desired', 'state', 'trace']
"""
from __future__ import annotations

from ....ir import DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_u32_slice

OP_ID = "vyre-libs::math::atomic::atomic_compare_exchange_u32"
# u32 results: byte-exact (no f32 window).
ULP = None


def atomic_compare_exchange_u32(expected: str, desired: str, state: str, trace: str, n: int) -> Program:
    i = Expr.var("i")
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.loop_for("i", Expr.u32(0), Expr.buf_len(expected), [
            Node.let_bind("old", Expr.atomic_compare_exchange(state, Expr.u32(0), Expr.load(expected, i),
                                                              Expr.load(desired, i))),
            Node.store(trace, i, Expr.var("old")),
        ]),
    ])]
    return Program.wrapped(
        [ro_decl(expected, 0, n, DataType.U32), ro_decl(desired, 1, n, DataType.U32),
         rw_decl(state, 2, 1, DataType.U32), out_decl(trace, 3, n, DataType.U32)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(n: int = 4) -> Program:
    return atomic_compare_exchange_u32("expected", "desired", "state", "trace", n)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_u32_slice([10, 99, 20, 30]), pack_u32_slice([11, 88, 21, 31]),
                          pack_u32_slice([10])]],
    # serial CAS from state 10: i=0 matches -> 11; the rest do not. trace = pre-op states.
    expected_output=lambda: [[pack_u32_slice([11]), pack_u32_slice([10, 11, 11, 11])]],
    category="math", ulp=ULP,
    bench=dict(n=4096),
)
