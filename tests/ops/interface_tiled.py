"""Interface rows (vyre builder buffers and workgroup at the registered size) of the cooperative
tiled GEMM ports; tests/ops/test_registry.py merges them into its INTERFACE table. None of them
has an f32 result, so there are no explicit ULP windows.

Registered sizes: m = k = n = 2 (matmul) and in_dim = out_dim = 4 (linear), tile 2, default
[16,16,1] tile shape -> flat workgroup [256,1,1], a-tile 16*2, b-tile 2*16, output padded to one
16x16 tile (256 words, read back as the logical 4)."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO = A.ReadOnly
OUT, WG = "out", "wg"

_TILES = [("matmul_a_tile", 0, WG, T.U32, 32), ("matmul_b_tile", 0, WG, T.U32, 32)]

INTERFACE = {
    "vyre-libs::math::matmul_tiled": ((256, 1, 1), [
        ("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), *_TILES, ("out", 2, OUT, T.U32, 256)]),
    "vyre-libs::math::matmul_bias_tiled": ((256, 1, 1), [
        ("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), ("bias", 2, RO, T.U32, 2), *_TILES,
        ("out", 3, OUT, T.U32, 256)]),
    "vyre-libs::nn::linear_tiled": ((256, 1, 1), [
        ("x", 0, RO, T.U32, 4), ("w", 1, RO, T.U32, 16), ("b", 2, RO, T.U32, 4), *_TILES,
        ("out", 3, OUT, T.U32, 256)]),
}


def merge(interface: dict, explicit_ulp: dict) -> None:
    interface.update(INTERFACE)
