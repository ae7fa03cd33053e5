"""`vyre-libs::math::clamp_u32`: ``out[i] = min(max(input[i], lo[i]), hi[i])`` on u32 (port of
vyre-libs/src/math/clamp_u32.rs). ``input``, ``lo``, ``hi`` ro (bindings 0..2), ``out`` output
(3), all count ``n``; ``idx = gid.x; if idx < n``; workgroup [64,1,1]. As in vyre (and unlike
Rust's ``u32::clamp``, which panics) ``lo > hi`` is not checked: the result is then ``hi``.

Example::

    >>> [(b.name, b.binding) for b in clamp_u32("input", "lo", "hi", "out", 4).buffers]
    [('input', 0), ('lo', 1), ('hi', 2), ('out', 3)]
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program
from ..builder import elementwise_program, out_decl, ro_decl
from ..registry import register_case
from ..wire import pack_u32_slice

OP_ID = "vyre-libs::math::clamp_u32"
# u32 result: byte-exact (no f32 window).
ULP = None


def clamp_u32(input: str, lo: str, hi: str, out: str, n: int) -> Program:
    idx, u32 = Expr.var("idx"), DataType.U32
    value = Expr.min(Expr.max(Expr.load(input, idx), Expr.load(lo, idx)), Expr.load(hi, idx))
    buffers = [ro_decl(input, 0, n, u32), ro_decl(lo, 1, n, u32), ro_decl(hi, 2, n, u32), out_decl(out, 3, n, u32)]
    return elementwise_program(OP_ID, buffers, n, [Node.store(out, idx, value)], index="idx")


def _build(n: int = 4) -> Program:
    return clamp_u32("input", "lo", "hi", "out", n)


ENTRY = register_case(OP_ID, _build, [pack_u32_slice([0, 5, 10, 0xFFFFFFFF]), pack_u32_slice([3, 3, 3, 100]),
                                      pack_u32_slice([8, 8, 8, 200])],
                      [pack_u32_slice([3, 5, 8, 200])], category="math", ulp=ULP, bench=dict(n=1 << 24))
