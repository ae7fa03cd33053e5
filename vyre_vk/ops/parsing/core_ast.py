"""vyre-libs' data-parallel AST passes over the C11 token stream (port of
vyre-libs/src/parsing/core/ast/: binding.rs, blocks.rs, shunting.rs with shunting/{operator,emit}.rs
and node.rs).

- ``ast_binding_strength``: invocation t < num_tokens stores ``out_depths[t] * 100 + precedence``
  with precedence 40 for ``*`` ``/``, 30 for ``+`` ``-``, 10 for token id 0x3D, else 0. vyre
  means '=' by 0x3D (its ASCII code), but token 61 is ``##`` (TOK_HASHHASH) in vyre's own C token
  numbering (TOK_ASSIGN is 30): ported as written.
- ``ast_cfg_blocks``: statement t < num_statements (``statements`` holds [start, end] pairs)
  stores the position of the nearest ``if``/``while`` token among the 31 tokens before its start
  (INVALID_POS when none); ``out_scope_parents`` is accepted and unused, as in vyre.
- ``ast_shunting_yard``: statement t < min(len(statements) / 2, limit) runs Dijkstra's shunting
  yard over its tokens ``[start, end)`` with a 64-slot value stack and operator stack at
  ``t * 64`` of the scratch buffers. Identifiers and integers become leaves
  ``(AST_VAR | AST_CONST_INT, MAX, MAX, token index)``, reduced operators ``(opcode, left node,
  right node, MAX)``, each 4 words at ``atomic_add(out_ast_count, 4)``; ``out_statement_roots[t]``
  is the top value (a node's word index) or MAX. Precedence: assignment (``=`` ``+=`` .. ``/=``,
  right-associative) 1, ``||`` 2, ``&&`` 3, ``==`` ``!=`` 4, relational 5, ``+`` ``-`` 6,
  ``*`` ``/`` ``%`` 7. Other tokens are skipped. Several statements interleave their atomic node
  slots (the node numbering is the GPU's order; each statement's tree is not); a statement with
  more than 64 pending values or operators writes into the next statement's stack slots.

Example::

    >>> ast_binding_strength("t", "d", "s", 4).buffers[2].count
    4
"""
from __future__ import annotations

from typing import Optional

from ...ir import BufferAccess, BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..registry import register_case, register_op
from ..wire import pack_u32_slice
from .c import tokens as T
from .common import check_len, child_phase, non_composable, u, v, with_entry_op_id

BINDING_OP_ID = "vyre-libs::parsing::ast_binding_strength"
CFG_OP_ID = "vyre-libs::parsing::ast_cfg_blocks"
SHUNTING_OP_ID = "vyre-libs::parsing::ast_shunting_yard"
STATEMENT_PASS_OP_ID = "vyre-libs::parsing::ast_shunting_yard::statement_pass"
ULP = None  # u32 results: exact
U32 = DataType.U32
INVALID_POS = 0xFFFFFFFF
MAX_TOK_SCAN = 65_536
STACK_SLOTS_PER_STATEMENT = 64
VYRE_ASSIGN_BYTE = 0x3D  # binding.rs compares with '=' as a byte, not TOK_ASSIGN
# node.rs opcodes
(AST_CONST_INT, AST_VAR, AST_ADD, AST_SUB, AST_MUL, AST_DIV, AST_ASSIGN) = range(1, 8)
AST_MOD, AST_EQ, AST_NE, AST_LT, AST_GT, AST_LE, AST_GE, AST_LOGICAL_AND, AST_LOGICAL_OR = range(13, 22)


def _ro(name: str, binding: int, count: int) -> BufferDecl:
    return BufferDecl.storage(name, binding, BufferAccess.ReadOnly, U32).with_count(count)


def _rw(name: str, binding: int, count: int) -> BufferDecl:
    return BufferDecl.storage(name, binding, BufferAccess.ReadWrite, U32).with_count(count)


def _finish(op_id: str, decls: list[BufferDecl], body: list[Node]) -> Program:
    return non_composable(with_entry_op_id(Program.wrapped(decls, (256, 1, 1), [wrap_anonymous(op_id, body)]), op_id))


