"""`vyre-libs::math::fft::pointwise_complex_multiply_conjugate`, `...::scale_conjugate_inverse` and
`...::fft_convolve_circular_complex` (port of vyre-libs/src/math/fft/convolution.rs).

- multiply: per bin k (straight-line, n = 4 in the registered program):
  ``p = a*b`` (``ar*br - ai*bi``, ``ar*bi + ai*br``), stores ``(p_re, -p_im)``;
- scale: ``re' = re * (1/n)``, ``im' = (-im) * (1/n)``, each zeroed when ``|.| < 1e-6``;
- convolve: ``Region(op){ fft(signal -> signal_freq), fft(kernel -> kernel_freq), multiply,
  fft(product_freq -> output), scale(output) }`` with the three spectra in workgroup memory
  (the inverse FFT is the forward FFT of the conjugate). Each fft is
  ``Region(fft_radix2, source=fft_radix2){ Region(fft_radix2){ body } }``.
All three: workgroup [1,1,1], entry op id set.

Example::

    >>> [b.name for b in fft_convolve_circular_complex("signal", "kernel", "signal_freq", "kernel_freq",
    ...                                                   "product_freq", "output", 4).buffers]
    ['signal', 'kernel', 'signal_freq', 'kernel_freq', 'product_freq', 'output']
"""
from __future__ import annotations

import numpy as np

from ....ir import BufferDecl, DataType, Expr, Node, Program, wrap, wrap_anonymous
from ...builder import out_decl, ro_decl
from ...registry import register_op
from ...wire import pack_f32_slice
from .fft_radix2 import OP_ID as FFT_OP_ID, fft_radix2_body, validate_complex_len
from vyre_vk.ops.registry import OpParamError

OP_ID = "vyre-libs::math::fft::fft_convolve_circular_complex"
MULTIPLY_OP_ID = "vyre-libs::math::fft::pointwise_complex_multiply_conjugate"
SCALE_OP_ID = "vyre-libs::math::fft::scale_conjugate_inverse"
# 4 ULP: elementary f32 ops only (vyre's program budget; also vyre's explicit 4 for the convolution).
ULP = 4


def multiply_and_conjugate_body(signal_freq: str, kernel_freq: str, product_freq: str, n: int) -> list:
    body = []
    for k in range(n):
        base = 2 * k
        ar, ai, br, bi = (Expr.var(f"{p}_{k}") for p in ("a_re", "a_im", "b_re", "b_im"))
        body += [
            Node.let_bind(f"a_re_{k}", Expr.load(signal_freq, Expr.u32(base))),
            Node.let_bind(f"a_im_{k}", Expr.load(signal_freq, Expr.u32(base + 1))),
            Node.let_bind(f"b_re_{k}", Expr.load(kernel_freq, Expr.u32(base))),
            Node.let_bind(f"b_im_{k}", Expr.load(kernel_freq, Expr.u32(base + 1))),
            Node.let_bind(f"prod_re_{k}", Expr.sub(Expr.mul(ar, br), Expr.mul(ai, bi))),
            Node.let_bind(f"prod_im_{k}", Expr.add(Expr.mul(ar, bi), Expr.mul(ai, br))),
            Node.store(product_freq, Expr.u32(base), Expr.var(f"prod_re_{k}")),
            Node.store(product_freq, Expr.u32(base + 1), Expr.negate(Expr.var(f"prod_im_{k}"))),
        ]
    return body


def scale_conjugate_body_from(input: str, output: str, n: int) -> list:
    inv_n = Expr.f32(float(np.float32(1.0) / np.float32(n)))
    eps = Expr.f32(1.0e-6)
    body = []
    for k in range(n):
        base = 2 * k
        sr, si = Expr.var(f"ifft_scaled_re_{k}"), Expr.var(f"ifft_scaled_im_{k}")
        body += [
            Node.let_bind(f"ifft_re_{k}", Expr.load(input, Expr.u32(base))),
            Node.let_bind(f"ifft_im_{k}", Expr.load(input, Expr.u32(base + 1))),
            Node.let_bind(f"ifft_scaled_re_{k}", Expr.mul(Expr.var(f"ifft_re_{k}"), inv_n)),
            Node.let_bind(f"ifft_scaled_im_{k}", Expr.mul(Expr.negate(Expr.var(f"ifft_im_{k}")), inv_n)),
            Node.store(output, Expr.u32(base), Expr.select(Expr.lt(Expr.abs(sr), eps), Expr.f32(0.0), sr)),
            Node.store(output, Expr.u32(base + 1), Expr.select(Expr.lt(Expr.abs(si), eps), Expr.f32(0.0), si)),
        ]
    return body


