"""vyre-libs' C preprocessor passes over token streams (vyre-libs/src/parsing/c/preprocess/
expansion/{conditional,dynamic_pass,helpers}.rs).

`opt_conditional_mask_with_directives`: invocation 0 walks the ``n`` tokens keeping a nesting
depth and two bit stacks (``active_bits``: the branch at each depth is live; ``taken_bits``: a
branch at that depth was already taken). Token i is kept (mask 1) when it is a control directive
(``TOK_PREPROC`` whose kind is #if/#ifdef/#ifndef/#elif/#else/#endif) or every enclosing level
is active; then the directive kind (``directive_kinds[i]``, with its evaluated condition in
``directive_values[i]``) opens, switches or closes a level. Nesting past 31, an #elif/#else/
#endif with nothing open and an unclosed #if trap, as in vyre.

`opt_dynamic_macro_expansion`: lane t looks its token up in an open-addressed table (slot
``(tok * 2654435769) & 4095``, linear probing, key 0xFFFFFFFF empty); a hit's value is the start
of its replacement in ``macro_vals`` and ``macro_sizes[start]`` its length. Directives are never
expanded. Lane t re-derives the emitted length of every earlier token (a serial prefix sum per
lane) and writes its token or replacement there; the last lane stores the total. Each lookup is a
4096-iteration loop (its body skipped once found), so the cost is O(n^2 * 4096) steps.

Example::

    >>> p = opt_conditional_mask_with_directives("t", "k", "v", "m", 3)
    >>> p.entry[0].body[0].generator
    'vyre-primitives::text::line_index'
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..c import tokens as T
from ..common import check_len, child_phase, is_any, non_composable, u, v, with_entry_op_id

MASK_OP_ID = "vyre-libs::parsing::opt_conditional_mask_with_directives"
MACRO_OP_ID = "vyre-libs::parsing::opt_dynamic_macro_expansion"
LINE_INDEX_OP_ID = "vyre-primitives::text::line_index"    # vyre's child phase names (kept)
SELECT_OP_ID = "vyre-primitives::bitset::select1_query"
ULP = None  # u32 results: exact
U32 = DataType.U32

# Preprocessor directive kinds (vyre-libs/src/parsing/c/lex/tokens.rs).
TOK_PP_IF, TOK_PP_IFDEF, TOK_PP_IFNDEF, TOK_PP_ELIF, TOK_PP_ELSE, TOK_PP_ENDIF = 207, 208, 209, 210, 211, 212
EMPTY_MACRO_SLOT = 0xFFFFFFFF
MACRO_TABLE_SLOTS = 4096
MACRO_TABLE_MASK = MACRO_TABLE_SLOTS - 1
MACRO_HASH_MUL = 2654435769  # Knuth's multiplicative hash, wrapping u32
MAX_CONDITIONAL_DEPTH = 31


def _decl(name: str, binding: int, access: BufferAccess, n: int) -> BufferDecl:
    return BufferDecl.storage(name, binding, access, U32).with_count(n)


def _all_enclosing_active(bits: Expr, depth: Expr) -> Expr:
    mask = Expr.sub(Expr.shl(u(1), depth), u(1))
    return Expr.eq(Expr.bitand(bits, mask), mask)


def _set_bit(var: str, bit: Expr, on: Expr) -> Node:
    """``var = (var & ~bit) | (on ? bit : 0)``."""
    return Node.assign(var, Expr.bitor(Expr.bitand(v(var), Expr.bitnot(bit)), Expr.select(on, bit, u(0))))


def _no_open(tag: str) -> Node:
    return Node.if_then(Expr.eq(v("depth"), u(0)), [Node.trap(v("i"), tag)])


def _mask_step(tok_types: str, kinds: str, values: str, out_mask: str) -> list[Node]:
    kind, val_nz = v("kind"), Expr.ne(v("value"), u(0))
    opens = (TOK_PP_IF, TOK_PP_IFDEF, TOK_PP_IFNDEF)
    return [
        Node.let_bind("tok", Expr.load(tok_types, v("i"))),
        Node.let_bind("kind", Expr.load(kinds, v("i"))),
        Node.let_bind("value", Expr.load(values, v("i"))),
        Node.let_bind("current_active", _all_enclosing_active(v("active_bits"), v("depth"))),
        Node.let_bind("is_control_directive", Expr.and_(
            Expr.eq(v("tok"), u(T.TOK_PREPROC)), is_any(kind, opens + (TOK_PP_ELIF, TOK_PP_ELSE, TOK_PP_ENDIF)))),
        Node.store(out_mask, v("i"), Expr.select(v("is_control_directive"), u(1),
                                                 Expr.select(v("current_active"), u(1), u(0)))),
        # the kind drives the stack whatever the token type (vyre's rule)
        Node.if_then(is_any(kind, opens), [
            Node.if_then(Expr.ge(v("depth"), u(MAX_CONDITIONAL_DEPTH)),
                         [Node.trap(v("i"), "c-preprocess-conditional-nesting-overflow")]),
            Node.let_bind("open_bit", Expr.shl(u(1), v("depth"))),
            Node.let_bind("open_active", Expr.and_(v("current_active"), val_nz)),
            _set_bit("active_bits", v("open_bit"), v("open_active")),
            _set_bit("taken_bits", v("open_bit"), val_nz),
            Node.assign("depth", Expr.add(v("depth"), u(1))),
        ]),
        Node.if_then(Expr.eq(kind, u(TOK_PP_ELIF)), [
            _no_open("c-preprocess-elif-without-open-conditional"),
            Node.let_bind("slot_depth", Expr.sub(v("depth"), u(1))),
            Node.let_bind("slot_bit", Expr.shl(u(1), v("slot_depth"))),
            Node.let_bind("parent_active", _all_enclosing_active(v("active_bits"), v("slot_depth"))),
            Node.let_bind("slot_taken", Expr.ne(Expr.bitand(v("taken_bits"), v("slot_bit")), u(0))),
            Node.let_bind("elif_active", Expr.and_(Expr.and_(v("parent_active"), Expr.not_(v("slot_taken"))),
                                                   val_nz)),
            _set_bit("active_bits", v("slot_bit"), v("elif_active")),
            Node.assign("taken_bits", Expr.bitor(v("taken_bits"), Expr.select(val_nz, v("slot_bit"), u(0)))),
        ]),
        Node.if_then(Expr.eq(kind, u(TOK_PP_ELSE)), [
            _no_open("c-preprocess-else-without-open-conditional"),
            Node.let_bind("else_slot_depth", Expr.sub(v("depth"), u(1))),
            Node.let_bind("else_slot_bit", Expr.shl(u(1), v("else_slot_depth"))),
            Node.let_bind("else_parent_active", _all_enclosing_active(v("active_bits"), v("else_slot_depth"))),
            Node.let_bind("else_taken", Expr.ne(Expr.bitand(v("taken_bits"), v("else_slot_bit")), u(0))),
            Node.let_bind("else_active", Expr.and_(v("else_parent_active"), Expr.not_(v("else_taken")))),
            _set_bit("active_bits", v("else_slot_bit"), v("else_active")),
            Node.assign("taken_bits", Expr.bitor(v("taken_bits"), v("else_slot_bit"))),
        ]),
        Node.if_then(Expr.eq(kind, u(TOK_PP_ENDIF)), [
            _no_open("c-preprocess-endif-without-open-conditional"),
            Node.assign("depth", Expr.sub(v("depth"), u(1))),
            Node.let_bind("close_bit", Expr.shl(u(1), v("depth"))),
            Node.assign("active_bits", Expr.bitand(v("active_bits"), Expr.bitnot(v("close_bit")))),
            Node.assign("taken_bits", Expr.bitand(v("taken_bits"), Expr.bitnot(v("close_bit")))),
        ]),
    ]


def opt_conditional_mask_with_directives(tok_types: str, directive_kinds: str, directive_values: str,
                                         out_mask: str, num_tokens: int) -> Program:
    """1 for each token #if/#elif/#else keeps (and each conditional directive), else 0."""
    n = check_len(MASK_OP_ID, "num_tokens", num_tokens)
    walk = [
        Node.let_bind("depth", u(0)), Node.let_bind("active_bits", u(0)), Node.let_bind("taken_bits", u(0)),
        Node.loop_for("i", u(0), u(n), _mask_step(tok_types, directive_kinds, directive_values, out_mask)),
        Node.if_then(Expr.ne(v("depth"), u(0)), [Node.trap(v("depth"), "c-preprocess-unclosed-conditional-directive")]),
    ]
    m = max(n, 1)
    program = Program.wrapped(
        [_decl(tok_types, 0, BufferAccess.ReadOnly, m), _decl(directive_kinds, 1, BufferAccess.ReadOnly, m),
         _decl(directive_values, 2, BufferAccess.ReadOnly, m), _decl(out_mask, 3, BufferAccess.ReadWrite, m)],
        (256, 1, 1),
        [wrap_anonymous(MASK_OP_ID, [child_phase(MASK_OP_ID, LINE_INDEX_OP_ID, [
            Node.if_then(Expr.eq(Expr.gid_x(), u(0)), walk)])])])
    return non_composable(with_entry_op_id(program, MASK_OP_ID))