# ---------------------------------------------------------------------------- binding strength
def ast_binding_strength(tok_types: str, out_depths: str, out_strengths: str, num_tokens: int) -> Program:
    """``out_strengths[t] = out_depths[t] * 100 + precedence(tok_types[t])`` (see the module doc)."""
    n = check_len(BINDING_OP_ID, "num_tokens", num_tokens, 1)
    tok = v("tok")
    body = [
        Node.let_bind("tok", Expr.load(tok_types, Expr.gid_x())),
        Node.let_bind("depth", Expr.load(out_depths, Expr.gid_x())),
        Node.let_bind("base_strength", Expr.mul(v("depth"), u(100))),
        Node.let_bind("precedence", u(0)),
        Node.if_then(Expr.or_(Expr.eq(tok, u(T.TOK_STAR)), Expr.eq(tok, u(T.TOK_SLASH))),
                     [Node.assign("precedence", u(40))]),
        Node.if_then(Expr.or_(Expr.eq(tok, u(T.TOK_PLUS)), Expr.eq(tok, u(T.TOK_MINUS))),
                     [Node.assign("precedence", u(30))]),
        Node.if_then(Expr.eq(tok, u(VYRE_ASSIGN_BYTE)), [Node.assign("precedence", u(10))]),
        Node.store(out_strengths, Expr.gid_x(), Expr.add(v("base_strength"), v("precedence"))),
    ]
    return _finish(BINDING_OP_ID, [_ro(tok_types, 0, n), _ro(out_depths, 1, n), _rw(out_strengths, 2, n)],
                   [Node.if_then(Expr.lt(Expr.gid_x(), u(n)), body)])


# ---------------------------------------------------------------------------- cfg blocks
def ast_cfg_blocks(tok_types: str, out_scope_parents: str, statements: str, num_statements: int,
                   out_block_headers: str) -> Program:
    """The nearest ``if``/``while`` token within 31 before each statement's start."""
    n = check_len(CFG_OP_ID, "num_statements", num_statements, 1)
    del out_scope_parents  # vyre: "reserved for V2", not declared
    body = [
        Node.let_bind("stmt_start", Expr.load(statements, Expr.mul(Expr.gid_x(), u(2)))),
        Node.let_bind("header_tok", u(INVALID_POS)),
        Node.let_bind("found", u(0)),
        # vyre runs all 31 steps (no early exit: the loop variable cannot be assigned)
        Node.loop_for("i", u(1), u(32), [Node.if_then(
            Expr.and_(Expr.eq(v("found"), u(0)), Expr.ge(v("stmt_start"), v("i"))), [
                Node.let_bind("check_idx", Expr.sub(v("stmt_start"), v("i"))),
                Node.let_bind("prev_tok", Expr.load(tok_types, v("check_idx"))),
                Node.if_then(Expr.or_(Expr.eq(v("prev_tok"), u(T.TOK_IF)), Expr.eq(v("prev_tok"), u(T.TOK_WHILE))),
                             [Node.assign("header_tok", v("check_idx")), Node.assign("found", u(1))])])]),
        Node.store(out_block_headers, Expr.gid_x(), v("header_tok")),
    ]
    return _finish(CFG_OP_ID, [_ro(tok_types, 0, min(n * 4, 0xFFFFFFFF)), _ro(statements, 1, min(n * 2, 0xFFFFFFFF)),
                               _rw(out_block_headers, 2, n)],
                   [Node.if_then(Expr.lt(Expr.gid_x(), u(n)), body)])


# ---------------------------------------------------------------------------- shunting yard
def _in(tok: Expr, lo: int, hi: int) -> Expr:
    return Expr.and_(Expr.ge(tok, u(lo)), Expr.le(tok, u(hi)))


def is_assignment(tok: Expr) -> Expr:
    return Expr.or_(Expr.eq(tok, u(T.TOK_ASSIGN)), _in(tok, T.TOK_PLUS_EQ, T.TOK_SLASH_EQ))


def precedence(tok: Expr) -> Expr:
    """operator.rs ``precedence``: a chain of range checks, 0 for a non-operator."""
    out = u(0)
    for cond, prec in reversed([
            (is_assignment(tok), 1), (Expr.eq(tok, u(T.TOK_OR)), 2), (Expr.eq(tok, u(T.TOK_AND)), 3),
            (_in(tok, T.TOK_EQ, T.TOK_NE), 4),
            (Expr.or_(_in(tok, T.TOK_LT, T.TOK_GT), _in(tok, T.TOK_LE, T.TOK_GE)), 5),
            (_in(tok, T.TOK_PLUS, T.TOK_MINUS), 6), (_in(tok, T.TOK_STAR, T.TOK_PERCENT), 7)]):
        out = Expr.select(cond, u(prec), out)
    return out


