"""vyre's builder interface of every registered op, keyed by op id: the workgroup, then
(name, binding, access, dtype, count) per buffer in declaration order, at the registered size.
OUT = BufferDecl::output, WG = workgroup memory (binding unused). Also, per op id: vyre's explicit
ULP windows, Region generators that are not the op id, and child Regions.

Sections follow vyre_vk/ops (as tests/ops/oracles does); tests/ops/test_registry.py checks each
registered op against its row.
"""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
OUT, WG = "out", "wg"

# vyre-harness/src/lib.rs explicit_tolerance_for_id (ids this package registers)
VYRE_EXPLICIT_ULP = {
    "vyre-libs::nn::layer_norm": 1, "vyre-libs::nn::silu": 1, "vyre-libs::nn::logit_softcap": 2,
    "vyre-libs::nn::rms_norm": 2, "vyre-libs::nn::rms_norm_linear": 2, "vyre-libs::nn::softmax": 1,
    "vyre-libs::nn::attention": 4, "vyre-libs::nn::gqa_attention": 4, "vyre-libs::optim::newton_schulz_5step": 64,
    "vyre-libs::optim::ema_apply": 1, "vyre-libs::optim::muoneq_r": 8,
    "vyre-libs::math::fft::fft_convolve_circular_complex": 4,
}

_P = "vyre-primitives::math::quantized::"
_Q = "vyre-libs::quant::"
# Region generators that differ from the op id. vyre registers the 1x1x1 matmul_bias program under
# its own id (its Region keeps matmul_bias's name); vyre-libs' int4 wrappers return the
# vyre-primitives programs unchanged, so each Region carries the primitive's id (vyre's own tests
# assert this).
GENERATOR = {
    "vyre-libs::math::matmul_bias::scalar": "vyre-libs::math::matmul_bias",
    **{_Q + op: _P + prim for op, prim in (
        ("int4_dot_i32", "i4x8_dot_i32"), ("int4_dot_f32_scaled", "i4x8_dot_f32_scaled"),
        ("int4_matvec_f32_scaled", "i4x8_matvec_f32_scaled"),
        ("int4_batched_matvec_f32_scaled", "i4x8_batched_matvec_f32_scaled"),
        ("int4_batched_matmul_f32_scaled", "i4x8_batched_matmul_f32_scaled"),
        ("int4_batched_matmul_top1_f32_scaled", "i4x8_batched_matmul_top1_f32_scaled"))},
}

# Child Regions (generator, source_region) under each op's own Region, as vyre builds them.
CHILD_REGIONS = {
    # vyre wraps the superblock walk in a child named after path_reconstruct (kept as upstream).
    "vyre-libs::math::succinct::rank1_superblocks": ("vyre-primitives::graph::path_reconstruct",
                                                     "vyre-libs::math::succinct::rank1_superblocks"),
    # tag_program over the vyre-primitives select1_query program.
    "vyre-libs::math::succinct::select1_query": ("vyre-primitives::bitset::select1_query",
                                                 "vyre-libs::math::succinct::select1_query"),
}


def _f32(*names_counts, wg=(64, 1, 1)):
    """f32 inputs at bindings 0.. then one f32 output: ("name", count) each, the output last."""
    *ins, (out, n) = names_counts
    return wg, [(name, b, RO, T.F32, c) for b, (name, c) in enumerate(ins)] + [(out, len(ins), OUT, T.F32, n)]


_UNARY_F32 = _f32(("input", 4), ("output", 4))
_UNARY_BACKWARD = _f32(("input", 4), ("grad_out", 4), ("grad_in", 4))
_FUSED_LINEAR = _f32(("x", 4), ("w", 16), ("b", 4), ("out", 4))
_MUON = ((64, 1, 1), [("params", 0, RO, T.F32, 2), ("grads", 1, RO, T.F32, 2), ("momentum", 2, RW, T.F32, 2),
                      ("output", 3, OUT, T.F32, 2)])

