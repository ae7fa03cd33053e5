"""Interface rows (see interfaces.py) of the issue-16 `matching` area: vyre-libs matching
(aho_corasick, cooperative_dfa, emit_hit, compact_hits), scan::substring_search and the graph AST
walks, at their registered sizes."""
from vyre_vk.ir import BufferAccess as A, DataType as T

RO, RW = A.ReadOnly, A.ReadWrite
OUT = "out"
_M, _G = "vyre-libs::matching::", "vyre-libs::graph::"
_HITS = [(name, k, RO, T.U32, 4) for k, name in enumerate(("rule_id", "file_id", "span_start", "span_len"))]
_WALK = ((1, 1, 1), [("nodes", 0, RO, T.U32, 60), ("out", 1, RW, T.U32, 8)])

INTERFACE = {
    _M + "aho_corasick": ((64, 1, 1), [("haystack", 0, RO, T.U32, 11), ("transitions", 1, RO, T.U32, 5 * 256),
                                       ("accept", 2, RO, T.U32, 5), ("matches", 3, OUT, T.U32, 11)]),
    _M + "cooperative_dfa": ((4, 1, 1), [("input", 0, RO, T.U32, 6), ("transitions", 1, RO, T.U32, 2 * 256),
                                         ("accept_mask", 2, RO, T.U32, 2), ("matches", 3, OUT, T.U32, 6)]),
    _M + "emit_hit": ((64, 1, 1), _HITS + [("out_hits", 4, OUT, T.U32, 16), ("out_cursor", 5, RW, T.U32, 1),
                                           ("hit_buffer_overflow_count", 6, RW, T.U32, 1)]),
    _M + "compact_hits": ((1, 1, 1), [("out_hits", 0, RO, T.U32, 16), ("out_cursor", 1, RO, T.U32, 1),
                                      ("hit_buffer_live_length", 2, OUT, T.U32, 1)]),
    "vyre-libs::scan::substring_search": ((64, 1, 1), [("haystack", 0, RO, T.U32, 8), ("needle", 1, RO, T.U32, 3),
                                                       ("matches", 2, OUT, T.U32, 8)]),
    _G + "ast_walk_preorder": _WALK,
    _G + "ast_walk_postorder": _WALK,
}
# tag_program: the vyre-primitives walk's Region re-parented under the vyre-libs op id.
CHILD_REGIONS = {
    _G + "ast_walk_preorder": ("vyre-primitives::graph::vast_walk_preorder", _G + "ast_walk_preorder"),
    _G + "ast_walk_postorder": ("vyre-primitives::graph::vast_walk_postorder", _G + "ast_walk_postorder"),
}
# vyre's OpEntry category (None: unset)
CATEGORY = {
    _M + "aho_corasick": "scan", _M + "cooperative_dfa": None, _M + "emit_hit": None, _M + "compact_hits": None,
    "vyre-libs::scan::substring_search": "scan", _G + "ast_walk_preorder": "graph", _G + "ast_walk_postorder": "graph",
}