def ast_opcode(tok: Expr) -> Expr:
    """operator.rs ``ast_opcode``: offset tables over token ranges; anything else is AST_ADD."""
    def table(base: int, opcode: int) -> Expr:
        return Expr.add(Expr.sub(tok, u(base)), u(opcode))
    out = u(AST_ADD)
    for cond, value in reversed([
            (is_assignment(tok), u(AST_ASSIGN)), (_in(tok, T.TOK_MINUS, T.TOK_SLASH), table(T.TOK_MINUS, AST_SUB)),
            (Expr.eq(tok, u(T.TOK_PERCENT)), u(AST_MOD)), (_in(tok, T.TOK_EQ, T.TOK_NE), table(T.TOK_EQ, AST_EQ)),
            (_in(tok, T.TOK_LT, T.TOK_GT), table(T.TOK_LT, AST_LT)),
            (_in(tok, T.TOK_LE, T.TOK_GE), table(T.TOK_LE, AST_LE)),
            (_in(tok, T.TOK_AND, T.TOK_OR), table(T.TOK_AND, AST_LOGICAL_AND))]):
        out = Expr.select(cond, value, out)
    return out


class _Shunt:
    """The statement pass's node emitters (emit.rs), over one statement's stack bases."""

    def __init__(self, nodes: str, count: str, vals: str, ops: str) -> None:
        self.nodes, self.count, self.vals, self.ops = nodes, count, vals, ops
        self.base = Expr.mul(Expr.gid_x(), u(STACK_SLOTS_PER_STATEMENT))  # values and operators alike

    def _node(self, words: list[Expr]) -> list[Node]:
        return [Node.let_bind("ast_idx", Expr.atomic_add(self.count, u(0), u(4))),
                *[Node.store(self.nodes, Expr.add(v("ast_idx"), u(i)), w) for i, w in enumerate(words)]]

    def _push_value(self) -> list[Node]:
        return [Node.store(self.vals, Expr.add(self.base, v("v_sp")), v("ast_idx")),
                Node.assign("v_sp", Expr.add(v("v_sp"), u(1)))]

    def leaf(self) -> list[Node]:
        opcode = Expr.select(Expr.eq(v("tok"), u(T.TOK_INTEGER)), u(AST_CONST_INT), u(AST_VAR))
        return [Node.let_bind("opcode", opcode),
                *self._node([v("opcode"), u(INVALID_POS), u(INVALID_POS), v("tok_idx")]), *self._push_value()]

    def reduce(self, opcode: Expr) -> list[Node]:
        """Pop right then left, emit (opcode, left, right, MAX), push it."""
        pop = Node.assign("v_sp", Expr.sub(v("v_sp"), u(1)))
        return [pop, Node.let_bind("right_child", Expr.load(self.vals, Expr.add(self.base, v("v_sp")))),
                pop, Node.let_bind("left_child", Expr.load(self.vals, Expr.add(self.base, v("v_sp")))),
                *self._node([opcode, v("left_child"), v("right_child"), u(INVALID_POS)]), *self._push_value()]

    def push_op(self) -> list[Node]:
        return [Node.store(self.ops, Expr.add(self.base, v("o_sp")), v("tok")),
                Node.assign("o_sp", Expr.add(v("o_sp"), u(1)))]

    def _pop_loop(self, done: str, body: list[Node]) -> list[Node]:
        """Up to 64 steps while `done` is 0: an empty operator stack ends it, else `body`."""
        return [Node.let_bind(done, u(0)), Node.loop_for("pop", u(0), u(STACK_SLOTS_PER_STATEMENT), [
            Node.if_then(Expr.eq(v(done), u(0)), [
                Node.if_then(Expr.eq(v("o_sp"), u(0)), [Node.assign(done, u(1))]),
                Node.if_then(Expr.ne(v("o_sp"), u(0)), body)])])]

    def binary(self) -> list[Node]:
        """Reduce while the top operator binds at least as tightly (strictly, for a right-
        associative assignment) and two values are there, then push the token."""
        top_prec, cur = v("top_op_prec"), v("tok_prec")
        should_pop = Expr.and_(Expr.and_(Expr.ne(v("top_op"), u(T.TOK_LPAREN)), Expr.ne(top_prec, u(0))),
                               Expr.select(v("tok_is_assignment"), Expr.gt(top_prec, cur), Expr.ge(top_prec, cur)))
        step = [
            Node.let_bind("top_op", Expr.load(self.ops, Expr.add(self.base, Expr.sub(v("o_sp"), u(1))))),
            Node.let_bind("top_op_prec", precedence(v("top_op"))),
            Node.let_bind("top_ast_opcode", ast_opcode(v("top_op"))),
            Node.let_bind("reduce_now", Expr.and_(should_pop, Expr.ge(v("v_sp"), u(2)))),
            Node.if_then(v("reduce_now"), [Node.assign("o_sp", Expr.sub(v("o_sp"), u(1))),
                                           *self.reduce(v("top_ast_opcode"))]),
            Node.if_then(Expr.not_(v("reduce_now")), [Node.assign("done_bin", u(1))]),
        ]
        return [*self._pop_loop("done_bin", step), *self.push_op()]

    def unwind(self, done: str, stop_at_lparen: bool) -> list[Node]:
        """Pop operators, reducing each that is not '(' while two values are there; a ')' stops
        at its '(' (the rparen body), the final sweep empties the stack."""
        step = [
            Node.assign("o_sp", Expr.sub(v("o_sp"), u(1))),
            Node.let_bind("top_op", Expr.load(self.ops, Expr.add(self.base, v("o_sp")))),
            Node.let_bind("top_ast_opcode", ast_opcode(v("top_op"))),
            *([Node.if_then(Expr.eq(v("top_op"), u(T.TOK_LPAREN)), [Node.assign(done, u(1))])] if stop_at_lparen
              else []),
            Node.if_then(Expr.and_(Expr.ne(v("top_op"), u(T.TOK_LPAREN)), Expr.ge(v("v_sp"), u(2))),
                         self.reduce(v("top_ast_opcode"))),
        ]
        return self._pop_loop(done, step)


