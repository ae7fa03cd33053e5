"""Small program builders and input generators shared by the case modules."""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
i_ = Expr.var("i")


def guarded(n: int, body: Sequence[Node], pre: Sequence[Node] = ()) -> list:
    """`let i = gid_x; (pre...); if i < n { body }`."""
    return [Node.let_bind("i", Expr.gid_x()), *pre, Node.if_then(Expr.lt(i_, Expr.u32(n)), list(body))]


def prog(buffers: Sequence[BufferDecl], body: Sequence[Node], wg=(64, 1, 1), op: str = "hostile::p") -> Program:
    return Program.wrapped(list(buffers), tuple(wg), [wrap_anonymous(op, list(body))])


def map1(n: int, value: Callable[[Expr], Expr], t_in=U32, t_out=U32, count_in: Optional[int] = None,
         wg=(64, 1, 1), a: str = "a", out: str = "out", op: str = "hostile::map1") -> Program:
    """`out[i] = value(a[i])` for i < n."""
    bufs = [BufferDecl.read(a, 0, t_in).with_count(n if count_in is None else count_in),
            BufferDecl.output(out, 1, t_out).with_count(n)]
    return prog(bufs, guarded(n, [Node.store(out, i_, value(Expr.load(a, i_)))]), wg, op)


def map2(n: int, value: Callable[[Expr, Expr], Expr], t_a=U32, t_b=U32, t_out=U32, wg=(64, 1, 1),
         op: str = "hostile::map2") -> Program:
    """`out[i] = value(a[i], b[i])` for i < n."""
    bufs = [BufferDecl.read("a", 0, t_a).with_count(n), BufferDecl.read("b", 1, t_b).with_count(n),
            BufferDecl.output("out", 2, t_out).with_count(n)]
    return prog(bufs, guarded(n, [Node.store("out", i_, value(Expr.load("a", i_), Expr.load("b", i_)))]), wg, op)


def axpy_u32(n: int = 64, k: int = 3, c: int = 1, count_in: Optional[int] = None, op: str = "hostile::axpy") -> Program:
    """`out[i] = a[i] * k + c` (u32): the workhorse of the input and concurrency cases."""
    return map1(n, lambda x: Expr.add(Expr.mul(x, Expr.u32(k)), Expr.u32(c)), count_in=count_in, op=op)


def scale_f32(n: int = 64, s: float = 2.0, op: str = "hostile::scale") -> Program:
    return map1(n, lambda x: Expr.mul(x, Expr.f32(s)), F32, F32, op=op)


def u32s(n: int, seed: int = 0, hi: int = 2**32) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, hi, n, dtype=np.uint64).astype(np.uint32)


def f32s(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def inputs_for(program: Program, seed: int = 0, default_count: int = 64) -> dict:
    """Small random values for every input buffer (u32 < 16 keeps data-driven loops short)."""
    rng = np.random.default_rng(seed)
    out = {}
    for b in program.input_buffers:
        n = b.count or default_count
        if b.element is F32:
            out[b.name] = rng.standard_normal(n).astype(np.float32)
        elif b.element is I32:
            out[b.name] = rng.integers(-8, 8, n).astype(np.int32)
        elif b.element is BOOL:
            out[b.name] = rng.integers(0, 2, n).astype(np.uint32)
        else:
            out[b.name] = rng.integers(0, 16, n).astype(np.uint32)
    return out


# f32 values that break naive lowerings: NaNs (quiet, signalling, negative, payload), infinities,
# subnormals, signed zeros, the extremes and a few ordinary numbers.
SPECIAL_BITS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA5A5A5, 0x7F800000, 0xFF800000, 0x00000001,
                0x807FFFFF, 0x00400000, 0x00000000, 0x80000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000,
                0x3F800000, 0xBFC00000, 0x4B000001, 0x3EFFFFFF]
SPECIALS = np.array(SPECIAL_BITS, np.uint32).view(np.float32)


def specials_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) pair of SPECIALS: the operands of a binary-op case."""
    a = np.repeat(SPECIALS, SPECIALS.size)
    b = np.tile(SPECIALS, SPECIALS.size)
    return a.copy(), b.copy()
