"""`vyre-libs::parsing::c11_gnu_builtins_pass` and `c11_gnu_inline_asm_pass`: the two GNU-extension
passes over a front end's AST opcode stream (port of vyre-libs/src/parsing/c/parse/gnu_builtins.rs,
inline_asm.rs and the atomic_collect_u32 skeleton of vyre-libs/src/compiler/atomic_collect.rs).

Builtins (invocation ``t < num_ast_nodes``, workgroup [256,1,1]): ``out[t]`` is ``ast[t]`` with the
five legacy builtin tags (``EXPC`` expect, ``OFST`` offsetof, ``OBJS`` object_size, ``PREF``
prefetch, ``UNRC`` unreachable, as big-endian ASCII words) mapped to their VAST kinds; any other
word with the reserved prefix ``0x474E55xx`` ("GNU") traps (``unsupported-gnu-builtin-opcode``).

Inline asm (invocation ``t < num_ast_nodes``): each ``ast[t] == 0x41534D00`` ("ASM\\0") claims slot
``atomic_add(out_asm_counts[0], 1)`` and stores ``t`` there; a claim ``>= num_ast_nodes`` traps
(``inline-asm-registry-overflow``). The counter is not reset. The slots' order is the order lanes
win the atomic: lane order on the reference and within a lavapipe workgroup, unspecified across
workgroups (the set of stored ``t`` and the count are defined).

Example::

    >>> hex(C_AST_KIND_BUILTIN_EXPECT_EXPR), GNU_BUILTIN_EXPECT_OPCODE.to_bytes(4, "big")
    ('0xc011e00d', b'EXPC')
"""
from __future__ import annotations

from ....ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ...registry import register_case
from ...wire import pack_u32_slice
from ..common import check_len, non_composable, u, v, with_entry_op_id

BUILTINS_OP_ID = "vyre-libs::parsing::c11_gnu_builtins_pass"
ASM_OP_ID = "vyre-libs::parsing::c11_gnu_inline_asm_pass"
ULP = None  # u32 results: exact
U32 = DataType.U32

# legacy front-end tags (gnu_builtins.rs)
GNU_BUILTIN_EXPECT_OPCODE = 0x4558_5043
GNU_BUILTIN_OFFSETOF_OPCODE = 0x4F46_5354
GNU_BUILTIN_OBJECT_SIZE_OPCODE = 0x4F42_4A53
GNU_BUILTIN_PREFETCH_OPCODE = 0x5052_4546
GNU_BUILTIN_UNREACHABLE_OPCODE = 0x554E_5243
GNU_BUILTIN_RESERVED_PREFIX = 0x474E_5500
GNU_INLINE_ASM_OPCODE = 0x4153_4D00
# VAST kinds (vyre-libs/src/parsing/c/parse/vast_kinds.rs)
C_AST_KIND_BUILTIN_CHOOSE_EXPR = 0xC011_E008
C_AST_KIND_BUILTIN_EXPECT_EXPR = 0xC011_E00D
C_AST_KIND_BUILTIN_OFFSETOF_EXPR = 0xC011_E00E
C_AST_KIND_BUILTIN_OBJECT_SIZE_EXPR = 0xC011_E00F
C_AST_KIND_BUILTIN_PREFETCH_EXPR = 0xC011_E010
C_AST_KIND_BUILTIN_UNREACHABLE_STMT = 0xC011_5715

#: legacy tag -> VAST kind, in the order vyre tests them
GNU_BUILTIN_KINDS: tuple[tuple[int, int], ...] = (
    (GNU_BUILTIN_EXPECT_OPCODE, C_AST_KIND_BUILTIN_EXPECT_EXPR),
    (GNU_BUILTIN_OFFSETOF_OPCODE, C_AST_KIND_BUILTIN_OFFSETOF_EXPR),
    (GNU_BUILTIN_OBJECT_SIZE_OPCODE, C_AST_KIND_BUILTIN_OBJECT_SIZE_EXPR),
    (GNU_BUILTIN_PREFETCH_OPCODE, C_AST_KIND_BUILTIN_PREFETCH_EXPR),
    (GNU_BUILTIN_UNREACHABLE_OPCODE, C_AST_KIND_BUILTIN_UNREACHABLE_STMT))


def _lane_program(op_id: str, buffers: list[BufferDecl], count: int, body: list[Node]) -> Program:
    t = Expr.gid_x()
    program = Program.wrapped(buffers, (256, 1, 1), [wrap_anonymous(op_id, [Node.if_then(Expr.lt(t, u(count)), body)])])
    return non_composable(with_entry_op_id(program, op_id))


