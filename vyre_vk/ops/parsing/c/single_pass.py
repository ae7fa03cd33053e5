"""`vyre-libs::parsing::c11_lex_single_pass`: the C lexer and the digraph pass in one program
(port of vyre-libs/src/parsing/c/lex/lexer/single_pass.rs).

Buffers are the lexer's (the digraph pass's three token buffers share its names, so vyre's
de-duplicated table is the lexer's five); the body is ``Region(op, parent=op){ Block(lexer entry);
Block(digraph entry) }``, each pass's lets in its own Block; the workgroup is the lexer's.

Race (vyre's, kept): the lexer runs in invocation 0 while the digraph pass runs in every
invocation below ``digraph_capacity`` with no barrier between them, so on a GPU lanes 1.. may
read token types lane 0 has not written yet. vyre-vk's reference runs each statement for all
lanes before the next, so its digraph lanes see the finished stream; on lavapipe so did the lanes
of workgroup 0 in every run here (llvmpipe runs a workgroup's SIMD groups one after another), but
later workgroups may run on other threads while workgroup 0 lexes, so a digraph pair at token
index >= 256 is only rewritten if its lane happens to run after the lexer. The result is defined
for streams whose digraph pairs (if any) lie in the first 256 tokens; a stream without digraph
pairs is unaffected (no lane writes), which is what the real-header test uses.

Example::

    >>> p = c11_lex_single_pass("haystack", "tok_types", "tok_starts", "tok_lens", "tok_counts", 64, 64)
    >>> [b.name for b in p.buffers], p.entry[0].source_region
    (['haystack', 'tok_types', 'tok_starts', 'tok_lens', 'tok_counts'], 'vyre-libs::parsing::c11_lex_single_pass')
"""
from __future__ import annotations

from ....ir import Node, Program, wrap
from ...registry import register_case
from ...wire import pack_u32_slice
from .digraphs import c11_lex_digraphs
from .lexer import c11_lexer
from .tokens import TOK_IDENTIFIER

OP_ID = "vyre-libs::parsing::c11_lex_single_pass"
ULP = None  # u32 results: exact


def c11_lex_single_pass(haystack: str, out_tok_types: str, out_tok_starts: str, out_tok_lens: str,
                        out_counts: str, haystack_len: int, digraph_capacity: int) -> Program:
    """`c11_lexer` then `c11_lex_digraphs` over its first `digraph_capacity` tokens."""
    lex = c11_lexer(haystack, out_tok_types, out_tok_starts, out_tok_lens, out_counts, haystack_len)
    digraphs = c11_lex_digraphs(out_tok_types, out_tok_starts, out_tok_lens, digraph_capacity)
    buffers = list(lex.buffers)
    seen = {b.name for b in buffers}
    buffers += [b for b in digraphs.buffers if b.name not in seen]
    body = [Node.block(list(lex.entry)), Node.block(list(digraphs.entry))]
    return Program.wrapped(buffers, lex.workgroup_size, [wrap(OP_ID, body, OP_ID)])


def _build(haystack_len: int = 64, digraph_capacity: int = 64) -> Program:
    return c11_lex_single_pass("haystack", "tok_types", "tok_starts", "tok_lens", "tok_counts", haystack_len,
                               digraph_capacity)


# vyre's vector: 64 'a' bytes lex as one 64-byte identifier; no digraph to rewrite.
ENTRY = register_case(
    OP_ID, _build, [b"a" * 64 * 4] + [bytes(64 * 4)] * 3 + [bytes(4)],
    [pack_u32_slice([TOK_IDENTIFIER] + [0] * 63), bytes(64 * 4), pack_u32_slice([64] + [0] * 63),
     pack_u32_slice([1])],
    category="parsing", ulp=ULP, bench=dict(haystack_len=1 << 16, digraph_capacity=1 << 16))
