"""Interface rows of the C11 structure and GNU passes (vyre_vk/ops/parsing/c: extract.py,
call_graph.py, gnu_passes.py, layout.py, classify/), merged into tests/ops/interfaces.py. Rows
are vyre's builders at the registered sizes (buffer names from the harness calls, not the
catalog's auto-extracted parameter names)."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW, OUT, WG = A.ReadOnly, A.ReadWrite, "out", "wg"
_P = "vyre-libs::parsing::"
_WG = (256, 1, 1)


def _records(third, third_count, out, words, n):
    return _WG, [("tok_types", 0, RO, T.U32, n), ("paren_pairs", 1, RO, T.U32, n), (third, 2, RO, T.U32, third_count),
                 (out, 3, OUT, T.U32, words * n), ("out_counts", 4, RW, T.U32, 1)]


INTERFACE = {
    _P + "c11_extract_functions": _records("brace_pairs", 6, "out_functions", 3, 6),
    _P + "c11_extract_calls": _records("functions", 3, "out_calls", 4, 9),
    _P + "c11_build_call_graph": (_WG, [
        ("calls", 0, RO, T.U32, 4), ("fn_hashes", 1, RO, T.U32, 1), ("tok_starts", 2, RO, T.U32, 6),
        ("tok_lens", 3, RO, T.U32, 6), ("haystack", 4, RO, T.U32, 16), ("out_edges", 5, RW, T.U32, 4),
        ("out_counts", 6, RW, T.U32, 1)]),
    _P + "c11_gnu_builtins_pass": (_WG, [("ast", 0, RO, T.U32, 4), ("out_ast", 1, RW, T.U32, 4)]),
    _P + "c11_gnu_inline_asm_pass": (_WG, [("ast", 0, RO, T.U32, 4), ("out_asm", 1, RW, T.U32, 4),
                                           ("out_asm_counts", 2, RW, T.U32, 1)]),
    _P + "c11_compute_alignments": (_WG, [("types", 0, RO, T.U32, 5), ("sizes", 1, RW, T.U32, 5),
                                          ("aligns", 2, RW, T.U32, 5)]),
    _P + "c11_build_vast_nodes_v2": ((1, 1, 1), [
        ("tok_types", 0, RO, T.U32, 9), ("tok_starts", 1, RO, T.U32, 9), ("tok_lens", 2, RO, T.U32, 9),
        ("out_vast_nodes", 3, OUT, T.U32, 90), ("out_count", 4, RW, T.U32, 1), ("__vast_last_child", 0, WG, T.U32, 9),
        ("__vast_stack", 0, WG, T.U32, 9)]),
    _P + "c11_classify_vast_node_kinds": (_WG, [("vast_nodes", 0, RO, T.U32, 90),
                                                ("out_typed_vast_nodes", 1, OUT, T.U32, 90)]),
    _P + "c11_build_cfg_and_gotos": (_WG, [
        ("ssa", 0, RO, T.U32, 5), ("cfg", 1, RW, T.U32, 5), ("labels", 2, RW, T.U32, 5),
        ("goto_labels_keys", 3, RW, T.U32, 4096), ("goto_labels_vals", 4, RW, T.U32, 4096)]),
}
INTERFACE[_P + "c11_build_expression_shape_nodes"] = (_WG, [
    ("raw_vast_nodes", 0, RO, T.U32, 140), ("typed_vast_nodes", 1, RO, T.U32, 140),
    ("out_expr_shape_nodes", 2, OUT, T.U32, 112)])
CHILD_REGIONS = {_P + "c11_build_cfg_and_gotos": ("vyre-primitives::graph::csr_forward_traverse", _P + "c11_build_cfg_and_gotos"),
                 _P + "c11_build_vast_nodes_v2": ("vyre-primitives::parsing::ast_cse_structural_hash",
                                                  _P + "c11_build_vast_nodes_v2")}
CATEGORY = {op: "parsing" for op in INTERFACE}
CATEGORY[_P + "c11_compute_alignments"] = "compiler"
CATEGORY[_P + "c11_build_cfg_and_gotos"] = "compiler"