def macro_lookup_nodes(prefix: str, token: Expr, keys: str, vals: str, out: str) -> list[Node]:
    """vyre's emit_macro_lookup: ``out`` = the value of `token`'s slot, or EMPTY_MACRO_SLOT; traps
    when all 4096 probes see neither the key nor an empty slot."""
    tk, slot, key, done, empty = (f"{prefix}_{s}" for s in ("tok", "probe_slot", "probed_key", "lookup_done",
                                                             "lookup_seen_empty"))
    return [
        Node.let_bind(tk, token),
        Node.let_bind(slot, Expr.bitand(Expr.mul(v(tk), u(MACRO_HASH_MUL)), u(MACRO_TABLE_MASK))),
        Node.let_bind(out, u(EMPTY_MACRO_SLOT)),
        Node.let_bind(done, u(0)),
        Node.let_bind(empty, u(0)),
        Node.loop_for(f"{prefix}_probe", u(0), u(MACRO_TABLE_SLOTS), [Node.if_then(Expr.eq(v(done), u(0)), [
            Node.let_bind(key, Expr.load(keys, v(slot))),
            Node.if_then(Expr.eq(v(key), v(tk)), [Node.assign(out, Expr.load(vals, v(slot))), Node.assign(done, u(1))]),
            Node.if_then(Expr.eq(v(key), u(EMPTY_MACRO_SLOT)), [Node.assign(empty, u(1)), Node.assign(done, u(1))]),
            Node.assign(slot, Expr.bitand(Expr.add(v(slot), u(1)), u(MACRO_TABLE_MASK))),
        ])]),
        Node.if_then(Expr.and_(Expr.eq(v(out), u(EMPTY_MACRO_SLOT)), Expr.eq(v(empty), u(0))),
                     [Node.trap(v(tk), "macro-lookup-table-full-without-empty-slot")]),
    ]


