"""Interface rows of vyre_vk/ops/parsing/sema (the C semantic and back-end passes), merged into
tests/ops/interfaces.py."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW, OUT = A.ReadOnly, A.ReadWrite, "out"
_P = "vyre-libs::parsing::"
_WG = (256, 1, 1)
_SEMA = _P + "c_sema_scope"


def _scope_row(tokens, haystack_words):
    return _WG, [("tok_types", 0, RO, T.U32, tokens), ("tok_starts", 1, RO, T.U32, tokens),
                 ("tok_lens", 2, RO, T.U32, tokens), ("haystack", 3, RO, T.U32, haystack_words),
                 ("out_scope_tree", 4, OUT, T.U32, 4 * tokens)]


INTERFACE = {
    _P + "opt_x86_64_register_allocation": (_WG, [("cfg", 0, RO, T.U32, 16), ("regs", 1, RW, T.U32, 16),
                                                  ("thread_block_interference", 2, RW, T.U32, 1)]),
    _P + "opt_stack_layout_generation": (_WG, [("regs", 0, RO, T.U32, 4), ("spills", 1, RW, T.U32, 4),
                                               ("tmp_stack_frame_size", 2, RW, T.U32, 1)]),
    _P + "opt_lower_elf": (_WG, [("ssa", 0, RO, T.U32, 4), ("obj", 1, RW, T.U32, 4096)]),
    _P + "opt_conditional_mask_with_directives": (_WG, [
        ("tok_types", 0, RO, T.U32, 3), ("directive_kinds", 1, RO, T.U32, 3), ("directive_values", 2, RO, T.U32, 3),
        ("out_mask", 3, RW, T.U32, 3)]),
    _P + "opt_dynamic_macro_expansion": (_WG, [
        ("in_tok_types", 0, RO, T.U32, 4), ("macro_keys", 1, RO, T.U32, 4096), ("macro_vals", 2, RO, T.U32, 4096),
        ("macro_sizes", 3, RO, T.U32, 4096), ("out_tok_types", 4, RW, T.U32, 16), ("out_tok_counts", 5, RW, T.U32, 1)]),
    _P + "opt_propagate_type_specifiers": (_WG, [("tok_types", 0, RO, T.U32, 128), ("tok_depths", 1, RO, T.U32, 128),
                                                 ("node_out", 2, OUT, T.U32, 128)]),
    **{_SEMA + phase: _scope_row(14, 16) for phase in ("", ".scope", ".scope.brace", ".scope.function_parameters",
                                                         ".decl", ".identifier_intern")},
    _P + "c::lower::ast_to_pg_nodes": (_WG, [("vast_nodes", 0, RO, T.U32, 230), ("out_pg_nodes", 1, OUT, T.U32, 138)]),
    _P + "c::lower::ast_to_pg_semantic_graph": (_WG, [("vast_nodes", 0, RO, T.U32, 230),
                                                      ("out_pg_nodes", 1, OUT, T.U32, 230),
                                                      ("out_pg_edges", 2, RW, T.U32, 690)]),
}
CHILD_REGIONS = {
    _P + "opt_lower_elf": ("vyre-primitives::decode::rle_segment_lengths", _P + "opt_lower_elf"),
    _P + "opt_conditional_mask_with_directives": ("vyre-primitives::text::line_index",
                                                  _P + "opt_conditional_mask_with_directives"),
    _P + "opt_dynamic_macro_expansion": ("vyre-primitives::bitset::select1_query", _P + "opt_dynamic_macro_expansion"),
    _P + "opt_propagate_type_specifiers": ("vyre-primitives::parsing::ssa_dominance_scan",
                                           _P + "opt_propagate_type_specifiers"),
}
CATEGORY = {op: "parsing" for op in INTERFACE}
CATEGORY.update({_P + op: "compiler" for op in ("opt_x86_64_register_allocation", "opt_stack_layout_generation",
                                                "opt_lower_elf")})
CATEGORY[_P + "c::lower::ast_to_pg_nodes"] = None  # vyre's OpEntry::new sets none
CATEGORY[_P + "c::lower::ast_to_pg_semantic_graph"] = None
