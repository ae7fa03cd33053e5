"""vyre builder interfaces (workgroup; name, binding, access, dtype, count per buffer) of the ops
ported in ops3, merged into test_registry.INTERFACE; and vyre's explicit ULP windows for them
(vyre-harness/src/lib.rs explicit_tolerance_for_id)."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
OUT, WG = "out", "wg"

MATH_EXPLICIT_ULP = {"vyre-libs::optim::newton_schulz_5step": 64, "vyre-libs::optim::ema_apply": 1,
                     "vyre-libs::optim::muoneq_r": 8, "vyre-libs::math::fft::fft_convolve_circular_complex": 4}

# vyre registers the 1x1x1 matmul_bias program under its own id: its Region keeps matmul_bias's name.
MATH_GENERATOR = {"vyre-libs::math::matmul_bias::scalar": "vyre-libs::math::matmul_bias"}

_SERIAL = ((1, 1, 1), [("values", 0, RO, T.U32, 4), ("state", 1, RW, T.U32, 1), ("trace", 2, OUT, T.U32, 4)])
_MUON = ((64, 1, 1), [("params", 0, RO, T.F32, 2), ("grads", 1, RO, T.F32, 2), ("momentum", 2, RW, T.F32, 2),
                      ("output", 3, OUT, T.F32, 2)])

MATH_INTERFACE = {
    "vyre-libs::math::dot": ((256, 1, 1), [("lhs", 0, RO, T.U32, 256), ("rhs", 1, RO, T.U32, 256),
                                           ("dot_scratch", 0, WG, T.U32, 256), ("out", 2, OUT, T.U32, 1)]),
    "vyre-libs::math::matmul": ((256, 1, 1), [("a", 0, RO, T.U32, 16), ("b", 1, RO, T.U32, 16),
                                              ("out", 2, OUT, T.U32, 16)]),
    "vyre-libs::math::matmul_bias": ((256, 1, 1), [("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4),
                                                   ("bias", 2, RO, T.U32, 2), ("out", 3, OUT, T.U32, 4)]),
    "vyre-libs::math::matmul_bias::scalar": ((256, 1, 1), [("a", 0, RO, T.U32, 1), ("b", 1, RO, T.U32, 1),
                                                           ("bias", 2, RO, T.U32, 1), ("out", 3, OUT, T.U32, 1)]),
    "vyre-libs::math::linalg::matmul_strassen_2x2": ((1, 1, 1), [("a", 0, RO, T.F32, 4), ("b", 1, RO, T.F32, 4),
                                                                 ("c", 2, OUT, T.F32, 4)]),
    "vyre-libs::math::broadcast": ((64, 1, 1), [("src", 0, RO, T.U32, 1), ("dst", 1, OUT, T.U32, 4)]),
    "vyre-libs::math::reduce_variance": ((256, 1, 1), [
        ("input", 0, RO, T.F32, 256), ("var_n_scratch", 0, WG, T.U32, 256), ("var_m1_scratch", 0, WG, T.F32, 256),
        ("var_m2_scratch", 0, WG, T.F32, 256), ("output", 1, OUT, T.F32, 1)]),
    **{f"vyre-libs::math::atomic::atomic_{k}_u32": _SERIAL for k in ("add", "and", "exchange", "max", "min", "or", "xor")},
    "vyre-libs::math::atomic::atomic_compare_exchange_u32": ((1, 1, 1), [
        ("expected", 0, RO, T.U32, 4), ("desired", 1, RO, T.U32, 4), ("state", 2, RW, T.U32, 1),
        ("trace", 3, OUT, T.U32, 4)]),
    "vyre-libs::math::atomic::lru_update_u32": ((1, 1, 1), [("buffer", 0, RW, T.U32, 1)]),
    "vyre-libs::optim::adamw_step": ((64, 1, 1), [("params", 0, RW, T.F32, 2), ("grads", 1, RO, T.F32, 2),
                                                  ("m", 2, RW, T.F32, 2), ("v", 3, RW, T.F32, 2)]),
    "vyre-libs::optim::ema_apply": ((64, 1, 1), [("ema", 0, RW, T.F32, 4), ("theta", 1, RO, T.F32, 4)]),
    "vyre-libs::optim::muon_update": _MUON,
    "vyre-libs::optim::muoneq_r": ((64, 1, 1), [(n, b, a, t, 4) for n, b, a, t, _ in _MUON[1]]),
    "vyre-libs::optim::newton_schulz_5step": ((64, 1, 1), [("mat", 0, RO, T.F32, 4), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::quant::byte_shuffle": ((64, 1, 1), [("input", 0, RO, T.U32, 6), ("output", 1, OUT, T.U32, 6)]),
    "vyre-libs::quant::gptq_round": ((64, 1, 1), [("input", 0, RO, T.F32, 4), ("scale", 1, RO, T.F32, 4),
                                                  ("output", 2, OUT, T.F32, 4)]),
    "vyre-libs::quant::gptq_sdclip": ((64, 1, 1), [("input", 0, RO, T.F32, 4), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::quant::int6_unpack": ((64, 1, 1), [("packed", 0, RO, T.U32, 4), ("scale", 1, RO, T.F32, 1),
                                                   ("zero", 2, RO, T.F32, 1), ("output", 3, OUT, T.F32, 4)]),
    "vyre-libs::quant::int6_pack": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("output", 1, OUT, T.U32, 4)]),
    "vyre-libs::quant::int8_unpack": ((64, 1, 1), [("packed", 0, RO, T.U32, 4), ("scales", 1, RO, T.F32, 2),
                                                   ("output", 2, OUT, T.F32, 4)]),
    "vyre-libs::quant::int8_pack": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("output", 1, OUT, T.U32, 4)]),
    "vyre-libs::math::conv::conv2d_3x3_direct": ((64, 1, 1), [("input", 0, RO, T.F32, 16), ("kernel", 1, RO, T.F32, 9),
                                                              ("output", 2, OUT, T.F32, 16)]),
    "vyre-libs::math::conv::im2col_3x3": ((64, 1, 1), [("input", 0, RO, T.F32, 16), ("output", 1, OUT, T.F32, 144)]),
    "vyre-libs::math::fft::fft4_complex": ((1, 1, 1), [("input", 0, RO, T.F32, 8), ("output", 1, OUT, T.F32, 8)]),
    "vyre-libs::math::fft::fft_radix2": ((1, 1, 1), [("input", 0, RO, T.F32, 8), ("output", 1, OUT, T.F32, 8)]),
    "vyre-libs::math::fft::pointwise_complex_multiply_conjugate": ((1, 1, 1), [
        ("signal_freq", 0, RO, T.F32, 8), ("kernel_freq", 1, RO, T.F32, 8), ("product_freq", 2, OUT, T.F32, 8)]),
    "vyre-libs::math::fft::scale_conjugate_inverse": ((1, 1, 1), [("product_freq", 0, RO, T.F32, 8),
                                                                  ("output", 1, OUT, T.F32, 8)]),
    "vyre-libs::math::fft::fft_convolve_circular_complex": ((1, 1, 1), [
        ("signal", 0, RO, T.F32, 8), ("kernel", 1, RO, T.F32, 8), ("signal_freq", 0, WG, T.F32, 8),
        ("kernel_freq", 0, WG, T.F32, 8), ("product_freq", 0, WG, T.F32, 8), ("output", 2, OUT, T.F32, 8)]),
}