def _emit_count(prefix: str, tok: str, keys: str, vals: str, sizes: str, idx: str, count: str, tag: str,
                trap_in_else: bool) -> list[Node]:
    over = Expr.gt(Expr.add(v(idx), v(count)), u(MACRO_TABLE_SLOTS))
    trap = Node.if_then(over, [Node.trap(Expr.add(v(idx), v(count)), tag)])
    nodes = macro_lookup_nodes(prefix, v(tok), keys, vals, idx) + [
        Node.if_then(Expr.eq(v(tok), u(T.TOK_PREPROC)), [Node.assign(idx, u(EMPTY_MACRO_SLOT))]),
        Node.let_bind(count, u(0)),
        Node.if_then_else(Expr.eq(v(idx), u(EMPTY_MACRO_SLOT)), [Node.assign(count, u(1))],
                          [Node.assign(count, Expr.load(sizes, v(idx)))] + ([trap] if trap_in_else else [])),
    ]
    if not trap_in_else:  # the current token's check sits after the branch, guarded by a hit
        nodes.append(Node.if_then(Expr.and_(Expr.ne(v(idx), u(EMPTY_MACRO_SLOT)), over), trap.then))
    return nodes


def opt_dynamic_macro_expansion(in_tok_types: str, macro_keys: str, macro_vals: str, macro_sizes: str,
                                out_tok_types: str, out_tok_counts: str, num_tokens: int,
                                max_out_tokens: int) -> Program:
    """Each token, or its table replacement, at its prefix-sum position; the total in counts[0]."""
    n = check_len(MACRO_OP_ID, "num_tokens", num_tokens)
    cap = check_len(MACRO_OP_ID, "max_out_tokens", max_out_tokens)
    t = Expr.gid_x()
    body = [Node.let_bind("tok", Expr.load(in_tok_types, t))]
    body += _emit_count("current", "tok", macro_keys, macro_vals, macro_sizes, "macro_idx", "emit_count",
                        "macro-replacement-range-out-of-bounds", False)
    prior = [Node.let_bind("prior_tok", Expr.load(in_tok_types, v("prior")))]
    prior += _emit_count("prior_lookup", "prior_tok", macro_keys, macro_vals, macro_sizes, "prior_macro_idx",
                         "prior_emit_count", "macro-prior-replacement-range-out-of-bounds", True)
    prior.append(Node.assign("warp_base_idx", Expr.add(v("warp_base_idx"), v("prior_emit_count"))))
    body += [
        Node.let_bind("warp_base_idx", u(0)),
        Node.loop_for("prior", u(0), t, prior),
        Node.let_bind("emit_end_idx", Expr.add(v("warp_base_idx"), v("emit_count"))),
        Node.if_then(Expr.gt(v("emit_end_idx"), u(cap)), [Node.trap(v("emit_end_idx"), "macro-expansion-output-overflow")]),
        Node.if_then_else(Expr.eq(v("macro_idx"), u(EMPTY_MACRO_SLOT)),
                          [Node.store(out_tok_types, v("warp_base_idx"), v("tok"))],
                          [Node.loop_for("i", u(0), v("emit_count"), [
                              Node.let_bind("replacement_tok", Expr.load(macro_vals, Expr.add(v("macro_idx"), v("i")))),
                              Node.store(out_tok_types, Expr.add(v("warp_base_idx"), v("i")), v("replacement_tok"))])]),
        Node.if_then(Expr.eq(Expr.add(t, u(1)), u(n)), [Node.store(out_tok_counts, u(0), v("emit_end_idx"))]),
    ]
    program = Program.wrapped(
        [_decl(in_tok_types, 0, BufferAccess.ReadOnly, max(n, 1)),
         _decl(macro_keys, 1, BufferAccess.ReadOnly, MACRO_TABLE_SLOTS),
         _decl(macro_vals, 2, BufferAccess.ReadOnly, MACRO_TABLE_SLOTS),
         _decl(macro_sizes, 3, BufferAccess.ReadOnly, MACRO_TABLE_SLOTS),
         _decl(out_tok_types, 4, BufferAccess.ReadWrite, max(cap, 1)),
         _decl(out_tok_counts, 5, BufferAccess.ReadWrite, 1)],
        (256, 1, 1),
        [wrap_anonymous(MACRO_OP_ID, [child_phase(MACRO_OP_ID, SELECT_OP_ID, [Node.if_then(Expr.lt(t, u(n)), body)])])])
    return non_composable(with_entry_op_id(program, MACRO_OP_ID))


