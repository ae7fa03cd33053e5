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
    "vyre-libs::math::succinct::rank1_superblocks": ((1, 1, 1), [
        ("bits", 0, RO, T.U32, 4), ("superblocks", 1, OUT, T.U32, 3)]),
    "vyre-libs::math::succinct::rank1_query": ((64, 1, 1), [
        ("bits", 0, RO, T.U32, 4), ("superblocks", 1, RO, T.U32, 3), ("queries", 2, RO, T.U32, 5),
        ("out", 3, OUT, T.U32, 5)]),
    "vyre-libs::math::succinct::select1_query": ((64, 1, 1), [
        ("bits", 0, RO, T.U32, 4), ("queries", 1, RO, T.U32, 5), ("out", 2, OUT, T.U32, 5)]),
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


def merge(interface: dict, explicit_ulp: dict) -> None:
    interface.update(INTERFACE)