INTERFACE = {
    # ------------------------------------------------------------ nn/activation
    "vyre-libs::nn::relu": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("output", 1, OUT, T.U32, 4)]),
    "vyre-libs::nn::leaky_relu_sq": _UNARY_F32,
    "vyre-libs::nn::silu": _UNARY_F32,
    "vyre-libs::nn::gelu": _UNARY_F32,
    "vyre-libs::nn::logit_softcap": _UNARY_F32,
    "vyre-libs::nn::skip_gate": _f32(("gate", 2), ("branch", 2), ("skip", 2), ("output", 2)),
    "vyre-libs::nn::swiglu": _f32(("gate", 4), ("up", 4), ("output", 4)),
    "vyre-libs::nn::embedding": ((64, 1, 1), [("table", 0, RO, T.F32, 0), ("tokens", 1, RO, T.U32, 2),
                                              ("output", 2, OUT, T.F32, 6)]),
    "vyre-libs::nn::cross_entropy": ((256, 1, 1), [
        ("logits", 0, RO, T.F32, 8), ("targets", 1, RO, T.U32, 2), ("ce_scratch", 0, WG, T.F32, 256),
        ("ce_max_logit", 0, WG, T.F32, 1), ("ce_target_logit", 0, WG, T.F32, 1), ("loss", 2, OUT, T.F32, 512)]),
    "vyre-libs::nn::parallel_residual_block": _f32(("x", 4), ("attn", 4), ("mlp", 4), ("out", 4)),
    "vyre-libs::nn::mlp_4x_leaky_sq": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 2), ("w1", 1, RO, T.F32, 8), ("b1", 2, RO, T.F32, 4), ("w2", 3, RO, T.F32, 8),
        ("b2", 4, RO, T.F32, 2), ("out", 5, OUT, T.F32, 2), ("__mlp_4x_leaky_sq_hidden", 0, WG, T.F32, 4)]),
    "vyre-libs::nn::mlp_4x_leaky_sq::hidden_projection": _f32(
        ("x", 2), ("w1", 8), ("b1", 4), ("__mlp_4x_leaky_sq_hidden", 4), wg=(256, 1, 1)),
    "vyre-libs::nn::mlp_4x_leaky_sq::output_projection": _f32(
        ("w2", 8), ("b2", 2), ("__mlp_4x_leaky_sq_hidden", 4), ("out", 2), wg=(256, 1, 1)),
    # ------------------------------------------------------------ nn/backward
    "vyre-libs::nn::mlp_backward": _f32(("x", 2), ("w1", 4), ("b1", 2), ("w2", 4), ("grad_out", 2), ("grad_x", 2)),
    "vyre-libs::nn::leaky_relu_sq_backward": _UNARY_BACKWARD,
    "vyre-libs::nn::logit_softcap_backward": _UNARY_BACKWARD,
    "vyre-libs::nn::skip_gate_backward": _f32(("gate", 2), ("branch", 2), ("skip", 2), ("grad_out", 2),
                                              ("grad_gate", 2)),
    "vyre-libs::nn::qk_gain_backward": _f32(("gain", 2), ("grad_out", 4), ("grad_q", 4)),
    "vyre-libs::nn::ln_scale_backward": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("scale", 1, RO, T.F32, 4), ("grad_out", 2, RO, T.F32, 4),
        ("grad_x", 3, OUT, T.F32, 4), ("grad_scale", 4, RW, T.F32, 4)]),
    "vyre-libs::nn::residual_block_backward": ((64, 1, 1), [
        ("grad_out", 0, RO, T.F32, 4), ("grad_x", 1, OUT, T.F32, 4), ("grad_attn", 2, RW, T.F32, 4),
        ("grad_mlp", 3, RW, T.F32, 4)]),
    "vyre-libs::nn::partial_rope_backward": _f32(("grad_out", 4), ("cos", 1), ("sin", 1), ("grad_in", 4)),
    # ------------------------------------------------------------ nn/linear
    "vyre-libs::nn::linear_relu": _FUSED_LINEAR,
    "vyre-libs::nn::linear_silu": _FUSED_LINEAR,
    "vyre-libs::nn::rms_norm_linear": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("w", 1, RO, T.F32, 16), ("b", 2, RO, T.F32, 4),
        ("inv_rms", 0, WG, T.F32, 1), ("out", 4, OUT, T.F32, 4)]),
    "vyre-libs::nn::linear": ((256, 1, 1), [
        ("x", 0, RO, T.U32, 4), ("w", 1, RO, T.U32, 16), ("b", 2, RO, T.U32, 4), ("out", 3, OUT, T.U32, 4)]),
    # tile 2, default [16,16,1] tile shape -> flat workgroup [256,1,1], a-tile 16*2, b-tile 2*16,
    # output padded to one 16x16 tile (256 words, read back as the logical 4); as the tiled matmuls
    "vyre-libs::nn::linear_tiled": ((256, 1, 1), [
        ("x", 0, RO, T.U32, 4), ("w", 1, RO, T.U32, 16), ("b", 2, RO, T.U32, 4),
        ("matmul_a_tile", 0, WG, T.U32, 32), ("matmul_b_tile", 0, WG, T.U32, 32), ("out", 3, OUT, T.U32, 256)]),
    "vyre-libs::nn::linear_4bit": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 8), ("w", 1, RO, T.U32, 4), ("b", 2, RO, T.F32, 4), ("out", 3, OUT, T.F32, 4)]),
    # linear_4bit_affine_grouped("x", "w", "scale", "zp", "b", "out", 8, 2, 4): 1 group of 8 outputs
    # -> out padded to 256 elements (bytes cut to 2 outputs). Subgroup collectives, no explicit ULP.
    "vyre-libs::nn::linear_4bit_affine_grouped": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 8), ("w", 1, RO, T.U32, 2), ("scale", 2, RO, T.F32, 4), ("zp", 3, RO, T.U32, 4),
        ("b", 4, RO, T.F32, 2), ("out", 5, OUT, T.F32, 256)]),
    # ------------------------------------------------------------ nn/norm
    "vyre-libs::nn::rms_norm": ((4, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("rms_scratch", 0, WG, T.F32, 4), ("rms_scale", 0, WG, T.F32, 1),
        ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::layer_norm": ((4, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("ln_sum_scratch", 0, WG, T.F32, 4), ("ln_sq_scratch", 0, WG, T.F32, 4),
        ("ln_stats", 0, WG, T.F32, 2), ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::layerwise_ln_scale": _f32(("input", 4), ("scale", 4), ("output", 4)),
    # ------------------------------------------------------------ nn/attention
    "vyre-libs::nn::qk_gain": ((64, 1, 1), [
        ("q_in", 0, RO, T.F32, 4), ("q_out", 1, OUT, T.F32, 4), ("gain", 2, RO, T.F32, 2)]),
    "vyre-libs::nn::partial_rope": _f32(("input", 8), ("cos", 2), ("sin", 2), ("output", 8)),
    "vyre-libs::nn::softmax": ((256, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("softmax_scratch", 0, WG, T.F32, 256), ("softmax_max", 0, WG, T.F32, 1),
        ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::gqa_attention": _f32(("q", 8), ("k", 4), ("v", 4), ("out", 8)),
    "vyre-libs::nn::attention": _f32(("q", 8), ("k", 8), ("v", 8), ("out", 8), wg=(1, 1, 1)),
    "vyre-libs::nn::flash_attention": ((128, 1, 1), [
        ("q", 0, RO, T.F32, 9), ("k", 1, RO, T.F32, 9), ("v", 2, RO, T.F32, 9), ("flash_o", 0, WG, T.F32, 128),
        ("out", 3, OUT, T.F32, 9)]),
    "vyre-libs::nn::attention::quest_paging": ((1, 1, 1), [
        ("q", 0, RO, T.F32, 2), ("meta", 1, RO, T.F32, 8), ("scores", 2, RW, T.F32, 4), ("io", 3, RW, T.U32, 4)]),
    "vyre-libs::nn::attention::turboquant": ((1, 1, 1), [
        ("q", 0, RO, T.F32, 2), ("kp", 1, RO, T.U32, 1), ("vp", 2, RO, T.U32, 1), ("out", 3, RW, T.F32, 2)]),
    # ------------------------------------------------------------ nn/moe
    "vyre-libs::nn::top_k": ((1, 1, 1), [
        ("input", 0, RO, T.F32, 8), ("output", 1, OUT, T.U32, 2), ("best_vals", 2, RW, T.F32, 2),
        ("best_idxs", 3, RW, T.U32, 2)]),
    "vyre-libs::nn::softmax_top_k": ((1, 1, 1), [
        ("scores", 0, RO, T.F32, 8), ("indices", 1, OUT, T.U32, 2), ("weights", 2, RW, T.F32, 2),
        ("best_vals", 3, RW, T.F32, 2), ("best_idxs", 4, RW, T.U32, 2)]),
    "vyre-libs::nn::moe_gate": ((1, 1, 1), [
        ("scores", 0, RO, T.F32, 8), ("indices", 1, RW, T.U32, 2), ("weights", 2, OUT, T.F32, 2),
        ("__moe_gate_scores_scratch", 0, WG, T.F32, 8), ("__moe_gate_stats", 0, WG, T.F32, 2)]),
    "vyre-libs::nn::moe_gate::softmax_stats": ((1, 1, 1), [
        ("scores", 0, RO, T.F32, 8), ("__moe_gate_scores_scratch", 1, RW, T.F32, 8),
        ("__moe_gate_stats", 2, RW, T.F32, 2)]),
    "vyre-libs::nn::moe_gate::weight_write": ((1, 1, 1), [
        ("scores", 0, RO, T.F32, 8), ("indices", 1, RO, T.U32, 2), ("__moe_gate_stats", 2, RO, T.F32, 2),
        ("weights", 3, OUT, T.F32, 2)]),
    # ------------------------------------------------------------ math (broadcast, reduce_variance)
    "vyre-libs::math::broadcast": ((64, 1, 1), [("src", 0, RO, T.U32, 1), ("dst", 1, OUT, T.U32, 4)]),
    "vyre-libs::math::reduce_variance": ((256, 1, 1), [
        ("input", 0, RO, T.F32, 256), ("var_n_scratch", 0, WG, T.U32, 256), ("var_m1_scratch", 0, WG, T.F32, 256),
        ("var_m2_scratch", 0, WG, T.F32, 256), ("output", 1, OUT, T.F32, 1)]),
    # ------------------------------------------------------------ math/algebra (u32 results: no explicit ULP)
    **{f"vyre-libs::math::algebra::{op}": ((64, 1, 1), [
        ("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), ("out", 2, OUT, T.U32, 4)])
       for op in ("join", "meet", "minplus_mul")},
    "vyre-libs::math::algebra::sketch_mix": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("out", 1, OUT, T.U32, 4)]),
    # 2x3x2: out_count 4 <= 64 and inner 3 <= 64, so vyre's unrolled single-invocation program.
    "vyre-libs::math::algebra::bool_semiring_matmul": ((1, 1, 1), [
        ("a", 0, RO, T.U32, 6), ("b", 1, RO, T.U32, 6), ("out", 2, OUT, T.U32, 4)]),
    # ------------------------------------------------------------ math/succinct
    "vyre-libs::math::succinct::rank1_superblocks": ((1, 1, 1), [
        ("bits", 0, RO, T.U32, 4), ("superblocks", 1, OUT, T.U32, 3)]),
    "vyre-libs::math::succinct::rank1_query": ((64, 1, 1), [
        ("bits", 0, RO, T.U32, 4), ("superblocks", 1, RO, T.U32, 3), ("queries", 2, RO, T.U32, 5),
        ("out", 3, OUT, T.U32, 5)]),
    "vyre-libs::math::succinct::select1_query": ((64, 1, 1), [
        ("bits", 0, RO, T.U32, 4), ("queries", 1, RO, T.U32, 5), ("out", 2, OUT, T.U32, 5)]),
    # ------------------------------------------------------------ math/atomic (one invocation walks the values)
    **{f"vyre-libs::math::atomic::atomic_{op}_u32": ((1, 1, 1), [
        ("values", 0, RO, T.U32, 4), ("state", 1, RW, T.U32, 1), ("trace", 2, OUT, T.U32, 4)])
       for op in ("add", "and", "exchange", "max", "min", "or", "xor")},
    "vyre-libs::math::atomic::atomic_compare_exchange_u32": ((1, 1, 1), [
        ("expected", 0, RO, T.U32, 4), ("desired", 1, RO, T.U32, 4), ("state", 2, RW, T.U32, 1),
        ("trace", 3, OUT, T.U32, 4)]),
    "vyre-libs::math::atomic::lru_update_u32": ((1, 1, 1), [("buffer", 0, RW, T.U32, 1)]),
    # ------------------------------------------------------------ math/linalg
    "vyre-libs::math::dot": ((256, 1, 1), [("lhs", 0, RO, T.U32, 256), ("rhs", 1, RO, T.U32, 256),
                                           ("dot_scratch", 0, WG, T.U32, 256), ("out", 2, OUT, T.U32, 1)]),
    "vyre-libs::math::matmul": ((256, 1, 1), [("a", 0, RO, T.U32, 16), ("b", 1, RO, T.U32, 16),
                                              ("out", 2, OUT, T.U32, 16)]),
    **{op: ((256, 1, 1), [("a", 0, RO, T.U32, c), ("b", 1, RO, T.U32, c), ("bias", 2, RO, T.U32, bias),
                          ("out", 3, OUT, T.U32, c)])
       for op, c, bias in (("vyre-libs::math::matmul_bias", 4, 2), ("vyre-libs::math::matmul_bias::scalar", 1, 1))},
    # m = k = n = 2, tile 2: as nn::linear_tiled
    "vyre-libs::math::matmul_tiled": ((256, 1, 1), [
        ("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), ("matmul_a_tile", 0, WG, T.U32, 32),
        ("matmul_b_tile", 0, WG, T.U32, 32), ("out", 2, OUT, T.U32, 256)]),
    "vyre-libs::math::matmul_bias_tiled": ((256, 1, 1), [
        ("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), ("bias", 2, RO, T.U32, 2), ("matmul_a_tile", 0, WG, T.U32, 32),
        ("matmul_b_tile", 0, WG, T.U32, 32), ("out", 3, OUT, T.U32, 256)]),
    "vyre-libs::math::linalg::matmul_strassen_2x2": _f32(("a", 4), ("b", 4), ("c", 4), wg=(1, 1, 1)),
    # ------------------------------------------------------------ nn/optim
    "vyre-libs::optim::adamw_step": ((64, 1, 1), [("params", 0, RW, T.F32, 2), ("grads", 1, RO, T.F32, 2),
                                                  ("m", 2, RW, T.F32, 2), ("v", 3, RW, T.F32, 2)]),
    "vyre-libs::optim::ema_apply": ((64, 1, 1), [("ema", 0, RW, T.F32, 4), ("theta", 1, RO, T.F32, 4)]),
    "vyre-libs::optim::muon_update": _MUON,
    "vyre-libs::optim::muoneq_r": ((64, 1, 1), [(n, b, a, t, 4) for n, b, a, t, _ in _MUON[1]]),
    "vyre-libs::optim::newton_schulz_5step": _f32(("mat", 4), ("output", 4)),
    # ------------------------------------------------------------ nn/quant
    "vyre-libs::quant::byte_shuffle": ((64, 1, 1), [("input", 0, RO, T.U32, 6), ("output", 1, OUT, T.U32, 6)]),
    "vyre-libs::quant::gptq_round": _f32(("input", 4), ("scale", 4), ("output", 4)),
    "vyre-libs::quant::gptq_sdclip": _f32(("input", 4), ("output", 4)),
    "vyre-libs::quant::int6_unpack": ((64, 1, 1), [("packed", 0, RO, T.U32, 4), ("scale", 1, RO, T.F32, 1),
                                                   ("zero", 2, RO, T.F32, 1), ("output", 3, OUT, T.F32, 4)]),
    "vyre-libs::quant::int8_unpack": ((64, 1, 1), [("packed", 0, RO, T.U32, 4), ("scales", 1, RO, T.F32, 2),
                                                   ("output", 2, OUT, T.F32, 4)]),
    **{_Q + op: ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("output", 1, OUT, T.U32, 4)])
       for op in ("int6_pack", "int8_pack")},
    _Q + "int4_dot_i32": ((1, 1, 1), [("lhs", 0, RO, T.U32, 1), ("rhs", 1, RO, T.U32, 1), ("out", 2, OUT, T.I32, 1)]),
    _Q + "int4_dot_f32_scaled": ((1, 1, 1), [
        ("lhs", 0, RO, T.U32, 1), ("rhs", 1, RO, T.U32, 1), ("lhs_scale", 2, RO, T.F32, 1),
        ("rhs_scale", 3, RO, T.F32, 1), ("out", 4, OUT, T.F32, 1)]),
    _Q + "int4_matvec_f32_scaled": ((64, 1, 1), [
        ("weights", 0, RO, T.U32, 2), ("x", 1, RO, T.F32, 8), ("scales", 2, RO, T.F32, 2), ("out", 3, OUT, T.F32, 2)]),
    _Q + "int4_batched_matvec_f32_scaled": ((64, 1, 1), [
        ("weights", 0, RO, T.U32, 2), ("x", 1, RO, T.F32, 16), ("scales", 2, RO, T.F32, 2),
        ("out", 3, OUT, T.F32, 4)]),
    # top1's out = [scores; f32 indices]
    **{_Q + op: ((64, 1, 1), [("weights", 0, RO, T.U32, 2), ("activations", 1, RO, T.U32, 2),
                              ("row_scales", 2, RO, T.F32, 2), ("batch_scales", 3, RO, T.F32, 2),
                              ("out", 4, OUT, T.F32, 4)])
       for op in ("int4_batched_matmul_f32_scaled", "int4_batched_matmul_top1_f32_scaled")},
    # ------------------------------------------------------------ math/conv, math/fft
    "vyre-libs::math::conv::conv2d_3x3_direct": _f32(("input", 16), ("kernel", 9), ("output", 16)),
    "vyre-libs::math::conv::im2col_3x3": _f32(("input", 16), ("output", 144)),
    "vyre-libs::math::fft::fft4_complex": _f32(("input", 8), ("output", 8), wg=(1, 1, 1)),
    "vyre-libs::math::fft::fft_radix2": _f32(("input", 8), ("output", 8), wg=(1, 1, 1)),
    "vyre-libs::math::fft::pointwise_complex_multiply_conjugate": _f32(
        ("signal_freq", 8), ("kernel_freq", 8), ("product_freq", 8), wg=(1, 1, 1)),
    "vyre-libs::math::fft::scale_conjugate_inverse": _f32(("product_freq", 8), ("output", 8), wg=(1, 1, 1)),
    "vyre-libs::math::fft::fft_convolve_circular_complex": ((1, 1, 1), [
        ("signal", 0, RO, T.F32, 8), ("kernel", 1, RO, T.F32, 8), ("signal_freq", 0, WG, T.F32, 8),
        ("kernel_freq", 0, WG, T.F32, 8), ("product_freq", 0, WG, T.F32, 8), ("output", 2, OUT, T.F32, 8)]),
}

# ------------------------------------------------------------ math (elementwise, reductions, scan), logical,
# substrate, representation (issue 16)
_U32_BINARY = ((64, 1, 1), [("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), ("out", 2, OUT, T.U32, 4)])
_BITSET_BINARY = ((256, 1, 1), _U32_BINARY[1])   # vyre-primitives' bitset word programs, wrapped
INTERFACE.update({
    "vyre-libs::math::avg_floor": _U32_BINARY,
    "vyre-libs::math::wrapping_neg": ((64, 1, 1), [("a", 0, RO, T.U32, 4), ("out", 1, OUT, T.U32, 4)]),
    "vyre-libs::math::clamp_u32": ((64, 1, 1), [
        ("input", 0, RO, T.U32, 4), ("lo", 1, RO, T.U32, 4), ("hi", 2, RO, T.U32, 4), ("out", 3, OUT, T.U32, 4)]),
    **{f"vyre-libs::math::{op}": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("out", 1, OUT, T.U32, 4)])
       for op in ("lzcnt_u32", "tzcnt_u32")},
    "vyre-libs::math::square": _UNARY_F32,
    "vyre-libs::math::reduce_mean": ((256, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("mean_scratch", 0, WG, T.F32, 256), ("output", 1, OUT, T.F32, 1)]),
    "vyre-libs::math::weighted_sum_fma_f32": _f32(("weights", 4), ("values", 4), ("output", 1), wg=(1, 1, 1)),
    # n = 4: one workgroup of next_pow2(4) lanes, double-buffered scan arrays of that size
    "vyre-libs::math::scan_prefix_sum": ((4, 1, 1), [
        ("input", 0, RO, T.U32, 4), ("output", 1, OUT, T.U32, 4), ("__output_scan_a", 0, WG, T.U32, 4),
        ("__output_scan_b", 0, WG, T.U32, 4)]),
    "vyre-libs::logical::and": _BITSET_BINARY,
    "vyre-libs::logical::or": _BITSET_BINARY,
    "vyre-libs::logical::xor": _BITSET_BINARY,
    "vyre-libs::logical::nand": _U32_BINARY,
    "vyre-libs::logical::nor": _U32_BINARY,
    "vyre-libs::substrate::indexed_map": ((4, 1, 1), [("input", 0, RO, T.U32, 4), ("out", 1, OUT, T.U32, 4)]),
    "vyre-libs::substrate::strided_accumulate": ((4, 1, 1), [
        ("values", 0, RO, T.U32, 4), ("scratch", 0, WG, T.U32, 4), ("out", 1, OUT, T.U32, 1)]),
    "vyre-libs::representation::unpack_4bit_f32": ((64, 1, 1), [
        ("input", 0, RO, T.U32, 2), ("output", 1, OUT, T.F32, 16)]),
})
CHILD_REGIONS.update({
    **{f"vyre-libs::logical::{op}": (f"vyre-primitives::bitset::{op}", f"vyre-libs::logical::{op}")
       for op in ("and", "or", "xor")},
    # build_indexed_map nests its child under the op's Region, here the skeleton's own id
    "vyre-libs::substrate::indexed_map": ("vyre-libs::substrate::indexed_map", "vyre-libs::substrate::indexed_map"),
})
# vyre's OpEntry category where it is not "math" for vyre-libs::math::* and "nn" otherwise (None: unset)
CATEGORY = {
    **{f"vyre-libs::logical::{op}": None for op in ("and", "nand", "nor", "or", "xor")},
    "vyre-libs::substrate::indexed_map": None, "vyre-libs::substrate::strided_accumulate": None,
    "vyre-libs::representation::unpack_4bit_f32": None,
}

# ------------------------------------------------------------ hash, decode (issue 16): vyre's family-scoped names
_H = "vyre-libs::hash::"
_D = "vyre-libs::decode::"


def _hash_row(family, n, out_words):
    return (1, 1, 1), [(f"__vyre_{family}_input", 0, RO, T.U32, n), (f"__vyre_{family}_out", 1, OUT, T.U32, out_words)]


INTERFACE.update({
    _H + "adler32": _hash_row("hash_adler32", 3, 1),
    _H + "crc32": _hash_row("hash_crc32", 3, 1),
    _H + "fnv1a32": _hash_row("hash_fnv1a32", 3, 1),
    _H + "fnv1a64": _hash_row("hash_fnv1a64", 3, 2),
    _H + "multi_hash": _hash_row("hash_multi", 3, 3),
    _H + "blake3_compress": ((1, 1, 1), [
        ("__vyre_hash_blake3_compress_chaining_in", 0, RO, T.U32, 8),
        ("__vyre_hash_blake3_compress_message", 1, RO, T.U32, 16),
        ("__vyre_hash_blake3_compress_params", 2, RO, T.U32, 4),
        ("__vyre_hash_blake3_compress_chaining_out", 3, OUT, T.U32, 8)]),
    _D + "base64": ((64, 1, 1), [
        ("__vyre_decode_base64_input", 0, RO, T.U32, 8), ("__vyre_decode_base64_table", 1, RO, T.U32, 256),
        ("__vyre_decode_base64_decoded", 2, OUT, T.U32, 6), ("__vyre_decode_base64_decoded_len", 3, RW, T.U32, 1)]),
    _D + "hex": ((64, 1, 1), [
        ("__vyre_decode_hex_input", 0, RO, T.U32, 6), ("__vyre_decode_hex_decoded", 1, OUT, T.U32, 3),
        ("__vyre_decode_hex_table", 2, RO, T.U32, 256)]),
    _D + "inflate_stored_block": ((64, 1, 1), [
        ("__vyre_decode_inflate_input", 0, RO, T.U32, 10), ("__vyre_decode_inflate_decoded", 1, OUT, T.U32, 10),
        ("__vyre_decode_inflate_inflated_len", 2, RW, T.U32, 1)]),
    _D + "encodex": ((256, 1, 1), [
        ("__vyre_decode_encodex_input", 0, RO, T.U32, 5), ("__vyre_decode_encodex_histogram", 1, RW, T.U32, 256),
        ("__vyre_decode_encodex_encoding_id", 2, OUT, T.U32, 1)]),
})
CHILD_REGIONS.update({
    **{_H + op: (f"vyre-primitives::hash::{op}", _H + op)
       for op in ("adler32", "crc32", "fnv1a32", "fnv1a64", "multi_hash")},
    _D + "base64": ("vyre-primitives::decode::base64_decode", _D + "base64"),
    _D + "hex": ("vyre-primitives::decode::hex_decode", _D + "hex"),
    _D + "inflate_stored_block": ("vyre-primitives::decode::inflate_stored", _D + "inflate_stored_block"),
    _D + "encodex": ("vyre-primitives::text::byte_histogram_256", _D + "encodex"),
})
CATEGORY.update({_H + op: None for op in ("adler32", "blake3_compress", "crc32", "fnv1a32", "fnv1a64", "multi_hash")})
CATEGORY.update({_D + op: None for op in ("base64", "encodex", "hex", "inflate_stored_block")})

# Issue-16 port areas: each helper module defines INTERFACE, CHILD_REGIONS and CATEGORY rows of its ops.
from .interfaces_visual import CATEGORY as _VC, CHILD_REGIONS as _VR, INTERFACE as _VI  # noqa: E402
INTERFACE.update(_VI); CHILD_REGIONS.update(_VR); CATEGORY.update(_VC)
# [visual rows]
from .interfaces_security import (CATEGORY as _SC, CHILD_REGIONS as _SCR, GENERATOR as _SG,  # noqa: E402
                                  INTERFACE as _SI)
INTERFACE.update(_SI); CHILD_REGIONS.update(_SCR); GENERATOR.update(_SG); CATEGORY.update(_SC)
# [security rows]
from .interfaces_matching import CATEGORY as _MC, CHILD_REGIONS as _MR, INTERFACE as _MI  # noqa: E402
INTERFACE.update(_MI); CHILD_REGIONS.update(_MR); CATEGORY.update(_MC)  # noqa: E702
# [matching rows]
from .interfaces_parsing import (CATEGORY as _PC, CHILD_REGIONS as _PR, GENERATOR as _PG,  # noqa: E402
                                 INTERFACE as _PI)
INTERFACE.update(_PI); GENERATOR.update(_PG); CHILD_REGIONS.update(_PR); CATEGORY.update(_PC)
# [parsing rows]
from .interfaces_parsing_py import (CATEGORY as _PYC, CHILD_REGIONS as _PYR,  # noqa: E402
                                    INTERFACE as _PYI)
INTERFACE.update(_PYI); CHILD_REGIONS.update(_PYR); CATEGORY.update(_PYC)  # noqa: E702
# [parsing-py rows]
from .interfaces_parsing_c11 import CATEGORY as _C11C, CHILD_REGIONS as _C11R, INTERFACE as _C11I  # noqa: E402
INTERFACE.update(_C11I); CHILD_REGIONS.update(_C11R); CATEGORY.update(_C11C)  # noqa: E702
# [parsing-c11 rows]
from .interfaces_parsing_sema import (CATEGORY as _SSC, CHILD_REGIONS as _SSR,  # noqa: E402
                                      INTERFACE as _SSI)
INTERFACE.update(_SSI); CHILD_REGIONS.update(_SSR); CATEGORY.update(_SSC)  # noqa: E702
# [parsing-sema rows]
from .interfaces_convergence import (CATEGORY as _CC, CHILD_REGIONS as _CCR,  # noqa: E402
                                     INTERFACE as _CI)
INTERFACE.update(_CI); CHILD_REGIONS.update(_CCR); CATEGORY.update(_CC)
# [convergence rows]