def macro_slot(token: int) -> int:
    return (token * MACRO_HASH_MUL) & MACRO_TABLE_MASK


def macro_table(macros: dict[int, list[int]], first_start: int = 8) -> tuple[list[int], list[int], list[int]]:
    """(keys, vals, sizes) for `macros` (token -> replacement), linear probing from each token's
    slot; replacements are stored from `first_start` in slots no key uses (vyre's fixture layout)."""
    keys, vals, sizes = [EMPTY_MACRO_SLOT] * MACRO_TABLE_SLOTS, [0] * MACRO_TABLE_SLOTS, [0] * MACRO_TABLE_SLOTS
    slots = []
    for tok in macros:
        s = macro_slot(tok)
        while keys[s] != EMPTY_MACRO_SLOT:
            s = (s + 1) & MACRO_TABLE_MASK
        keys[s] = tok
        slots.append(s)
    start = first_start
    for s, repl in zip(slots, macros.values()):
        while any(x in slots for x in range(start, start + max(len(repl), 1))):
            start += 1
        vals[s] = start
        sizes[start] = len(repl)
        vals[start:start + len(repl)] = repl
        start += max(len(repl), 1)
    return keys, vals, sizes


def _mask(num_tokens: int = 3) -> Program:
    return opt_conditional_mask_with_directives("tok_types", "directive_kinds", "directive_values", "out_mask",
                                                num_tokens)


def _macro(num_tokens: int = 4, max_out_tokens: int = 16) -> Program:
    return opt_dynamic_macro_expansion("in_tok_types", "macro_keys", "macro_vals", "macro_sizes", "out_tok_types",
                                       "out_tok_counts", num_tokens, max_out_tokens)


# vyre's vectors: `#if 0` / x / `#endif` masks [1, 0, 1]; token 777 -> [10, 20] expands
# [777, 5, PREPROC, 777] to [10, 20, 5, PREPROC, 10, 20] (6 tokens).
MASK_ENTRY = register_case(
    MASK_OP_ID, _mask, [pack_u32_slice([T.TOK_PREPROC, T.TOK_IDENTIFIER, T.TOK_PREPROC]),
                        pack_u32_slice([TOK_PP_IF, 0, TOK_PP_ENDIF]), bytes(12), bytes(12)],
    [pack_u32_slice([1, 0, 1])], category="parsing", ulp=ULP, bench=dict(num_tokens=1 << 16))
_KEYS, _VALS, _SIZES = macro_table({777: [10, 20]})
MACRO_ENTRY = register_case(
    MACRO_OP_ID, _macro, [pack_u32_slice([777, 5, T.TOK_PREPROC, 777]), pack_u32_slice(_KEYS),
                          pack_u32_slice(_VALS), pack_u32_slice(_SIZES), bytes(64), bytes(4)],
    [pack_u32_slice([10, 20, 5, T.TOK_PREPROC, 10, 20] + [0] * 10), pack_u32_slice([6])],
    category="parsing", ulp=ULP, bench=dict(num_tokens=64, max_out_tokens=1024))  # each lane probes per earlier token: n^2 x 4096
