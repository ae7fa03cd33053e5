"""Validation of statements: scopes and names, assignments, stores, control flow (loops, ifs,
barriers, returns) and unreachable code (fusion hazards: validate_hazard).

Part of :mod:`vyre_vk.ir.validate`; expressions are validate_expr's, subgroup placement
validate_subgroup's.

Example::

    >>> store_compatible(DataType.U32, DataType.Bool), store_compatible(DataType.F32, DataType.U32)
    (True, False)
"""
from __future__ import annotations

from typing import Optional

from . import expr as E
from . import node as N
from .types import BARRIER_ORDERINGS, DataType
from .validate_base import (BOOL, I32, MAX_NESTING, SG_U, U32, UNSUPPORTED, Binding, BufferAccessError,
                            ControlFlowError, Ctx, ProgramShapeError, ScopeError, TypeMismatch, UndeclaredName,
                            UnsupportedFeature, err, tname)
from .validate_expr import buffer, divergent as is_divergent, etype
from .validate_subgroup import check_subgroup_statement, has_collective, sg_bind_level, sg_join, sg_level
from .walk import node_exprs, walk_expr, walk_nodes


def check_list(ctx: Ctx, nodes: tuple, path: str, depth: int, divergent: bool,
               new_scope: Optional[dict[str, Binding]] = None) -> None:
    if depth > MAX_NESTING:
        err(ProgramShapeError, path, f"statements nested {depth} levels deep (limit {MAX_NESTING}).",
            "flatten the program or split it into several programs.")
    if not isinstance(nodes, tuple):
        err(ProgramShapeError, path, f"statement list is a {type(nodes).__name__}, not a tuple.",
            "build nodes with the Node helpers (they store tuples).")
    ctx.scopes.append(new_scope if new_scope is not None else {})
    # Fusion hazards are validate_hazard's (one pass over the whole entry after these checks).
    for i, n in enumerate(nodes):
        npath = f"{path}[{i}]"
        if i > 0 and isinstance(nodes[i - 1], N.Return):
            err(ControlFlowError, npath, "unreachable statement after `return`.",
                "remove the statements after Return or move the Return to the end of the list.")
        check_node(ctx, n, npath, depth, divergent)
    ctx.scopes.pop()


def buffer_uses(n: N.Node) -> tuple[set[str], set[str]]:
    """(buffers `n` stores to or reads plainly, buffers it accesses atomically), nested statements included."""
    reads: set[str] = set()
    atoms: set[str] = set()
    for x in walk_nodes((n,)):
        if isinstance(x, N.Store):
            reads.add(x.buffer)
        for root in node_exprs(x):
            for e in walk_expr(root):
                if isinstance(e, (E.Load, E.BufLen)):
                    reads.add(e.buffer)
                elif isinstance(e, E.Atomic):
                    atoms.add(e.buffer)
    return reads, atoms


def check_name(name: object, path: str, what: str) -> None:
    if not isinstance(name, str) or not name:
        err(ScopeError, path, f"{what} name {name!r} is empty or not a string.", f"give the {what} a non-empty name.")


def bind(ctx: Ctx, name: str, b: Binding, path: str, what: str) -> None:
    check_name(name, path, what)
    if name in ctx.scopes[-1] and not ctx.scopes[-1][name].loop_var:
        err(ScopeError, path, f"duplicate `let {name}` in the same statement list (V032).",
            f"use Node.assign('{name}', ...) to update it, or pick a new name.")
    if ctx.lookup(name) is not None:
        err(ScopeError, path, f"`{name}` shadows a binding that is still in scope (V008).",
            "rename the inner binding; vyre never allows shadowing.")
    ctx.scopes[-1][name] = b


