"""Interface rows (vyre builder buffers and workgroup at the registered size) of the
math::algebra and math::succinct ports; tests/ops/test_registry.py merges them into its
INTERFACE table. These ops have integer outputs only, so no explicit ULP windows."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO = A.ReadOnly
OUT = "out"

_BINARY4 = ((64, 1, 1), [("a", 0, RO, T.U32, 4), ("b", 1, RO, T.U32, 4), ("out", 2, OUT, T.U32, 4)])

INTERFACE = {
    "vyre-libs::math::algebra::join": _BINARY4,
    "vyre-libs::math::algebra::meet": _BINARY4,
    "vyre-libs::math::algebra::minplus_mul": _BINARY4,
    "vyre-libs::math::algebra::sketch_mix": ((64, 1, 1), [("input", 0, RO, T.U32, 4), ("out", 1, OUT, T.U32, 4)]),
    # 2x3x2: out_count 4 <= 64 and inner 3 <= 64, so vyre's unrolled single-invocation program.
    "vyre-libs::math::algebra::bool_semiring_matmul": ((1, 1, 1), [
        ("a", 0, RO, T.U32, 6), ("b", 1, RO, T.U32, 6), ("out", 2, OUT, T.U32, 4)]),
}


def merge(interface: dict, explicit_ulp: dict) -> None:
    interface.update(INTERFACE)