def _statement_pass(tok_types: str, statements: str, roots: str, s: _Shunt) -> list[Node]:
    t, pair = Expr.gid_x(), Expr.mul(Expr.gid_x(), u(2))
    return [
        Node.let_bind("stmt_start", Expr.load(statements, pair)),
        Node.let_bind("stmt_end", Expr.load(statements, Expr.add(pair, u(1)))),
        Node.let_bind("v_sp", u(0)),
        Node.let_bind("o_sp", u(0)),
        Node.loop_for("tok_idx", v("stmt_start"), v("stmt_end"), [
            Node.let_bind("tok", Expr.load(tok_types, v("tok_idx"))),
            Node.let_bind("tok_prec", precedence(v("tok"))),
            Node.let_bind("tok_is_assignment", is_assignment(v("tok"))),
            Node.if_then(Expr.or_(Expr.eq(v("tok"), u(T.TOK_INTEGER)), Expr.eq(v("tok"), u(T.TOK_IDENTIFIER))),
                         s.leaf()),
            Node.if_then(Expr.ne(v("tok_prec"), u(0)), s.binary()),
            Node.if_then(Expr.eq(v("tok"), u(T.TOK_LPAREN)), s.push_op()),
            Node.if_then(Expr.eq(v("tok"), u(T.TOK_RPAREN)), s.unwind("done_rp", True)),
        ]),
        Node.block(s.unwind("done_fs", False)),
        Node.if_then(Expr.gt(v("v_sp"), u(0)), [
            Node.store(roots, t, Expr.load(s.vals, Expr.add(s.base, Expr.sub(v("v_sp"), u(1)))))]),
        Node.if_then(Expr.eq(v("v_sp"), u(0)), [Node.store(roots, t, u(INVALID_POS))]),
    ]


def _shunting(tok_types: str, statements: str, num_statements: int, out_ast_nodes: str, out_ast_count: str,
              out_statement_roots: str, scratch_val_stack: str, scratch_op_stack: str, token_capacity: int,
              statement_capacity: Optional[int]) -> Program:
    check_len(SHUNTING_OP_ID, "num_statements", num_statements)
    tokens = min(max(check_len(SHUNTING_OP_ID, "token_capacity", token_capacity), 1), MAX_TOK_SCAN)
    stmts = None if statement_capacity is None else \
        min(max(check_len(SHUNTING_OP_ID, "statement_capacity", statement_capacity), 1), MAX_TOK_SCAN)
    limit = u(num_statements if stmts is None else stmts)  # a capacity overrides num_statements, as in vyre
    scratch = (MAX_TOK_SCAN if stmts is None else stmts) * STACK_SLOTS_PER_STATEMENT
    s = _Shunt(out_ast_nodes, out_ast_count, scratch_val_stack, scratch_op_stack)
    decls = [_ro(tok_types, 0, 0), _ro(statements, 1, 0), _rw(out_ast_nodes, 2, tokens * 4), _rw(out_ast_count, 3, 1),
             _rw(out_statement_roots, 4, stmts or 0), _rw(scratch_val_stack, 5, scratch),
             _rw(scratch_op_stack, 6, scratch)]
    live = Expr.lt(Expr.gid_x(), Expr.min(Expr.div(Expr.buf_len(statements), u(2)), limit))
    return _finish(SHUNTING_OP_ID, decls, [Node.if_then(live, [child_phase(
        SHUNTING_OP_ID, STATEMENT_PASS_OP_ID, _statement_pass(tok_types, statements, out_statement_roots, s))])])


