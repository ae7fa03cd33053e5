"""Facts about IR the optimiser passes share: effects, traps, variables, buffers, types.

Everything here is conservative: when a fact cannot be established (an unknown type,
an unsupported expression kind) the answer is the one that keeps a pass from acting.
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BINOPS, UNOPS, BinOp
from ..ir.program import Program
from ..ir.types import DataType

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

#: Expression kinds that read the workgroup / subgroup structure of the dispatch.
WORKGROUP_EXPRS = (E.LocalId, E.WorkgroupId, E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce,
                   E.SubgroupLocalId, E.SubgroupSize)
#: Expression kinds whose value depends on which invocation evaluates them.
INVOCATION_EXPRS = (E.InvocationId,) + WORKGROUP_EXPRS
#: Expression kinds with effects or semantics the passes do not model (never moved, folded or removed).
OPAQUE_EXPRS = (E.Atomic, E.Call, E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce)


# ----------------------------------------------------------------------------- walking
def walk_nodes(nodes: Iterable[N.Node]) -> Iterator[N.Node]:
    """Every statement in `nodes`, nested ones included (pre-order)."""
    stack = list(nodes)[::-1]
    while stack:
        n = stack.pop()
        yield n
        for _, body in reversed(N.node_bodies(n)):
            stack.extend(reversed(body))


def node_all_exprs(nodes: Iterable[N.Node]) -> Iterator[E.Expr]:
    """Every expression (and sub-expression) evaluated anywhere in `nodes`."""
    for n in walk_nodes(nodes):
        for e in N.node_exprs(n):
            yield from E.walk(e)


def program_nodes(p: Program) -> Iterator[N.Node]:
    return walk_nodes(p.entry)


def map_expr(e: E.Expr, fn: Callable[[E.Expr], Optional[E.Expr]]) -> E.Expr:
    """Rebuild `e` bottom-up; `fn(x)` returns a replacement for x (after its children were
    rebuilt) or None to keep it. Unchanged subtrees are returned as the same objects."""
    kids = E.children(e)
    if kids:
        new = tuple(map_expr(k, fn) for k in kids)
        if any(a is not b for a, b in zip(new, kids)):
            e = rebuild(e, new)
    r = fn(e)
    return e if r is None else r


def rebuild(e: E.Expr, kids: tuple) -> E.Expr:
    """`e` with its children (in E.children order) replaced by `kids`."""
    if isinstance(e, E.Load):
        return E.Load(e.buffer, kids[0])
    if isinstance(e, E.BinOpExpr):
        return E.BinOpExpr(e.op, kids[0], kids[1])
    if isinstance(e, E.UnOpExpr):
        return E.UnOpExpr(e.op, kids[0])
    if isinstance(e, E.Select):
        return E.Select(*kids)
    if isinstance(e, E.Cast):
        return E.Cast(e.target, kids[0])
    if isinstance(e, E.Fma):
        return E.Fma(*kids)
    if isinstance(e, E.Atomic):
        if e.expected is not None:
            return E.Atomic(e.op, e.buffer, kids[0], kids[1], kids[2], e.ordering)
        return E.Atomic(e.op, e.buffer, kids[0], None, kids[1], e.ordering)
    if isinstance(e, E.Call):
        return E.Call(e.op_id, tuple(kids))
    if isinstance(e, E.SubgroupBallot):
        return E.SubgroupBallot(kids[0])
    if isinstance(e, E.SubgroupShuffle):
        return E.SubgroupShuffle(kids[0], kids[1])
    if isinstance(e, E.SubgroupReduce):
        return E.SubgroupReduce(e.op, kids[0])
    return e


def map_node_exprs(n: N.Node, fn: Callable[[E.Expr], E.Expr]) -> N.Node:
    """`n` with its own expressions (not nested statements') replaced by fn(expr)."""
    if isinstance(n, N.Let):
        return N.Let(n.name, fn(n.value))
    if isinstance(n, N.Assign):
        return N.Assign(n.name, fn(n.value))
    if isinstance(n, N.Store):
        return N.Store(n.buffer, fn(n.index), fn(n.value))
    if isinstance(n, N.If):
        return N.If(fn(n.cond), n.then, n.otherwise)
    if isinstance(n, N.Loop):
        return N.Loop(n.var, fn(n.from_), fn(n.to), n.body)
    if isinstance(n, N.Trap):
        return N.Trap(fn(n.address), n.tag)
    return n


def with_bodies(n: N.Node, bodies: list) -> N.Node:
    """`n` with its nested statement lists (in N.node_bodies order) replaced."""
    if isinstance(n, N.If):
        return N.If(n.cond, tuple(bodies[0]), tuple(bodies[1]))
    if isinstance(n, N.Loop):
        return N.Loop(n.var, n.from_, n.to, tuple(bodies[0]))
    if isinstance(n, N.Block):
        return N.Block(tuple(bodies[0]))
    if isinstance(n, N.Region):
        return N.Region(n.generator, n.source_region, tuple(bodies[0]))
    return n


def replace_entry(p: Program, entry) -> Program:
    return Program(p.buffers, p.workgroup_size, tuple(entry), p.entry_op_id, p.non_composable_with_self)


# ----------------------------------------------------------------------------- variables
def expr_vars(e: E.Expr) -> set[str]:
    return {x.name for x in E.walk(e) if isinstance(x, E.Var)}


def read_vars(nodes: Iterable[N.Node]) -> set[str]:
    """Variables read anywhere in `nodes` (loop bounds and nested statements included)."""
    return {x.name for x in node_all_exprs(nodes) if isinstance(x, E.Var)}


def assigned_vars(nodes: Iterable[N.Node]) -> set[str]:
    """Variables written by Assign anywhere in `nodes`."""
    return {n.name for n in walk_nodes(nodes) if isinstance(n, N.Assign)}


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
    return {x.buffer for x in E.walk(e) if isinstance(x, (E.Load, E.BufLen))}


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


def expr_type(e: E.Expr, env: dict, bufs: dict) -> Optional[DataType]:
    """Static type of `e` (None if unknown)."""
    if isinstance(e, E.LitU32):
        return U32
    if isinstance(e, E.LitI32):
        return I32
    if isinstance(e, E.LitF32):
        return F32
    if isinstance(e, E.LitBool):
        return BOOL
    if isinstance(e, E.Var):
        return env.get(e.name)
    if isinstance(e, E.Load):
        b = bufs.get(e.buffer)
        return b.element if b is not None else None
    if isinstance(e, (E.BufLen, E.InvocationId, E.WorkgroupId, E.LocalId, E.Atomic, E.SubgroupLocalId,
                      E.SubgroupSize)):
        return U32
    if isinstance(e, E.BinOpExpr):
        info = BINOPS.get(e.op)
        t = expr_type(e.left, env, bufs)
        return None if info is None or t is None else info.result_type(t)
    if isinstance(e, E.UnOpExpr):
        info = UNOPS.get(e.op)
        t = expr_type(e.operand, env, bufs)
        return None if info is None or t is None else info.result_type(t)
    if isinstance(e, E.Select):
        return expr_type(e.true_val, env, bufs)
    if isinstance(e, E.Cast):
        return e.target
    if isinstance(e, E.Fma):
        return F32
    return None


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
        for x in E.walk(e):
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
        stack: list = [(e, False)]
        done: list = []
        while stack:
            x, expanded = stack.pop()
            kids = E.children(x)
            if expanded or not kids:
                ok = self.node_pure(x) and all(done.pop() for _ in kids)
                out.append((x, ok))
                done.append(ok)
            else:
                stack.append((x, True))
                stack.extend((k, False) for k in kids)
        return out

    def is_pure(self, e: E.Expr) -> bool:
        """No effects, cannot trap, reads only buffers nothing in the program writes."""
        if self.may_trap(e):
            return False
        return not any(isinstance(x, E.Load) and (x.buffer in self.written or x.buffer in self.workgroup_bufs)
                       for x in E.walk(e))


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


def size_of(nodes: Iterable[N.Node]) -> int:
    """Expression nodes in `nodes` (a cost proxy)."""
    return sum(1 for _ in node_all_exprs(nodes))
