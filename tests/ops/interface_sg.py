"""Interface rows (vyre builder buffers and workgroup at the registered size) of the ops that use
subgroup collectives; tests/ops/test_registry.py merges them into its INTERFACE table. None of
them has an explicit ULP entry in vyre-harness (program budget: 4)."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO = A.ReadOnly
OUT = "out"

INTERFACE = {
    # linear_4bit_affine_grouped("x", "w", "scale", "zp", "b", "out", 8, 2, 4): 1 group of 8 outputs
    # -> out padded to 256 elements (bytes cut to 2 outputs)
    "vyre-libs::nn::linear_4bit_affine_grouped": ((256, 1, 1), [
        ("x", 0, RO, T.F32, 8), ("w", 1, RO, T.U32, 2), ("scale", 2, RO, T.F32, 4), ("zp", 3, RO, T.U32, 4),
        ("b", 4, RO, T.F32, 2), ("out", 5, OUT, T.F32, 256)]),
}


def merge(interface: dict) -> None:
    interface.update(INTERFACE)
