"""Interface rows (vyre builder buffers and workgroup at the registered size) and vyre's explicit
ULP windows for the second batch of nn ops; tests/ops/test_registry.py merges them into its
INTERFACE / VYRE_EXPLICIT_ULP tables."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
OUT, WG = "out", "wg"

# vyre-harness/src/lib.rs explicit_tolerance_for_id
EXPLICIT_ULP = {"vyre-libs::nn::softmax": 1, "vyre-libs::nn::attention": 4, "vyre-libs::nn::gqa_attention": 4}

INTERFACE = {
    "vyre-libs::nn::layerwise_ln_scale": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("scale", 1, RO, T.F32, 4), ("output", 2, OUT, T.F32, 4)]),
    "vyre-libs::nn::swiglu": ((64, 1, 1), [
        ("gate", 0, RO, T.F32, 4), ("up", 1, RO, T.F32, 4), ("output", 2, OUT, T.F32, 4)]),
    "vyre-libs::nn::qk_gain": ((64, 1, 1), [
        ("q_in", 0, RO, T.F32, 4), ("q_out", 1, OUT, T.F32, 4), ("gain", 2, RO, T.F32, 2)]),
    "vyre-libs::nn::partial_rope": ((64, 1, 1), [
        ("input", 0, RO, T.F32, 8), ("cos", 1, RO, T.F32, 2), ("sin", 2, RO, T.F32, 2),
        ("output", 3, OUT, T.F32, 8)]),
    "vyre-libs::nn::linear": ((256, 1, 1), [
        ("x", 0, RO, T.U32, 4), ("w", 1, RO, T.U32, 16), ("b", 2, RO, T.U32, 4), ("out", 3, OUT, T.U32, 4)]),
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
    "vyre-libs::nn::softmax": ((256, 1, 1), [
        ("input", 0, RO, T.F32, 4), ("softmax_scratch", 0, WG, T.F32, 256), ("softmax_max", 0, WG, T.F32, 1),
        ("output", 1, OUT, T.F32, 4)]),
    "vyre-libs::nn::gqa_attention": ((64, 1, 1), [
        ("q", 0, RO, T.F32, 8), ("k", 1, RO, T.F32, 4), ("v", 2, RO, T.F32, 4), ("out", 3, OUT, T.F32, 8)]),
    "vyre-libs::nn::attention": ((1, 1, 1), [
        ("q", 0, RO, T.F32, 8), ("k", 1, RO, T.F32, 8), ("v", 2, RO, T.F32, 8), ("out", 3, OUT, T.F32, 8)]),
    "vyre-libs::nn::flash_attention": ((128, 1, 1), [
        ("q", 0, RO, T.F32, 9), ("k", 1, RO, T.F32, 9), ("v", 2, RO, T.F32, 9), ("flash_o", 0, WG, T.F32, 128),
        ("out", 3, OUT, T.F32, 9)]),
    "vyre-libs::nn::attention::quest_paging": ((1, 1, 1), [
        ("q", 0, RO, T.F32, 2), ("meta", 1, RO, T.F32, 8), ("scores", 2, RW, T.F32, 4), ("io", 3, RW, T.U32, 4)]),
    "vyre-libs::nn::attention::turboquant": ((1, 1, 1), [
        ("q", 0, RO, T.F32, 2), ("kp", 1, RO, T.U32, 1), ("vp", 2, RO, T.U32, 1), ("out", 3, RW, T.F32, 2)]),
    "vyre-libs::nn::linear_4bit": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 8), ("w", 1, RO, T.U32, 4), ("b", 2, RO, T.F32, 4), ("out", 3, OUT, T.F32, 4)]),
}


def merge(interface: dict, explicit_ulp: dict) -> None:
    interface.update(INTERFACE)
    explicit_ulp.update(EXPLICIT_ULP)
