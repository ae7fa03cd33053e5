"""`vyre-libs::math::succinct::{rank1_superblocks, rank1_query, select1_query}`: rank/select
over a packed u32 bitvector (bit ``i`` is bit ``i % 32`` of word ``i / 32``)
(port of vyre-libs/src/math/succinct.rs and vyre-primitives/src/bitset/select.rs).

- ``rank1_superblocks``: one invocation (workgroup [1,1,1], ``if gid.x == 0``) walks the words;
  ``superblocks[j]`` = set bits before word ``j*block_words``, and the last entry (index
  ``ceil(word_count/block_words)``) is the total popcount. Entry:
  ``Region(op_id){ Region("vyre-primitives::graph::path_reconstruct", source=op_id){...} }``
  (vyre names the child after path_reconstruct, not after a rank primitive; kept as upstream).
- ``rank1_query``: per query (workgroup [64,1,1]) the set bits strictly before bit
  ``bit_indices[q]``: ``superblocks[block] + popcount(words block_start..word) +
  popcount(word & ((1 << bit % 32) - 1))``. A bit index past the last word traps
  ("rank-query-out-of-bounds").
- ``select1_query``: per query (workgroup [64,1,1]) the zero-based position of the
  ``k_indices[q]``-th set bit (one-based ``k``): skip whole words by popcount, then clear the
  lowest ``k-1`` set bits of the word and take ``ctz``. ``k == 0`` traps
  ("select-query-zero-rank"), ``k > popcount`` traps ("select-query-rank-out-of-bounds").
  vyre-libs ``tag_program``s the primitive: ``Region(op_id){ Region("vyre-primitives::bitset::
  select1_query", source=op_id){...} }``.

``block_words == 0`` raises ``ValueError`` (vyre's ``SuccinctBuildError::ZeroBlockWords``).

Example::

    >>> p = rank1_superblocks("bits", "superblocks", 4, 2)
    >>> [(b.name, b.binding, b.count) for b in p.buffers], p.entry[0].body[0].generator
    ([('bits', 0, 4), ('superblocks', 1, 3)], 'vyre-primitives::graph::path_reconstruct')
"""
from __future__ import annotations

from ...ir import DataType, Expr, Node, Program, wrap_anonymous, wrap_child
from ..builder import out_decl, ro_decl
from ..registry import register_op
from ..wire import pack_u32_slice
from vyre_vk.ops.registry import OpParamError

RANK_SUPERBLOCKS_OP_ID = "vyre-libs::math::succinct::rank1_superblocks"
RANK_QUERY_OP_ID = "vyre-libs::math::succinct::rank1_query"
SELECT_QUERY_OP_ID = "vyre-libs::math::succinct::select1_query"
# vyre-primitives ids of the child regions these ops compose.
PATH_RECONSTRUCT_OP_ID = "vyre-primitives::graph::path_reconstruct"
SELECT1_PRIMITIVE_OP_ID = "vyre-primitives::bitset::select1_query"
# u32 results: byte-exact (no f32 window).
ULP = None


def superblock_count(word_count: int, block_words: int) -> int:
    """``ceil(word_count / block_words) + 1`` entries: one per superblock plus the total sentinel."""
    if block_words == 0:
        raise OpParamError("rank superblock size block_words == 0 (ZeroBlockWords). "
                         "Fix: rank superblock size must be at least one u32 word.")
    count = word_count // block_words + (word_count % block_words != 0) + 1
    if count > 0xFFFFFFFF:
        raise OpParamError(f"rank superblock count {count} overflows u32 (SuperblockCountOverflow). "
                         "Fix: shard the bitvector.")
    return count


