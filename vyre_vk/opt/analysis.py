"""Facts about IR the optimiser passes share: effects, traps, variables, buffers, types.

Everything here is conservative: when a fact cannot be established (an unknown type,
an unsupported expression kind) the answer is the one that keeps a pass from acting.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Iterator, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program
from ..ir.types import BufferAccess, DataType
from ..ir.walk import expr_children, expr_type, node_bodies, node_exprs, walk_expr, walk_expr_post
from ..ir.walk import node_all_exprs, walk_nodes  # noqa: F401 (re-exported: tests import them from here)

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

#: Expression kinds that read the workgroup / subgroup structure of the dispatch.
WORKGROUP_EXPRS = (E.LocalId, E.WorkgroupId, E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce,
                   E.SubgroupLocalId, E.SubgroupSize)
#: Expression kinds whose value depends on which invocation evaluates them.
INVOCATION_EXPRS = (E.InvocationId,) + WORKGROUP_EXPRS
#: Expression kinds with effects or semantics the passes do not model (never moved, folded or removed).
OPAQUE_EXPRS = (E.Atomic, E.Call, E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce)


# ----------------------------------------------------------------------------- walking
# The generic traversals (children, rebuild, pre/post order, rewriting) are vyre_vk/ir/walk.py's.
def program_nodes(p: Program) -> Iterator[N.Node]:
    return walk_nodes(p.entry)


def replace_entry(p: Program, entry) -> Program:
    return Program(p.buffers, p.workgroup_size, tuple(entry), p.entry_op_id, p.non_composable_with_self)


# ----------------------------------------------------------------------------- variables
def expr_vars(e: E.Expr) -> set[str]:
    return {x.name for x in walk_expr(e) if isinstance(x, E.Var)}


def read_vars(nodes: Iterable[N.Node]) -> set[str]:
    """Variables read anywhere in `nodes` (loop bounds and nested statements included)."""
    return {x.name for x in node_all_exprs(nodes) if isinstance(x, E.Var)}


def assigned_vars(nodes: Iterable[N.Node]) -> set[str]:
    """Variables written by Assign anywhere in `nodes`."""
    return {n.name for n in walk_nodes(nodes) if isinstance(n, N.Assign)}


def free_vars(nodes: Iterable[N.Node], bound: frozenset = frozenset()) -> set[str]:
    """Variables `nodes` read or assign that no Let or loop of theirs in scope binds (scopes:
    a Let binds for the rest of its list; a nested list sees its parent's names).

    >>> free_vars([N.Block((N.Let("x", E.LitU32(1)), N.Assign("x", E.Var("y"))))])
    {'y'}
    """
    out: set = set()
    names = set(bound)
    for n in nodes:
        for e in node_exprs(n):
            out |= {x.name for x in walk_expr(e) if isinstance(x, E.Var)} - names
        if isinstance(n, N.Assign) and n.name not in names:
            out.add(n.name)
        inner = names | ({n.var} if isinstance(n, N.Loop) else set())
        for body in node_bodies(n):
            out |= free_vars(body, frozenset(inner))
        if isinstance(n, N.Let):
            names.add(n.name)
    return out


def read_only(b: BufferDecl, binding: int) -> BufferDecl:
    """`b` as a pre-pass reads it: read-only at `binding`, not a result of that kernel."""
    return dataclasses.replace(b, binding=binding, access=BufferAccess.ReadOnly, is_output=False,
                               pipeline_live_out=False, output_byte_range=None)


def next_binding(p: Program) -> int:
    """The first binding after every storage buffer of `p` (where a stage's new scratch goes)."""
    return max((b.binding for b in p.buffers if not b.is_workgroup), default=-1) + 1


def holds_costly(nodes: Iterable[N.Node], unops: frozenset) -> bool:
    """Whether `nodes` hold a unary op of `unops` or a division (each lowers to a long routine)."""
    return any((isinstance(x, E.UnOpExpr) and x.op in unops) or (isinstance(x, E.BinOpExpr) and x.op is BinOp.Div)
               for x in node_all_exprs(nodes))


def defined_vars(nodes: Iterable[N.Node]) -> set[str]:
    """Names bound (Let or loop variable) anywhere in `nodes`."""
    out = set()
    for n in walk_nodes(nodes):
        if isinstance(n, N.Let):
            out.add(n.name)
        elif isinstance(n, N.Loop):
            out.add(n.var)
    return out


def all_names(p: Program) -> set[str]:
    return {b.name for b in p.buffers} | defined_vars(p.entry) | read_vars(p.entry)


class NameSource:
    """Fresh names that collide with nothing in the program (``prefix`` + counter)."""

    def __init__(self, taken: set[str], prefix: str) -> None:
        self.taken, self.prefix, self.n = set(taken), prefix, 0

    def __call__(self, hint: str = "") -> str:
        while True:
            name = f"{self.prefix}{hint}{self.n}"
            self.n += 1
            if name not in self.taken:
                self.taken.add(name)
                return name


# ----------------------------------------------------------------------------- buffers
def stored_buffers(nodes: Iterable[N.Node]) -> set[str]:
    """Buffers written by a Store or an Atomic anywhere in `nodes`."""
    out = {n.buffer for n in walk_nodes(nodes) if isinstance(n, N.Store)}
    out |= {x.buffer for x in node_all_exprs(nodes) if isinstance(x, E.Atomic)}
    return out


def loaded_buffers(e: E.Expr) -> set[str]:
    return {x.buffer for x in walk_expr(e) if isinstance(x, (E.Load, E.BufLen))}


# ----------------------------------------------------------------------------- types
def var_types(p: Program) -> dict[str, Optional[DataType]]:
    """Type of every Let-bound / loop variable; None where a name is bound with two types."""
    bufs = {b.name: b for b in p.buffers}
    out: dict[str, Optional[DataType]] = {}
    for n in program_nodes(p):
        if isinstance(n, N.Let):
            t = expr_type(n.value, out, bufs)
        elif isinstance(n, N.Loop):
            t = U32
        else:
            continue
        name = n.name if isinstance(n, N.Let) else n.var
        out[name] = t if out.get(name, t) == t else None
    return out


class Facts:
    """Per-program facts a pass asks about expressions."""

    def __init__(self, p: Program) -> None:
        self.program = p
        self.bufs = {b.name: b for b in p.buffers}
        self.env = var_types(p)
        self.written = stored_buffers(p.entry)
        self.workgroup_bufs = {b.name for b in p.buffers if b.is_workgroup}

    def type_of(self, e: E.Expr) -> Optional[DataType]:
        return expr_type(e, self.env, self.bufs)

    def may_trap(self, e: E.Expr) -> bool:
        """True if evaluating `e` can abort the reference (i32 division) or has an effect."""
        for x in walk_expr(e):
            if isinstance(x, OPAQUE_EXPRS) or type(x) not in _KNOWN_EXPRS:
                return True
            if isinstance(x, E.BinOpExpr) and x.op in (BinOp.Div, BinOp.Mod):
                t = self.type_of(x.left)
                if t is None or t is I32:
                    if not (isinstance(x.right, E.LitI32) and x.right.value not in (0, -1)):
                        return True
        return False

    def node_pure(self, x: E.Expr) -> bool:
        """`x` itself (not its children) has no effect, cannot trap, reads no written buffer."""
        if isinstance(x, OPAQUE_EXPRS) or type(x) not in _KNOWN_EXPRS:
            return False
        if isinstance(x, E.BinOpExpr) and x.op in (BinOp.Div, BinOp.Mod):
            t = self.type_of(x.left)
            if (t is None or t is I32) and not (isinstance(x.right, E.LitI32) and x.right.value not in (0, -1)):
                return False
        return not (isinstance(x, E.Load) and (x.buffer in self.written or x.buffer in self.workgroup_bufs))

    def pure_subtrees(self, e: E.Expr) -> list[tuple[E.Expr, bool]]:
        """(sub-expression, is_pure) for every node of `e`, post-order, in one pass (is_pure on
        each node separately is quadratic in the depth of long operator chains)."""
        out: list = []
        done: list = []  # is_pure of finished subtrees; an impure node may leave its kids' on it,
        for x in walk_expr_post(e):  # but every node that would pop past them is impure too
            ok = self.node_pure(x) and all(done.pop() for _ in expr_children(x))
            out.append((x, ok))
            done.append(ok)
        return out

    def is_pure(self, e: E.Expr) -> bool:
        """No effects, cannot trap, reads only buffers nothing in the program writes."""
        if self.may_trap(e):
            return False
        return not any(isinstance(x, E.Load) and (x.buffer in self.written or x.buffer in self.workgroup_bufs)
                       for x in walk_expr(e))

    def computed_from(self, e: E.Expr, names: set, forbid: tuple = INVOCATION_EXPRS) -> bool:
        """`e` is pure (:meth:`is_pure`), reads only the variables `names` and holds no expression of
        the kinds `forbid` (by default: nothing that tells invocations apart)."""
        return self.is_pure(e) and not any(isinstance(x, forbid) or (isinstance(x, E.Var) and x.name not in names)
                                           for x in walk_expr(e))


_KNOWN_EXPRS = frozenset({E.LitU32, E.LitI32, E.LitF32, E.LitBool, E.Var, E.Load, E.BufLen, E.InvocationId,
                          E.WorkgroupId, E.LocalId, E.BinOpExpr, E.UnOpExpr, E.Select, E.Cast, E.Fma})


def uses_workgroup_scope(p: Program) -> Optional[str]:
    """Why the program observes its workgroup (None if it does not)."""
    if any(b.is_workgroup for b in p.buffers):
        return "workgroup buffer"
    for n in program_nodes(p):
        if isinstance(n, N.Barrier):
            return "barrier"
        if isinstance(n, N.UNSUPPORTED_NODES):
            return type(n).__name__
    for x in node_all_exprs(p.entry):
        if isinstance(x, WORKGROUP_EXPRS):
            return type(x).__name__
        if isinstance(x, (E.Atomic, E.Call)):
            return type(x).__name__
    return None


def zero_literal(t: DataType) -> E.Expr:
    """The 0 of an f32/u32/i32/u8/i8 value (what an out-of-bounds load reads; workgroup memory's
    start). Byte values have no literal: a cast of the 32-bit zero.

    >>> zero_literal(DataType.U32), zero_literal(DataType.U8).target
    (LitU32(value=0), DataType.U8)
    """
    if t in (DataType.U8, DataType.I8):
        return E.Cast(t, E.LitU32(0) if t is DataType.U8 else E.LitI32(0))
    return {DataType.F32: E.Expr.f32(0.0), DataType.U32: E.LitU32(0), DataType.I32: E.LitI32(0)}[t]


ZERO_TYPES = (DataType.F32, DataType.U32, DataType.I32)


def size_of(nodes: Iterable[N.Node]) -> int:
    """Expression nodes in `nodes` (a cost proxy)."""
    return sum(1 for _ in node_all_exprs(nodes))


def iteration(base: E.Expr, j: int) -> E.Expr:
    """``base + j``: the loop variable of copy `j` in a block of iterations starting at `base`."""
    return base if j == 0 else E.BinOpExpr(BinOp.Add, base, E.LitU32(j))


def blocked_loop(loop: N.Loop, factor: int, fresh: "NameSource", body_of) -> list:
    """`loop` (literal bounds) as blocks of `factor` iterations, then the rest as `loop` itself.

    The block loop's body is ``let base = from + io * factor`` followed by ``body_of(Var(base))``,
    the statements that run the block's `factor` iterations (see :func:`iteration`)."""
    lo, hi = loop.from_.value, loop.to.value
    outer = (hi - lo) // factor
    io, base = fresh(loop.var + "o"), fresh(loop.var + "b")
    head = N.Let(base, E.BinOpExpr(BinOp.Add, E.LitU32(lo), E.BinOpExpr(BinOp.Mul, E.Var(io), E.LitU32(factor))))
    out: list = [N.Loop(io, E.LitU32(0), E.LitU32(outer), (head, *body_of(E.Var(base))))]
    if lo + outer * factor < hi:
        out.append(N.Loop(loop.var, E.LitU32(lo + outer * factor), loop.to, loop.body))
    return out
