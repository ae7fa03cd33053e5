"""`vyre-libs::parsing::c::lower::ast_to_pg_nodes`: packed VAST rows to program-graph rows
(port of vyre-libs/src/parsing/c/lower/ast_to_pg_nodes/gpu_program/structural_nodes.rs).

A VAST row is 10 words ``(kind, parent, first_child, next_sibling, -, src_off, src_len, attr_off,
attr_len, reserved)``; lane t < n writes PG row t, 6 words ``(kind, span_start, span_start +
span_len (wrapping), parent, first_child, next_sibling)``.

Example::

    >>> p = c_lower_ast_to_pg_nodes("vast_nodes", 3, "out_pg_nodes")
    >>> [(b.name, b.count) for b in p.buffers]
    [('vast_nodes', 30), ('out_pg_nodes', 18)]
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, u, v, with_entry_op_id

OP_ID = "vyre-libs::parsing::c::lower::ast_to_pg_nodes"
ULP = None  # u32 results: exact
VAST_NODE_STRIDE_U32, PG_NODE_STRIDE_U32 = 10, 6
IDX_KIND, IDX_PARENT, IDX_FIRST_CHILD, IDX_NEXT_SIBLING, IDX_SRC_BYTE_OFF, IDX_SRC_BYTE_LEN = 0, 1, 2, 3, 5, 6
IDX_RESERVED = 9
NONE = 0xFFFFFFFF

# VAST kinds of vyre's witness (vyre-primitives predicate::node_kind, vyre-libs parse/vast_kinds.rs)
VARIABLE, CALL, IMPORT, LITERAL, SSA, BASIC_BLOCK = 1, 2, 3, 4, 5, 6
C_AST_KIND_LABEL_STMT, C_AST_KIND_GNU_STATEMENT_EXPR, C_AST_KIND_BUILTIN_EXPECT_EXPR = 0xC0115714, 0xC011E00C, 0xC011E00D
C_AST_KIND_ASM_QUALIFIER, C_AST_KIND_ATTRIBUTE_FALLTHROUGH = 0xC011A506, 0xC011A786
(C_AST_KIND_IF_STMT, C_AST_KIND_SWITCH_STMT, C_AST_KIND_CASE_STMT, C_AST_KIND_DEFAULT_STMT, C_AST_KIND_FOR_STMT,
 C_AST_KIND_WHILE_STMT, C_AST_KIND_DO_STMT, C_AST_KIND_RETURN_STMT, C_AST_KIND_BREAK_STMT, C_AST_KIND_CONTINUE_STMT,
 C_AST_KIND_GOTO_STMT) = (0xC0115701, 0xC0115703, 0xC0115704, 0xC0115705, 0xC0115706, 0xC0115707, 0xC0115708,
                          0xC0115709, 0xC011570A, 0xC011570B, 0xC011570C)
C_AST_KIND_CAST_EXPR = 0xC011CA57


def c_lower_ast_to_pg_nodes(vast_nodes: str, num_nodes: int, out_pg_nodes: str) -> Program:
    """PG row ``(kind, start, end, parent, first_child, next_sibling)`` of each VAST row."""
    n = check_len(OP_ID, "num_nodes", num_nodes)
    t = Expr.gid_x()
    vb, pb = Expr.mul(t, u(VAST_NODE_STRIDE_U32)), Expr.mul(t, u(PG_NODE_STRIDE_U32))

    def field(i: int) -> Expr:
        return Expr.load(vast_nodes, Expr.add(vb, u(i)) if i else vb)

    body = [
        Node.let_bind("kind", field(IDX_KIND)),
        Node.let_bind("parent_idx", field(IDX_PARENT)),
        Node.let_bind("first_child_idx", field(IDX_FIRST_CHILD)),
        Node.let_bind("next_sibling_idx", field(IDX_NEXT_SIBLING)),
        Node.let_bind("span_start", field(IDX_SRC_BYTE_OFF)),
        Node.let_bind("span_len", field(IDX_SRC_BYTE_LEN)),
        Node.store(out_pg_nodes, pb, v("kind")),
        Node.store(out_pg_nodes, Expr.add(pb, u(1)), v("span_start")),
        Node.store(out_pg_nodes, Expr.add(pb, u(2)), Expr.add(v("span_start"), v("span_len"))),
        Node.store(out_pg_nodes, Expr.add(pb, u(3)), v("parent_idx")),
        Node.store(out_pg_nodes, Expr.add(pb, u(4)), v("first_child_idx")),
        Node.store(out_pg_nodes, Expr.add(pb, u(5)), v("next_sibling_idx")),
    ]
    program = Program.wrapped(
        [BufferDecl.storage(vast_nodes, 0, BufferAccess.ReadOnly, DataType.U32).with_count(max(n * 10, 1)),
         BufferDecl.output(out_pg_nodes, 1, DataType.U32).with_count(max(n * 6, 1))],
        (256, 1, 1), [wrap_anonymous(OP_ID, [Node.if_then(Expr.lt(t, u(n)), body)])])
    return with_entry_op_id(program, OP_ID)


def vast_row(kind: int, parent: int, first_child: int, next_sibling: int, start: int, length: int) -> list[int]:
    """vyre's witness row: word 4 unused (0xFFFFFFFF), attr = (kind rotl 5, len), reserved = 9."""
    rotl5 = ((kind << 5) | (kind >> 27)) & 0xFFFFFFFF
    return [kind, parent, first_child, next_sibling, NONE, start, length, rotl5, length, IDX_RESERVED]


