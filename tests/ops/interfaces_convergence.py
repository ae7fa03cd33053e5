"""Interface rows of the fixpoint security ops (vyre_vk/ops/security/fixpoint_*.py), merged into
tests/ops/interfaces.py: vyre's builder interface at the registered size, child Regions, categories."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
P = "vyre-libs::security::"
_WG = (256, 1, 1)


def _graph(n, e, first=0):
    return [(name, first + k, RO, T.U32, c) for k, (name, c) in enumerate(
        (("pg_nodes", n), ("pg_edge_offsets", n + 1), ("pg_edge_targets", e), ("pg_edge_kind_mask", e),
         ("pg_node_tags", n)))]


def _step(e):
    return _WG, [*_graph(4, e), ("fin", 5, RO, T.U32, 1), ("fout", 6, RW, T.U32, 1)]


_HIT = [*_graph(4, 3), ("source", 5, RO, T.U32, 1), ("reach", 6, RW, T.U32, 1)]
INTERFACE = {
    P + "flows_to": _step(3), P + "taint_flow": _step(3), P + "dominator_tree": _step(4),
    P + "bounded_by_comparison": _step(4),
    P + "sanitized_by": (_WG, [("fin", 0, RO, T.U32, 1), ("san", 1, RO, T.U32, 1),
                               ("__sanitized_by_clean__fin", 2, RW, T.U32, 1), *_graph(4, 3, 3),
                               ("fout", 8, RW, T.U32, 1)]),
    P + "flows_to_to_sink": (_WG, [*_HIT, ("sink", 7, RO, T.U32, 1), ("hits", 8, RW, T.U32, 1),
                                   ("out_scalar", 9, RW, T.U32, 1)]),
    P + "taint_pollution": (_WG, [*_HIT, ("label_set", 7, RO, T.U32, 1), ("hits", 8, RW, T.U32, 1),
                                  ("out_scalar", 9, RW, T.U32, 1)]),
    P + "flows_to_with_sanitizer": (_WG, [
        ("source", 0, RO, T.U32, 1), ("sanitizer", 1, RO, T.U32, 1), ("clean", 2, RW, T.U32, 1), *_graph(4, 3, 3),
        ("reach", 8, RW, T.U32, 1), ("alive", 9, RW, T.U32, 1), ("sink", 10, RO, T.U32, 1),
        ("hits", 11, RW, T.U32, 1), ("out_scalar", 12, RW, T.U32, 1)]),
}
# tag_program over the CSR step primitives; the fused flows re-parent vyre's root Region as inline::<op>.
CHILD_REGIONS = {
    **{P + op: ("vyre-primitives::graph::csr_forward_traverse", P + op) for op in ("flows_to", "taint_flow")},
    **{P + op: ("vyre-primitives::graph::csr_backward_traverse", P + op)
       for op in ("dominator_tree", "bounded_by_comparison")},
    **{P + op: (f"inline::{P}{op}", P + op) for op in ("flows_to_to_sink", "taint_pollution",
                                                        "flows_to_with_sanitizer")},
}
GENERATOR: dict = {}
CATEGORY = {op: "security" for op in INTERFACE}
