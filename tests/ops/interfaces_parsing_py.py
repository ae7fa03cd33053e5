"""Interface rows of the Python 3.12 structural extractors (vyre_vk/ops/parsing/python/structure.py,
calls.py: the token rows read-only at bindings 0-2, the record buffers and counters ReadWrite, at
the registered haystack_len 16) and of the AST passes (vyre_vk/ops/parsing/core_ast.py), merged
into tests/ops/interfaces.py. ast_shunting_yard's token and statement buffers have no count (sized
by the data, as vyre declares them); its phase Region sits under an If, so it has no
CHILD_REGIONS row (tests/ops/parsing/test_core_ast.py checks it)."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
_P = "vyre-libs::parsing::"
_WG = (256, 1, 1)
_N = 16
_TOKENS = [("tok_types", 0, RO, T.U32, _N), ("tok_starts", 1, RO, T.U32, _N), ("tok_lens", 2, RO, T.U32, _N)]
_RECORDS = _TOKENS + [("out_records", 3, RW, T.U32, 6 * _N), ("out_counts", 4, RW, T.U32, 1)]
_LINE_INDEX = "vyre-primitives::text::line_index"
_DELIMITER = "vyre-primitives::parsing::core_delimiter_match"

INTERFACE = {
    _P + "python312_extract_structure": (_WG, _RECORDS),
    _P + "python312_extract_imports": (_WG, _RECORDS),
    _P + "python312_extract_with_blocks": (_WG, _RECORDS),
    _P + "python312_extract_decorators": (_WG, _RECORDS),
    _P + "python312_extract_calls": (_WG, _TOKENS + [
        ("out_calls", 3, RW, T.U32, 7 * _N), ("out_call_counts", 4, RW, T.U32, 1),
        ("out_kwargs", 5, RW, T.U32, 2 * _N), ("out_kw_counts", 6, RW, T.U32, 1)]),
}
_SCRATCH = 100 * 64
INTERFACE.update({
    _P + "ast_binding_strength": (_WG, [("tok_types", 0, RO, T.U32, 4), ("out_depths", 1, RO, T.U32, 4),
                                        ("out_strengths", 2, RW, T.U32, 4)]),
    _P + "ast_cfg_blocks": (_WG, [("tok_types", 0, RO, T.U32, 8), ("statements", 1, RO, T.U32, 4),
                                  ("out_block_headers", 2, RW, T.U32, 2)]),
    _P + "ast_shunting_yard": (_WG, [
        ("tok_types", 0, RO, T.U32, 0), ("statements", 1, RO, T.U32, 0), ("out_ast_nodes", 2, RW, T.U32, 4 * 65536),
        ("out_ast_count", 3, RW, T.U32, 1), ("out_statement_roots", 4, RW, T.U32, 100),
        ("scratch_val_stack", 5, RW, T.U32, _SCRATCH), ("scratch_op_stack", 6, RW, T.U32, _SCRATCH)]),
})
# vyre names each extractor's phase Region after a primitive
CHILD_REGIONS = {op: (_DELIMITER if op.endswith(("calls", "decorators")) else _LINE_INDEX, op)
                 for op in INTERFACE if "python312_extract" in op}
CATEGORY = {op: "parsing" for op in INTERFACE}