# vyre's witness: 23 VAST nodes (a small tree under a variable, and a basic block with labels,
# GNU nodes, switch/case/default, loops, jumps and a cast).
WITNESS_ROWS = [
    (VARIABLE, NONE, NONE, 1, 0, 11), (CALL, 0, 2, 5, 16, 9), (LITERAL, 1, NONE, 3, 32, 7), (IMPORT, 1, 4, NONE, 48, 13),
    (SSA, 3, NONE, NONE, 62, 3), (BASIC_BLOCK, NONE, NONE, NONE, 96, 17), (C_AST_KIND_LABEL_STMT, 5, NONE, 7, 128, 5),
    (C_AST_KIND_GNU_STATEMENT_EXPR, 5, 8, 9, 136, 19), (C_AST_KIND_ASM_QUALIFIER, 8, NONE, 10, 160, 8),
    (C_AST_KIND_ATTRIBUTE_FALLTHROUGH, 5, NONE, 11, 176, 11), (C_AST_KIND_BUILTIN_EXPECT_EXPR, 7, NONE, 12, 192, 16),
    (C_AST_KIND_SWITCH_STMT, 5, NONE, 12, 224, 6), (C_AST_KIND_CASE_STMT, 11, NONE, 13, 240, 4),
    (C_AST_KIND_DEFAULT_STMT, 11, NONE, 14, 248, 7), (C_AST_KIND_FOR_STMT, 5, NONE, 15, 264, 3),
    (C_AST_KIND_WHILE_STMT, 5, NONE, 16, 272, 5), (C_AST_KIND_DO_STMT, 5, NONE, 17, 280, 2),
    (C_AST_KIND_IF_STMT, 5, NONE, 18, 288, 2), (C_AST_KIND_GOTO_STMT, 5, NONE, 19, 296, 4),
    (C_AST_KIND_BREAK_STMT, 5, NONE, 20, 304, 5), (C_AST_KIND_CONTINUE_STMT, 5, NONE, 21, 312, 8),
    (C_AST_KIND_RETURN_STMT, 5, NONE, 22, 328, 6), (C_AST_KIND_CAST_EXPR, 5, NONE, NONE, 344, 1)]
WITNESS_VAST = [w for row in WITNESS_ROWS for w in vast_row(*row)]


def _build(num_nodes: int = len(WITNESS_ROWS)) -> Program:
    return c_lower_ast_to_pg_nodes("vast_nodes", num_nodes, "out_pg_nodes")


def _expected() -> bytes:
    return pack_u32_slice([w for k, p, fc, ns, s, ln in WITNESS_ROWS for w in (k, s, s + ln, p, fc, ns)])


ENTRY = register_case(OP_ID, _build, [pack_u32_slice(WITNESS_VAST), bytes(4 * 6 * len(WITNESS_ROWS))], [_expected()],
                      category=None, ulp=ULP, bench=dict(num_nodes=1 << 20))
