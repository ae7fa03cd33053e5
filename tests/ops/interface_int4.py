"""Interface rows (vyre builder buffers and workgroup at the registered size) of the packed INT4
quant ops (vyre-libs/src/nn/quant/int4.rs), and their Region generators: vyre-libs' wrappers
return the vyre-primitives programs unchanged, so each Region carries the primitive's id
(vyre's own tests assert this). tests/ops/test_registry.py merges them into its tables; vyre has
no explicit ULP entry for these ids."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO = A.ReadOnly
OUT = "out"

_P = "vyre-primitives::math::quantized::"
_Q = "vyre-libs::quant::"

GENERATOR = {_Q + "int4_dot_i32": _P + "i4x8_dot_i32",
             _Q + "int4_dot_f32_scaled": _P + "i4x8_dot_f32_scaled",
             _Q + "int4_matvec_f32_scaled": _P + "i4x8_matvec_f32_scaled",
             _Q + "int4_batched_matvec_f32_scaled": _P + "i4x8_batched_matvec_f32_scaled",
             _Q + "int4_batched_matmul_f32_scaled": _P + "i4x8_batched_matmul_f32_scaled",
             _Q + "int4_batched_matmul_top1_f32_scaled": _P + "i4x8_batched_matmul_top1_f32_scaled"}

_MATMUL = [("weights", 0, RO, T.U32, 2), ("activations", 1, RO, T.U32, 2), ("row_scales", 2, RO, T.F32, 2),
           ("batch_scales", 3, RO, T.F32, 2), ("out", 4, OUT, T.F32, 4)]

INTERFACE = {
    _Q + "int4_dot_i32": ((1, 1, 1), [("lhs", 0, RO, T.U32, 1), ("rhs", 1, RO, T.U32, 1), ("out", 2, OUT, T.I32, 1)]),
    _Q + "int4_dot_f32_scaled": ((1, 1, 1), [
        ("lhs", 0, RO, T.U32, 1), ("rhs", 1, RO, T.U32, 1), ("lhs_scale", 2, RO, T.F32, 1),
        ("rhs_scale", 3, RO, T.F32, 1), ("out", 4, OUT, T.F32, 1)]),
    _Q + "int4_matvec_f32_scaled": ((64, 1, 1), [
        ("weights", 0, RO, T.U32, 2), ("x", 1, RO, T.F32, 8), ("scales", 2, RO, T.F32, 2), ("out", 3, OUT, T.F32, 2)]),
    _Q + "int4_batched_matvec_f32_scaled": ((64, 1, 1), [
        ("weights", 0, RO, T.U32, 2), ("x", 1, RO, T.F32, 16), ("scales", 2, RO, T.F32, 2),
        ("out", 3, OUT, T.F32, 4)]),
    _Q + "int4_batched_matmul_f32_scaled": ((64, 1, 1), _MATMUL),
    _Q + "int4_batched_matmul_top1_f32_scaled": ((64, 1, 1), _MATMUL),  # out = [scores; f32 indices]
}


def merge(interface: dict, explicit_ulp: dict, generator: dict) -> None:
    interface.update(INTERFACE)
    generator.update(GENERATOR)