def rank1_superblocks(bits: str, superblocks: str, word_count: int, block_words: int) -> Program:
    """Cumulative set-bit counts at every ``block_words`` boundary, ``superblocks[0] = 0``, total last."""
    out_count = superblock_count(word_count, block_words)
    word, acc = Expr.var("rank_word"), Expr.var("rank_acc")
    body = [Node.if_then(Expr.eq(Expr.gid_x(), Expr.u32(0)), [
        Node.store(superblocks, Expr.u32(0), Expr.u32(0)),
        Node.let_bind("rank_acc", Expr.u32(0)),
        Node.loop_for("rank_word", Expr.u32(0), Expr.u32(word_count), [
            Node.if_then(Expr.and_(Expr.gt(word, Expr.u32(0)),
                                   Expr.eq(Expr.rem(word, Expr.u32(block_words)), Expr.u32(0))),
                         [Node.store(superblocks, Expr.div(word, Expr.u32(block_words)), acc)]),
            Node.assign("rank_acc", Expr.add(acc, Expr.popcount(Expr.load(bits, word)))),
        ]),
        Node.store(superblocks, Expr.u32(out_count - 1), acc),
    ])]
    return Program.wrapped(
        [ro_decl(bits, 0, max(word_count, 1), DataType.U32), out_decl(superblocks, 1, out_count, DataType.U32)],
        (1, 1, 1),
        [wrap_anonymous(RANK_SUPERBLOCKS_OP_ID,
                        [wrap_child(PATH_RECONSTRUCT_OP_ID, RANK_SUPERBLOCKS_OP_ID, body)])],
    )


def rank1_query(bits: str, superblocks: str, bit_indices: str, out: str, word_count: int,
                query_count: int, block_words: int) -> Program:
    """``out[q]`` = set bits strictly before bit ``bit_indices[q]`` (which must lie in a stored word)."""
    sb_count = superblock_count(word_count, block_words)
    q = Expr.gid_x()
    v = Expr.var
    body = [Node.if_then(Expr.lt(q, Expr.u32(query_count)), [
        Node.let_bind("bit_index", Expr.load(bit_indices, q)),
        Node.let_bind("word_index", Expr.div(v("bit_index"), Expr.u32(32))),
        Node.if_then(Expr.ge(v("word_index"), Expr.u32(word_count)),
                     [Node.trap(v("bit_index"), "rank-query-out-of-bounds")]),
        Node.let_bind("block_index", Expr.div(v("word_index"), Expr.u32(block_words))),
        Node.let_bind("rank_acc", Expr.load(superblocks, v("block_index"))),
        Node.let_bind("block_start_word", Expr.mul(v("block_index"), Expr.u32(block_words))),
        Node.loop_for("rank_word", v("block_start_word"), v("word_index"), [
            Node.assign("rank_acc", Expr.add(v("rank_acc"), Expr.popcount(Expr.load(bits, v("rank_word"))))),
        ]),
        Node.let_bind("bit_offset", Expr.rem(v("bit_index"), Expr.u32(32))),
        # (1 << 0) - 1 is already 0; vyre selects 0 explicitly for offset 0 anyway.
        Node.let_bind("partial_mask", Expr.select(
            Expr.eq(v("bit_offset"), Expr.u32(0)), Expr.u32(0),
            Expr.sub(Expr.shl(Expr.u32(1), v("bit_offset")), Expr.u32(1)))),
        Node.assign("rank_acc", Expr.add(v("rank_acc"), Expr.popcount(
            Expr.bitand(Expr.load(bits, v("word_index")), v("partial_mask"))))),
        Node.store(out, q, v("rank_acc")),
    ])]
    return Program.wrapped(
        [ro_decl(bits, 0, max(word_count, 1), DataType.U32), ro_decl(superblocks, 1, sb_count, DataType.U32),
         ro_decl(bit_indices, 2, max(query_count, 1), DataType.U32),
         out_decl(out, 3, max(query_count, 1), DataType.U32)],
        (64, 1, 1),
        [wrap_anonymous(RANK_QUERY_OP_ID, body)],
    )


