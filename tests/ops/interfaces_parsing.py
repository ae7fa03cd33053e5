"""Interface rows of the parsing ops (vyre_vk/ops/parsing), merged into tests/ops/interfaces.py.

core_delimiter_match's outer Region carries vyre's ``#self-exclusive`` marker (tag_program over a
non-composable primitive); c11_lex_single_pass's outer Region names itself as its source_region
(vyre's ``wrap(OP_ID, .., Some(OP_ID))``): tests/ops/parsing/test_delimiter.py and
test_c_lexer.py check those two shapes, which test_child_regions_are_vyres does not take.
"""
from vyre_vk.ir import BufferAccess as A, DataType as T
from vyre_vk.ops.parsing.c.keyword import C_KEYWORDS

RO, RW, OUT = A.ReadOnly, A.ReadWrite, "out"
_P = "vyre-libs::parsing::"
_WG = (256, 1, 1)


def _tokens(names, n, start=0):
    return [(name, b, RW, T.U32, n) for b, name in enumerate(names, start=start)]


def _keyword_row(haystack_words):
    return _WG, [("tok_types", 0, RW, T.U32, 1024), ("tok_starts", 1, RO, T.U32, 1024),
                 ("tok_lens", 2, RO, T.U32, 1024), ("counts", 3, RO, T.U32, 1),
                 ("haystack", 4, RO, T.U32, haystack_words), ("keyword_map", 5, RO, T.U32, 2 * len(C_KEYWORDS))]


INTERFACE = {
    _P + "bracket_match": (_WG, [("kinds", 0, RO, T.U32, 4), ("stack", 1, RW, T.U32, 4),
                                 ("match_pairs", 2, OUT, T.U32, 4)]),
    _P + "core_delimiter_match": (_WG, [("tok_types", 0, RO, T.U32, 8), ("tok_depths", 1, RW, T.U32, 8)]),
    _P + "c_keyword": _keyword_row(4096),
    _P + "c_keyword_packed_haystack": _keyword_row(1024),
    _P + "c11_lex_digraphs": (_WG, _tokens(("tok_types", "tok_starts", "tok_lens"), 4096)),
    _P + "c_lexer": (_WG, [("haystack", 0, RO, T.U32, 320)]
                     + _tokens(("out_tok_types", "out_tok_starts", "out_tok_lens"), 320, 1)
                     + [("out_counts", 4, RW, T.U32, 1)]),
    _P + "c11_lex_single_pass": (_WG, [("haystack", 0, RO, T.U32, 64)]
                                 + _tokens(("tok_types", "tok_starts", "tok_lens"), 64, 1)
                                 + [("tok_counts", 4, RW, T.U32, 1)]),
    _P + "python312_lexer": (_WG, [("haystack", 0, RO, T.U32, 16)]
                             + _tokens(("tok_types", "tok_starts", "tok_lens"), 16, 1)
                             + [("counts", 4, RW, T.U32, 1)]),
}
GENERATOR = {_P + "core_delimiter_match": _P + "core_delimiter_match#self-exclusive"}
CHILD_REGIONS = {
    _P + "bracket_match": ("vyre-primitives::matching::bracket_match", _P + "bracket_match"),
    _P + "c11_lex_digraphs": ("vyre-primitives::text::utf8_validate", _P + "c11_lex_digraphs"),
    _P + "python312_lexer": ("vyre-primitives::text::line_index", _P + "python312_lexer"),
}
CATEGORY = {op: "parsing" for op in INTERFACE}