def _fft_region(input: str, output: str, n: int):
    return wrap(FFT_OP_ID, [wrap_anonymous(FFT_OP_ID, fft_radix2_body(input, output, n))], FFT_OP_ID)


def fft_convolve_circular_complex(signal: str, kernel: str, signal_freq: str, kernel_freq: str,
                                  product_freq: str, output: str, n: int) -> Program:
    names = [signal, kernel, signal_freq, kernel_freq, product_freq, output]
    for idx, name in enumerate(names):
        if not name:
            raise OpParamError(f"Fix: buffer name at position {idx} must not be empty.")
        if name in names[:idx]:
            raise OpParamError(f"Fix: fft_convolve_circular_complex requires distinct buffer names; `{name}` is reused.")
    elements = validate_complex_len(n, "fft_convolve_circular_complex")
    entry = [
        _fft_region(signal, signal_freq, n),
        _fft_region(kernel, kernel_freq, n),
        wrap(MULTIPLY_OP_ID, multiply_and_conjugate_body(signal_freq, kernel_freq, product_freq, n), MULTIPLY_OP_ID),
        _fft_region(product_freq, output, n),
        wrap(SCALE_OP_ID, scale_conjugate_body_from(output, output, n), SCALE_OP_ID),
    ]
    return Program.wrapped(
        [ro_decl(signal, 0, elements), ro_decl(kernel, 1, elements),
         BufferDecl.workgroup(signal_freq, elements, DataType.F32),
         BufferDecl.workgroup(kernel_freq, elements, DataType.F32),
         BufferDecl.workgroup(product_freq, elements, DataType.F32), out_decl(output, 2, elements)],
        (1, 1, 1),
        [wrap_anonymous(OP_ID, entry)],
    ).with_entry_op_id(OP_ID)


def pointwise_complex_multiply_conjugate_program() -> Program:
    n, elements = 4, 8
    return Program.wrapped(
        [ro_decl("signal_freq", 0, elements), ro_decl("kernel_freq", 1, elements),
         out_decl("product_freq", 2, elements)],
        (1, 1, 1),
        [wrap_anonymous(MULTIPLY_OP_ID, multiply_and_conjugate_body("signal_freq", "kernel_freq", "product_freq", n))],
    ).with_entry_op_id(MULTIPLY_OP_ID)


def scale_conjugate_inverse_program() -> Program:
    n, elements = 4, 8
    return Program.wrapped(
        [ro_decl("product_freq", 0, elements), out_decl("output", 1, elements)],
        (1, 1, 1),
        [wrap_anonymous(SCALE_OP_ID, scale_conjugate_body_from("product_freq", "output", n))],
    ).with_entry_op_id(SCALE_OP_ID)


def _build_convolve(n: int = 4) -> Program:
    return fft_convolve_circular_complex("signal", "kernel", "signal_freq", "kernel_freq", "product_freq", "output", n)


ENTRY_MULTIPLY = register_op(
    MULTIPLY_OP_ID, pointwise_complex_multiply_conjugate_program,
    test_inputs=lambda: [[pack_f32_slice([1.0, 2.0, 3.0, 4.0, -1.0, 0.5, 0.0, -2.0]),
                          pack_f32_slice([5.0, 6.0, -2.0, 1.0, 0.5, -1.0, 3.0, 0.0])]],
    expected_output=lambda: [[pack_f32_slice([-7.0, -16.0, -10.0, 5.0, 0.0, -1.25, 0.0, 6.0])]],
    category="math", ulp=ULP,
    bench=dict(),
)

ENTRY_SCALE = register_op(
    SCALE_OP_ID, scale_conjugate_inverse_program,
    test_inputs=lambda: [[pack_f32_slice([4.0, -8.0, -12.0, 16.0, 0.0, 0.0, 2.0, -4.0])]],
    expected_output=lambda: [[pack_f32_slice([1.0, 2.0, -3.0, -4.0, 0.0, 0.0, 0.5, 1.0])]],
    category="math", ulp=ULP,
    bench=dict(),
)

ENTRY_CONVOLVE = register_op(
    OP_ID, _build_convolve,
    test_inputs=lambda: [[pack_f32_slice([1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0]),
                          pack_f32_slice([1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])]],
    expected_output=lambda: [[pack_f32_slice([5.0, 0.0, 3.0, 0.0, 5.0, 0.0, 7.0, 0.0])]],
    category="math", ulp=ULP,
    bench=dict(),
)
