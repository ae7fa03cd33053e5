"""`vyre-libs::math::atomic::atomic_{add,and,exchange,max,min,or,xor}_u32`
(port of the ``define_atomic_serial_module!`` ops in vyre-libs/src/math/atomic/mod.rs).

``build_atomic_serial``: one invocation (``gid.x == 0``) loops ``i < buf_len(values)``:
``old = Atomic{op, state[0], values[i], SeqCst}; trace[i] = old``. Buffers: values ro u32 (n),
state plain ReadWrite u32 (1; its bytes are the initial state), trace output u32 (n).
Workgroup [1,1,1].

Example::

    >>> p = atomic_add_u32("values", "state", "trace", 4)
    >>> [(b.name, b.binding, b.count) for b in p.buffers]
    [('values', 0, 4), ('state', 1, 1), ('trace', 2, 4)]
"""
from __future__ import annotations

from ....ir import AtomicOp, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl, rw_decl
from ...registry import register_op
from ...wire import pack_u32_slice

# u32 results: byte-exact (no f32 window).
ULP = None
U32_MAX = 0xFFFFFFFF


def build_atomic_serial(op_id: str, op: AtomicOp, values: str, state: str, trace: str, n: int) -> Program:
    i = Expr.var("i")
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.loop_for("i", Expr.u32(0), Expr.buf_len(values), [
            Node.let_bind("old", Expr.atomic(op, state, Expr.u32(0), Expr.load(values, i))),
            Node.store(trace, i, Expr.var("old")),
        ]),
    ])]
    return Program.wrapped(
        [ro_decl(values, 0, n, DataType.U32), rw_decl(state, 1, 1, DataType.U32), out_decl(trace, 2, n, DataType.U32)],
        (1, 1, 1),
        [wrap_anonymous(op_id, body)],
    )


# (fn name, op, fixture values, initial state, final state, trace), exactly as vyre registers them
SERIAL_OPS = {
    "atomic_add_u32": (AtomicOp.Add, [1, 5, U32_MAX, 3], 7, 15, [7, 8, 13, 12]),
    "atomic_and_u32": (AtomicOp.And, [0xFF, 0xF0, 0x0F, 0x33], U32_MAX, 0x00, [U32_MAX, 0xFF, 0xF0, 0x00]),
    "atomic_exchange_u32": (AtomicOp.Exchange, [100, 200, 300, 400], 42, 400, [42, 100, 200, 300]),
    "atomic_max_u32": (AtomicOp.Max, [50, 20, 80, 10], 0, 80, [0, 50, 50, 80]),
    "atomic_min_u32": (AtomicOp.Min, [50, 20, 80, 10], 100, 10, [100, 50, 20, 20]),
    "atomic_or_u32": (AtomicOp.Or, [0x01, 0x02, 0x04, 0x08], 0, 0x0F, [0, 1, 3, 7]),
    "atomic_xor_u32": (AtomicOp.Xor, [0xF0, 0x0F, 0xFF, 0x55], 0, 0x55, [0, 0xF0, 0xFF, 0x00]),
}

ENTRIES = {}


def _register(fn_name: str) -> None:
    op, values, initial, final, trace = SERIAL_OPS[fn_name]
    op_id = f"vyre-libs::math::atomic::{fn_name}"

    def builder(values_name: str, state: str, trace_name: str, n: int) -> Program:
        return build_atomic_serial(op_id, op, values_name, state, trace_name, n)

    def _build(n: int = 4) -> Program:
        return builder("values", "state", "trace", n)

    builder.__name__ = builder.__qualname__ = fn_name
    globals()[fn_name] = builder
    ENTRIES[op_id] = register_op(
        op_id, _build,
        test_inputs=lambda: [[pack_u32_slice(values), pack_u32_slice([initial])]],
        expected_output=lambda: [[pack_u32_slice([final]), pack_u32_slice(trace)]],
        category="math", ulp=ULP,
        bench=dict(n=4096),
    )


for _name in SERIAL_OPS:
    _register(_name)
