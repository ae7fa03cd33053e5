"""Interface rows of vyre_vk/ops/security (merged into tests/ops/interfaces.py): vyre's builder
interface at the registered size, child Regions, generators that are not the op id, categories."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
OUT = "out"
P = "vyre-libs::security::"
_WG = (256, 1, 1)
_AND = ("auth_check_dominates", "buffer_size_check", "lock_dominates", "path_canonical", "sanitizer_dominates",
        "sql_param_bound", "xss_escape")
_AND_NOT = ("format_string_check", "taint_kill", "unchecked_return")
_PAIR = (_WG, [("a", 0, RO, T.U32, 1), ("b", 1, RO, T.U32, 1), ("out", 2, RW, T.U32, 1)])

INTERFACE = {
    **{P + op: _PAIR for op in _AND + _AND_NOT},
    P + "integer_overflow_arith": (_WG, [
        ("arith", 0, RO, T.U32, 1), ("reach", 1, RO, T.U32, 1), ("guards", 2, RO, T.U32, 1),
        ("scratch", 3, RW, T.U32, 1), ("out", 4, OUT, T.U32, 1)]),
    P + "sink_intersection": (_WG, [
        ("a", 0, RO, T.U32, 1), ("b", 1, RO, T.U32, 1), ("scratch", 2, RW, T.U32, 1), ("out", 3, OUT, T.U32, 1)]),
    P + "label_by_family": (_WG, [("node_tags", 0, RO, T.U32, 4), ("out", 1, RW, T.U32, 1)]),
    # parent is sized by the bound data (count 0).
    P + "path_reconstruct": ((1, 1, 1), [
        ("parent", 0, RO, T.U32, 0), ("target", 1, RO, T.U32, 1), ("path_out", 2, RW, T.U32, 4),
        ("path_len", 3, RW, T.U32, 1)]),
    # vyre's fuse_programs order: first-seen names, bindings renumbered; every buffer plain storage.
    P + "aliases_dataflow": (_WG, [
        ("reach_x", 0, RW, T.U32, 1), ("x", 1, RO, T.U32, 1), ("reach_y", 2, RW, T.U32, 1), ("y", 3, RO, T.U32, 1),
        ("hop_x", 4, RW, T.U32, 1), ("hop_y", 5, RW, T.U32, 1), ("pg_nodes", 6, RO, T.U32, 4),
        ("pg_edge_offsets", 7, RO, T.U32, 5), ("pg_edge_targets", 8, RO, T.U32, 3),
        ("pg_edge_kind_mask", 9, RO, T.U32, 3), ("pg_node_tags", 10, RO, T.U32, 4),
        ("x_in_y", 11, RW, T.U32, 1), ("y_in_x", 12, RW, T.U32, 1), ("out", 13, RW, T.U32, 1)]),
}
# tag_program over the vyre-primitives programs.
CHILD_REGIONS = {
    P + "label_by_family": ("vyre-primitives::label::resolve_family", P + "label_by_family"),
    P + "path_reconstruct": ("vyre-primitives::graph::path_reconstruct", P + "path_reconstruct"),
    **{P + op: ("vyre-primitives::bitset::and", P + op) for op in _AND},
    **{P + op: ("vyre-primitives::bitset::and_not", P + op) for op in ("format_string_check", "unchecked_return")},
}
# taint_kill re-parents the primitive's Region without a Region of its own (vyre's taint_kill.rs).
GENERATOR = {P + "taint_kill": "vyre-primitives::bitset::and_not",
             # fuse_programs returns Program::wrapped(..) of Blocks and Barriers: the root Region.
             P + "aliases_dataflow": "vyre.program.root"}
CATEGORY = {op: "security" for op in INTERFACE}