def _select1_body(bits: str, k_indices: str, out: str, word_count: int, query_count: int) -> list:
    q = Expr.gid_x()
    v = Expr.var
    found_in_word = [
        Node.let_bind("select_word_scan", v("select_word")),
        # Clear the lowest (remaining - 1) set bits; the k-th set bit is then the lowest one.
        Node.loop_for("select_skip", Expr.u32(1), v("select_remaining"), [
            Node.assign("select_word_scan", Expr.bitand(v("select_word_scan"),
                                                        Expr.sub(v("select_word_scan"), Expr.u32(1)))),
        ]),
        Node.assign("select_result", Expr.add(Expr.mul(v("select_word_idx"), Expr.u32(32)),
                                              Expr.ctz(v("select_word_scan")))),
        Node.assign("select_found", Expr.u32(1)),
        Node.assign("select_remaining", Expr.u32(1)),
    ]
    return [Node.if_then(Expr.lt(q, Expr.u32(query_count)), [
        Node.let_bind("select_k", Expr.load(k_indices, q)),
        Node.if_then(Expr.eq(v("select_k"), Expr.u32(0)), [Node.trap(v("select_k"), "select-query-zero-rank")]),
        Node.let_bind("select_remaining", v("select_k")),
        Node.let_bind("select_found", Expr.u32(0)),
        Node.let_bind("select_result", Expr.u32(0)),
        Node.loop_for("select_word_idx", Expr.u32(0), Expr.u32(word_count), [
            Node.if_then(Expr.eq(v("select_found"), Expr.u32(0)), [
                Node.let_bind("select_word", Expr.load(bits, v("select_word_idx"))),
                Node.let_bind("select_word_pop", Expr.popcount(v("select_word"))),
                Node.if_then_else(
                    Expr.gt(v("select_remaining"), v("select_word_pop")),
                    [Node.assign("select_remaining", Expr.sub(v("select_remaining"), v("select_word_pop")))],
                    found_in_word),
            ]),
        ]),
        Node.if_then(Expr.eq(v("select_found"), Expr.u32(0)),
                     [Node.trap(v("select_k"), "select-query-rank-out-of-bounds")]),
        Node.store(out, q, v("select_result")),
    ])]


def select1_query(bits: str, k_indices: str, out: str, word_count: int, query_count: int) -> Program:
    """``out[q]`` = zero-based position of the ``k_indices[q]``-th (one-based) set bit."""
    body = _select1_body(bits, k_indices, out, word_count, query_count)
    return Program.wrapped(
        [ro_decl(bits, 0, max(word_count, 1), DataType.U32), ro_decl(k_indices, 1, max(query_count, 1), DataType.U32),
         out_decl(out, 2, max(query_count, 1), DataType.U32)],
        (64, 1, 1),
        # tag_program: the primitive's Region, re-parented under the vyre-libs op id.
        [wrap_anonymous(SELECT_QUERY_OP_ID, [wrap_child(SELECT1_PRIMITIVE_OP_ID, SELECT_QUERY_OP_ID, body)])],
    )


def _build_superblocks(word_count: int = 4, block_words: int = 2) -> Program:
    return rank1_superblocks("bits", "superblocks", word_count, block_words)


def _build_rank(word_count: int = 4, query_count: int = 5, block_words: int = 2) -> Program:
    return rank1_query("bits", "superblocks", "queries", "out", word_count, query_count, block_words)


def _build_select(word_count: int = 4, query_count: int = 5) -> Program:
    return select1_query("bits", "queries", "out", word_count, query_count)


# Set bits 0, 1, 3 | 63 | 80..95: 20 in all.
_BITS = [0b1011, 0x8000_0000, 0xFFFF_0000, 0]

RANK_SUPERBLOCKS_ENTRY = register_op(
    RANK_SUPERBLOCKS_OP_ID, _build_superblocks,
    test_inputs=lambda: [[pack_u32_slice(_BITS)]],
    expected_output=lambda: [[pack_u32_slice([0, 4, 20])]],
    category="math", ulp=ULP,
    bench=dict(word_count=1 << 16, block_words=32),
)

SELECT_QUERY_ENTRY = register_op(
    SELECT_QUERY_OP_ID, _build_select,
    test_inputs=lambda: [[pack_u32_slice(_BITS), pack_u32_slice([1, 2, 3, 4, 5])]],
    expected_output=lambda: [[pack_u32_slice([0, 1, 3, 63, 80])]],
    category="math", ulp=ULP,
    bench=dict(word_count=4096, query_count=1 << 16),
)

RANK_QUERY_ENTRY = register_op(
    RANK_QUERY_OP_ID, _build_rank,
    test_inputs=lambda: [[pack_u32_slice(_BITS), pack_u32_slice([0, 4, 20]), pack_u32_slice([0, 1, 4, 63, 80])]],
    expected_output=lambda: [[pack_u32_slice([0, 1, 3, 3, 4])]],
    category="math", ulp=ULP,
    bench=dict(word_count=1 << 20, query_count=1 << 20, block_words=32),
)