def ast_shunting_yard(tok_types: str, statements: str, num_statements: int, out_ast_nodes: str, out_ast_count: str,
                      out_statement_roots: str, scratch_val_stack: str, scratch_op_stack: str) -> Program:
    """The shunting-yard pass at vyre's fixed capacities (65536 tokens; roots sized by the data)."""
    return _shunting(tok_types, statements, num_statements, out_ast_nodes, out_ast_count, out_statement_roots,
                     scratch_val_stack, scratch_op_stack, MAX_TOK_SCAN, None)


def ast_shunting_yard_with_capacity(tok_types: str, statements: str, num_statements: int, out_ast_nodes: str,
                                    out_ast_count: str, out_statement_roots: str, scratch_val_stack: str,
                                    scratch_op_stack: str, token_capacity: int, statement_capacity: int) -> Program:
    """The shunting-yard pass with caller-bounded buffers (each capacity clamped to [1, 65536])."""
    return _shunting(tok_types, statements, num_statements, out_ast_nodes, out_ast_count, out_statement_roots,
                     scratch_val_stack, scratch_op_stack, token_capacity, statement_capacity)


# ---------------------------------------------------------------------------- registrations (vyre's vectors)
def _build_binding(num_tokens: int = 4) -> Program:
    return ast_binding_strength("tok_types", "out_depths", "out_strengths", num_tokens)


def _build_cfg(num_statements: int = 2) -> Program:
    return ast_cfg_blocks("tok_types", "out_scope_parents", "statements", num_statements, "out_block_headers")


def _build_shunting(num_statements: int = 100, token_capacity: int = MAX_TOK_SCAN,
                    statement_capacity: int = 100) -> Program:
    return ast_shunting_yard_with_capacity("tok_types", "statements", num_statements, "out_ast_nodes", "out_ast_count",
                                           "out_statement_roots", "scratch_val_stack", "scratch_op_stack",
                                           token_capacity, statement_capacity)


register_case(BINDING_OP_ID, _build_binding,
              [pack_u32_slice([T.TOK_STAR, T.TOK_PLUS, VYRE_ASSIGN_BYTE, 0]), pack_u32_slice([1, 1, 0, 0]), bytes(16)],
              [pack_u32_slice([140, 130, 10, 0])], category="parsing", ulp=ULP, bench=dict(num_tokens=1 << 20))
register_case(CFG_OP_ID, _build_cfg, [pack_u32_slice([T.TOK_IF] + [0] * 7), pack_u32_slice([1, 1, 0, 0]), bytes(8)],
              [pack_u32_slice([0, INVALID_POS])], category="parsing", ulp=ULP, bench=dict(num_statements=1 << 18))


def _shunting_inputs() -> list[list[bytes]]:
    """vyre's vector: one statement [0, 1) over an identifier, 99 empty ones (built on demand:
    the buffers are 65536 tokens and 4 x 65536 node words)."""
    return [[pack_u32_slice([T.TOK_IDENTIFIER] + [0] * (MAX_TOK_SCAN - 1)), pack_u32_slice([0, 1] + [0] * 198),
             bytes(MAX_TOK_SCAN * 16), bytes(4), bytes(400), bytes(6400 * 4), bytes(6400 * 4)]]


def _shunting_expected() -> list[list[bytes]]:
    nodes = pack_u32_slice([AST_VAR, INVALID_POS, INVALID_POS, 0]) + bytes(MAX_TOK_SCAN * 16 - 16)
    return [[nodes, pack_u32_slice([4]), pack_u32_slice([0] + [INVALID_POS] * 99), bytes(6400 * 4),
             bytes(6400 * 4)]]


register_op(SHUNTING_OP_ID, _build_shunting, category="parsing", ulp=ULP, test_inputs=_shunting_inputs,
            expected_output=_shunting_expected, bench=dict(statement_capacity=4096))
