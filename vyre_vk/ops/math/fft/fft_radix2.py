"""`vyre-libs::math::fft::fft_radix2`: straight-line radix-2 Cooley-Tukey FFT of ``n`` (a power of
two >= 2) complex values, interleaved re/im f32 (port of vyre-libs/src/math/fft/fft_radix2.rs).

1. bit-reversed copy ``output[2i], output[2i+1] = input[2j], input[2j+1]``, ``j = bitrev(i)``;
2. stages ``s = 1..log2 n`` (``m = 2^s``), blocks, ``k < m/2``: Lets ``u_re_s{s}_b{b}_k{k}``...
   load ``u``, ``l``; ``t = (wr*lr - wi*li, wr*li + wi*lr)``; store ``u + t`` and ``u - t``.
The twiddles are host f32: ``theta = f32(k) * (f32(-2) * f32(pi) / f32(m))``, ``cos``/``sin`` of
that f32 rounded to f32 (vyre: Rust ``f32::cos``/``sin``). Workgroup [1,1,1]; entry op id set.

Example::

    >>> fft_radix2_complex("input", "output", 4).entry_op_id
    'vyre-libs::math::fft::fft_radix2'
"""
from __future__ import annotations

import math

import numpy as np

from ....ir import Expr, Node, Program, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_case
from ...wire import pack_f32_slice
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::fft::fft_radix2"
# 4 ULP: elementary f32 ops only (vyre's program budget; the twiddles are host constants).
ULP = 4
F = np.float32


def validate_complex_len(n: int, op: str) -> int:
    if n < 2:
        raise OpParamError(f"Fix: {op} requires n >= 2; got n={n}.")
    if n & (n - 1):
        raise OpParamError(f"Fix: {op} requires n a power of two; got n={n}.")
    return 2 * n


def bit_reverse(value: int, bits: int) -> int:
    out = 0
    for _ in range(bits):
        out, value = (out << 1) | (value & 1), value >> 1
    return out


def twiddle(k: int, m: int) -> tuple[float, float]:
    """(cos, sin) of ``k * (-2*pi/m)`` evaluated in f32 as vyre's builder does."""
    step = F(-2.0) * F(math.pi) / F(m)
    theta = float(F(k) * step)
    return float(F(math.cos(theta))), float(F(math.sin(theta)))


def fft_radix2_body(input: str, output: str, n: int) -> list:
    log2n = n.bit_length() - 1
    body = []
    for i in range(n):
        j = bit_reverse(i, log2n)
        body += [Node.store(output, Expr.u32(2 * i), Expr.load(input, Expr.u32(2 * j))),
                 Node.store(output, Expr.u32(2 * i + 1), Expr.load(input, Expr.u32(2 * j + 1)))]
    for s in range(1, log2n + 1):
        m = 1 << s
        half = m // 2
        for block in range(0, n, m):
            for k in range(half):
                wr, wi = twiddle(k, m)
                up, lo = block + k, block + k + half
                sfx = f"_s{s}_b{block}_k{k}"
                v = lambda nm: Expr.var(nm + sfx)  # noqa: E731
                body += [
                    Node.let_bind("u_re" + sfx, Expr.load(output, Expr.u32(2 * up))),
                    Node.let_bind("u_im" + sfx, Expr.load(output, Expr.u32(2 * up + 1))),
                    Node.let_bind("l_re" + sfx, Expr.load(output, Expr.u32(2 * lo))),
                    Node.let_bind("l_im" + sfx, Expr.load(output, Expr.u32(2 * lo + 1))),
                    Node.let_bind("t_re" + sfx, Expr.sub(Expr.mul(Expr.f32(wr), v("l_re")),
                                                         Expr.mul(Expr.f32(wi), v("l_im")))),
                    Node.let_bind("t_im" + sfx, Expr.add(Expr.mul(Expr.f32(wr), v("l_im")),
                                                         Expr.mul(Expr.f32(wi), v("l_re")))),
                    Node.store(output, Expr.u32(2 * up), Expr.add(v("u_re"), v("t_re"))),
                    Node.store(output, Expr.u32(2 * up + 1), Expr.add(v("u_im"), v("t_im"))),
                    Node.store(output, Expr.u32(2 * lo), Expr.sub(v("u_re"), v("t_re"))),
                    Node.store(output, Expr.u32(2 * lo + 1), Expr.sub(v("u_im"), v("t_im"))),
                ]
    return body


def fft_radix2_complex(input: str, output: str, n: int) -> Program:
    elements = validate_complex_len(n, "fft_radix2_complex")
    return Program.wrapped(
        [ro_decl(input, 0, elements), out_decl(output, 1, elements)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, fft_radix2_body(input, output, n))],
    ).with_entry_op_id(OP_ID)


def _build(n: int = 4) -> Program:
    return fft_radix2_complex("input", "output", n)


ENTRY = register_case(OP_ID, _build, [pack_f32_slice([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])],
                      [pack_f32_slice([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])], category="math", ulp=ULP,
                      bench=dict())
