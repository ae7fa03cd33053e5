"""The elementwise skeletons of vyre-libs/src/math/elementwise.rs (over builder.rs's
``build_elementwise_{unary,binary}``): ``idx = gid.x; if idx < n { out[idx] = f(...) }`` in
``Region(op_id)``, workgroup [64,1,1].

- ``u32_elementwise_unary``: ``input`` ro u32 (binding 0, count n), ``out`` output u32 (1, n);
- ``u32_elementwise_binary``: ``a``, ``b`` ro u32 (0, 1), ``out`` output u32 (2), all count n;
- ``f32_elementwise_mul``: ``output[i] = input[i] * rhs[i]`` (``rhs=None``: ``input[i]`` squared),
  loop variable ``i``; ``input`` (0), ``rhs`` (1, when given), ``output`` (last).

Aliased buffer names raise OpParamError (vyre's TensorRefError::NameCollision).

Example::

    >>> from vyre_vk.ir import Expr
    >>> p = u32_elementwise_unary("demo::neg", "a", "out", 4, lambda x: Expr.sub(Expr.u32(0), x))
    >>> p.workgroup_size, [(b.name, b.binding, b.count) for b in p.buffers]
    ((64, 1, 1), [('a', 0, 4), ('out', 1, 4)])
"""
from __future__ import annotations

from typing import Callable, Optional

from ...ir import DataType, Expr, Node, Program
from ..builder import elementwise_program, out_decl, ro_decl
from ..registry import OpParamError


def check_unique_names(op_id: str, *names: str) -> None:
    """OpParamError when two buffers of one op share a name."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise OpParamError(f"{op_id}: buffer name `{name}` is used twice (NameCollision). "
                               "Fix: give every input and output buffer its own name.")
        seen.add(name)


def u32_elementwise_unary(op_id: str, input: str, out: str, size: int, f: Callable[[Expr], Expr]) -> Program:
    """``out[idx] = f(input[idx])`` over ``size`` u32 lanes."""
    check_unique_names(op_id, input, out)
    idx, u32 = Expr.var("idx"), DataType.U32
    return elementwise_program(op_id, [ro_decl(input, 0, size, u32), out_decl(out, 1, size, u32)], size,
                               [Node.store(out, idx, f(Expr.load(input, idx)))], index="idx")


def u32_elementwise_binary(op_id: str, a: str, b: str, out: str, size: int,
                           f: Callable[[Expr, Expr], Expr]) -> Program:
    """``out[idx] = f(a[idx], b[idx])`` over ``size`` u32 lanes."""
    check_unique_names(op_id, a, b, out)
    idx, u32 = Expr.var("idx"), DataType.U32
    return elementwise_program(op_id, [ro_decl(a, 0, size, u32), ro_decl(b, 1, size, u32), out_decl(out, 2, size, u32)],
                               size, [Node.store(out, idx, f(Expr.load(a, idx), Expr.load(b, idx)))], index="idx")


def f32_elementwise_mul(op_id: str, input: str, rhs: Optional[str], output: str, n: int) -> Program:
    """``output[i] = input[i] * rhs[i]``; with ``rhs=None`` the right operand is ``input[i]`` again."""
    i = Expr.var("i")
    lhs_value = Expr.load(input, i)
    buffers = [ro_decl(input, 0, n)]
    if rhs is None:
        rhs_value = lhs_value
    else:
        rhs_value = Expr.load(rhs, i)
        buffers.append(ro_decl(rhs, 1, n))
    buffers.append(out_decl(output, len(buffers), n))
    return elementwise_program(op_id, buffers, n, [Node.store(output, i, Expr.mul(lhs_value, rhs_value))])
