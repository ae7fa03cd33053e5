"""`vyre-libs::math::atomic::lru_update_u32`: ``buffer[index] = max(buffer[index], timestamp)``
through one ``Atomic{Max, SeqCst}`` (port of vyre-libs/src/math/atomic/atomic_lru_update.rs).

Body: ``let idx = index; let ts = timestamp; let _prev = atomic_max(buffer[idx], ts)`` with no
guard (every invocation runs it; max is idempotent). One plain ReadWrite u32 buffer (count 1),
workgroup [1,1,1]. ``index``/``timestamp`` are IR expressions (ints are taken as u32 literals).

Example::

    >>> [b.name for b in atomic_lru_update_u32("buffer", 0, 12345).buffers]
    ['buffer']
"""
from __future__ import annotations

from typing import Union

from ....ir import AtomicOp, DataType, Expr, Node, Program, wrap_anonymous
from ...builder import rw_decl
from ...registry import register_op
from ...wire import pack_u32_slice

OP_ID = "vyre-libs::math::atomic::lru_update_u32"
# u32 result: byte-exact (no f32 window).
ULP = None


def _expr(v: Union[int, Expr]) -> Expr:
    return Expr.u32(v) if isinstance(v, int) else v


def atomic_lru_update_u32(buffer: str, index: Union[int, Expr], timestamp: Union[int, Expr]) -> Program:
    body = [
        Node.let_bind("idx", _expr(index)),
        Node.let_bind("ts", _expr(timestamp)),
        Node.let_bind("_prev", Expr.atomic(AtomicOp.Max, buffer, Expr.var("idx"), Expr.var("ts"))),
    ]
    return Program.wrapped(
        [rw_decl(buffer, 0, 1, DataType.U32)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, body)],
    )


def _build(index: Union[int, Expr] = 0, timestamp: Union[int, Expr] = 12345) -> Program:
    return atomic_lru_update_u32("buffer", index, timestamp)


ENTRY = register_op(
    OP_ID, _build,
    test_inputs=lambda: [[pack_u32_slice([0])]],
    expected_output=lambda: [[pack_u32_slice([12345])]],
    category="math", ulp=ULP,
    bench=dict(),
)