def check_node(ctx: Ctx, n: object, path: str, depth: int, divergent: bool) -> None:
    """Check statement `n` (at `path`, `depth` lists deep; `divergent`: under invocation-dependent control flow)."""
    ctx.nodes += 1
    if ctx.nodes > ctx.max_nodes:
        err(ProgramShapeError, path, f"program has more than {ctx.max_nodes} statements (V019).",
            "split the program into several programs.")
    if ctx.has_sg:
        check_subgroup_statement(n, path)
    if isinstance(n, N.Let):
        t = etype(ctx, n.value, path + ".value")
        lvl = sg_bind_level(sg_level(ctx, n.value), ctx.sg_ctrl)
        bind(ctx, n.name, Binding(t, False, divergent or is_divergent(ctx, n.value), lvl), path, "let")
    elif isinstance(n, N.Assign):
        check_name(n.name, path, "assigned variable")
        b = ctx.lookup(n.name)
        if b is None:
            err(UndeclaredName, path, f"assignment to undeclared variable `{n.name}`.",
                f"declare it first with Node.letbind('{n.name}', ...) in an enclosing scope.")
        if b.loop_var:
            err(ScopeError, path, f"assignment to loop variable `{n.name}` (V011).",
                "loop variables are immutable; copy it into a let binding and assign that.")
        t = etype(ctx, n.value, path + ".value")
        if b.type is not None and t is not None and t != b.type:
            err(TypeMismatch, path, f"assigning a {t.value} value to `{n.name}`, which is {b.type.value} (V045).",
                f"cast the value with Expr.cast(DataType.{b.type.name}, ...) or bind a new variable.")
        if divergent or is_divergent(ctx, n.value):
            b.divergent = True
        b.sg = sg_join(b.sg, sg_level(ctx, n.value), ctx.sg_ctrl)
    elif isinstance(n, N.Store):
        buf = buffer(ctx, n.buffer, path, "store to")
        if not buf.access.writable:
            err(BufferAccessError, path, f"store to `{n.buffer}`, which is {buf.access.name}.",
                f"declare `{n.buffer}` with BufferDecl.output/read_write, or store to another buffer.")
        it = etype(ctx, n.index, path + ".index")
        if it is not U32:
            err(TypeMismatch, path, f"store index has type {tname(it)}, expected u32.",
                "cast the index with Expr.cast(DataType.U32, ...).")
        vt = etype(ctx, n.value, path + ".value")
        if vt is not None and not store_compatible(buf.element, vt):
            err(TypeMismatch, path, f"storing a {vt.value} value into `{n.buffer}` of {buf.element.value}.",
                f"cast the value with Expr.cast(DataType.{buf.element.name}, ...).")
        if isinstance(n.index, E.LitU32) and buf.count and n.index.value >= buf.count:
            err(BufferAccessError, path, f"constant index {n.index.value} is out of range for `{n.buffer}` "
                f"with {buf.count} elements (V036).", f"use an index below {buf.count}.")
    elif isinstance(n, N.If):
        t = etype(ctx, n.cond, path + ".cond")
        if t not in (U32, BOOL):
            err(TypeMismatch, path, f"if condition has type {tname(t)}, expected bool or u32.",
                "compare it explicitly, e.g. Expr.ne(x, Expr.f32(0.0)).")
        div = divergent or is_divergent(ctx, n.cond)
        saved = ctx.sg_ctrl
        ctx.sg_ctrl = sg_join(saved, sg_level(ctx, n.cond))
        check_list(ctx, n.then, path + ".if.then", depth + 1, div)
        check_list(ctx, n.otherwise, path + ".if.else", depth + 1, div)
        ctx.sg_ctrl = saved
    elif isinstance(n, N.Loop):
        for k, e in (("from", n.from_), ("to", n.to)):
            t = etype(ctx, e, f"{path}.{k}")
            if t is not U32:
                err(TypeMismatch, path, f"loop `{n.var}` bound `{k}` has type {tname(t)}, expected u32.",
                    "cast the bound with Expr.cast(DataType.U32, ...).")
        div = divergent or is_divergent(ctx, n.from_) or is_divergent(ctx, n.to)
        lpath = f"{path}.loop({n.var}).body"
        check_name(n.var, path, "loop variable")
        if ctx.lookup(n.var) is not None:
            err(ScopeError, path, f"loop variable `{n.var}` shadows a binding that is still in scope (V008).",
                "rename the loop variable.")
        bounds = sg_join(sg_level(ctx, n.from_), sg_level(ctx, n.to))
        saved = (ctx.sg_ctrl, ctx.sg_loops_uniform, ctx.sg_returned)
        ctx.sg_ctrl = sg_join(saved[0], bounds)
        ctx.sg_loops_uniform = saved[1] and bounds == SG_U
        check_list(ctx, n.body, lpath, depth + 1, div, {n.var: Binding(U32, True, div, ctx.sg_ctrl)})
        if saved[2] is None and ctx.sg_returned is not None and has_collective(n.body):
            err(ControlFlowError, ctx.sg_returned, "return under invocation-dependent control flow inside a loop "
                "that runs subgroup operations: the next iteration's subgroup operation misses this lane.",
                "guard the rest of the loop body with an if instead of returning early.")
        ctx.sg_ctrl, ctx.sg_loops_uniform = saved[0], saved[1]
    elif isinstance(n, N.Block):
        check_list(ctx, n.body, path + ".block.body", depth + 1, divergent)
    elif isinstance(n, N.Region):
        if not isinstance(n.generator, str):
            err(ProgramShapeError, path, "region generator is not a string.", "use the op id as generator.")
        check_list(ctx, n.body, path + ".region.body", depth + 1, divergent)
    elif isinstance(n, N.Barrier):
        if n.ordering not in BARRIER_ORDERINGS:
            err(ControlFlowError, path, f"barrier ordering {getattr(n.ordering, 'name', n.ordering)} is "
                "not allowed (V043).", "use MemoryOrdering.SeqCst (Node.barrier()).")
        if divergent:
            err(ControlFlowError, path, "barrier inside divergent control flow (V010): not every invocation "
                "of the workgroup is guaranteed to reach it.",
                "move the barrier out of if/loop statements whose condition depends on the invocation id, "
                "a load or an atomic.")
    elif isinstance(n, N.Return):
        if divergent and ctx.sg_returned is None:
            ctx.sg_returned = path
    elif isinstance(n, N.Trap):
        etype(ctx, n.address, path + ".address")
        if not isinstance(n.tag, str):
            err(ProgramShapeError, path, "trap tag is not a string.", "give the trap a string tag.")
    elif isinstance(n, N.UNSUPPORTED_NODES):
        err(UnsupportedFeature, path, f"node kind {type(n).__name__} is {UNSUPPORTED}.",
            "express it with loads, stores and loops, or run the program on vyre's own backends.")
    else:
        err(ProgramShapeError, path, f"{type(n).__name__} is not an IR node.",
            "build statements with the Node helpers (let_bind, store, if_then, loop_for, ...).")


def store_compatible(elem: DataType, vt: DataType) -> bool:
    return elem == vt or {elem, vt} in ({U32, BOOL}, {U32, I32})


__all__ = ["check_list", "check_node", "buffer_uses", "check_name", "bind", "store_compatible"]