def c11_gnu_builtins_pass(ast_opcodes: str, out_ast_opcodes: str, num_ast_nodes: int) -> Program:
    """Normalise legacy GNU builtin tags of ``ast_opcodes[0..num_ast_nodes]`` into VAST kinds."""
    check_len(BUILTINS_OP_ID, "num_ast_nodes", num_ast_nodes)
    t, op = Expr.gid_x(), v("opcode")
    body = [Node.let_bind("opcode", Expr.load(ast_opcodes, t)), Node.let_bind("normalized", op)]
    body += [Node.if_then(Expr.eq(op, u(tag)), [Node.assign("normalized", u(kind))]) for tag, kind in GNU_BUILTIN_KINDS]
    body += [
        # an unknown GNU tag must not pass through as an ordinary node
        Node.if_then(Expr.eq(Expr.bitand(op, u(0xFFFF_FF00)), u(GNU_BUILTIN_RESERVED_PREFIX)),
                     [Node.trap(op, "unsupported-gnu-builtin-opcode")]),
        Node.store(out_ast_opcodes, t, v("normalized")),
    ]
    n = max(num_ast_nodes, 1)
    return _lane_program(BUILTINS_OP_ID, [
        BufferDecl.storage(ast_opcodes, 0, BufferAccess.ReadOnly, U32).with_count(n),
        BufferDecl.storage(out_ast_opcodes, 1, BufferAccess.ReadWrite, U32).with_count(n)], num_ast_nodes, body)


def c11_gnu_inline_asm_pass(ast_opcodes: str, out_asm_blocks: str, num_ast_nodes: int,
                            counter: str = "out_asm_counts") -> Program:
    """Collect the indices of the inline-asm rows into ``out_asm_blocks[0..count]``."""
    check_len(ASM_OP_ID, "num_ast_nodes", num_ast_nodes)
    t, claim = Expr.gid_x(), v("claim")
    body = [
        Node.let_bind("item", Expr.load(ast_opcodes, t)),
        Node.if_then(Expr.eq(v("item"), u(GNU_INLINE_ASM_OPCODE)), [
            Node.let_bind("claim", Expr.atomic_add(counter, u(0), u(1))),
            Node.if_then(Expr.ge(claim, u(num_ast_nodes)), [Node.trap(claim, "inline-asm-registry-overflow")]),
            Node.store(out_asm_blocks, claim, t),
        ]),
    ]
    n = max(num_ast_nodes, 1)
    return _lane_program(ASM_OP_ID, [
        BufferDecl.storage(ast_opcodes, 0, BufferAccess.ReadOnly, U32).with_count(n),
        BufferDecl.storage(out_asm_blocks, 1, BufferAccess.ReadWrite, U32).with_count(n),
        BufferDecl.storage(counter, 2, BufferAccess.ReadWrite, U32).with_count(1)], num_ast_nodes, body)


def _build_builtins(num_ast_nodes: int = 4) -> Program:
    return c11_gnu_builtins_pass("ast", "out_ast", num_ast_nodes)


def _build_asm(num_ast_nodes: int = 4) -> Program:
    return c11_gnu_inline_asm_pass("ast", "out_asm", num_ast_nodes)


# vyre's vectors: [0x11, EXPC, OBJS, CHOOSE] -> [0x11, EXPECT, OBJECT_SIZE, CHOOSE]; the asm tag
# at index 2 of [0, 1, ASM, 3] is collected into slot 0, count 1.
BUILTINS_ENTRY = register_case(
    BUILTINS_OP_ID, _build_builtins,
    [pack_u32_slice([0x11, GNU_BUILTIN_EXPECT_OPCODE, GNU_BUILTIN_OBJECT_SIZE_OPCODE, C_AST_KIND_BUILTIN_CHOOSE_EXPR]),
     bytes(16)],
    [pack_u32_slice([0x11, C_AST_KIND_BUILTIN_EXPECT_EXPR, C_AST_KIND_BUILTIN_OBJECT_SIZE_EXPR,
                     C_AST_KIND_BUILTIN_CHOOSE_EXPR])],
    category="parsing", ulp=ULP, bench=dict(num_ast_nodes=1 << 20))
ASM_ENTRY = register_case(
    ASM_OP_ID, _build_asm, [pack_u32_slice([0, 1, GNU_INLINE_ASM_OPCODE, 3]), bytes(16), bytes(4)],
    [pack_u32_slice([2, 0, 0, 0]), pack_u32_slice([1])],
    category="parsing", ulp=ULP, bench=dict(num_ast_nodes=1 << 20))
