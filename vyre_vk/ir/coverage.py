"""Which result buffers a dispatch rewrites in full: the runtime need not zero those before a run.

vyre's reference starts every output buffer at zero, so the runtime zeroes each one before every
run (on the host, and on the staging path also copies those zeros to the device). Where a stage
stores ``out[id]`` for every id below ``len(out)``, unconditionally, and nothing reads ``out``,
no element's starting value is ever seen: skipping the zeroing gives the same results.

The proof is structural and conservative: a store ``Store(b, id, v)`` (``id`` the invocation id
on x, or a never-assigned let of it) in the statement list of the stage's body or of nested
``if id < X`` branches without an else (regions and blocks are transparent; in dispatch.py's
coarsening region the id is its logical id ``g``, under its bound), with no ``return`` before it
at any depth; the stage must not load or atomically update `b` anywhere (a byte buffer's
stores rewrite whole words: the runtime leaves those alone). :func:`id_guards` returns the bounds X of the branches around such a store;
:func:`rewrites` then checks them, and the dispatched ids, against the bound element counts.

Example::

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
    >>> i = Expr.var("i")
    >>> p = Program.wrapped([BufferDecl.read("a", 0, DataType.U32), BufferDecl.output("out", 1, DataType.U32)
    ...                      .with_count(64)], (64, 1, 1),
    ...                     [Node.let_bind("i", Expr.gid_x()), Node.if_then(Expr.lt(i, Expr.buf_len("out")),
    ...                      [Node.store("out", i, Expr.load("a", i))])])
    >>> id_guards(p, "out")  # the bounds around the store, one element per invocation
    ((BufLen(buffer='out'),), 1)
    >>> rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 64}), rewrites(p, "out", (1, 1, 1), {"a": 64, "out": 65})
    (True, False)
"""
from __future__ import annotations

from typing import Mapping, Optional

from . import expr as E
from . import node as N
from .optable import BinOp
from .program import Program
from .walk import node_all_exprs, walk_nodes

_GID = E.InvocationId(0)
#: vyre_vk.opt.dispatch.COARSEN_GENERATOR's prefix (the IR may not import the optimiser); a change
#: there makes :func:`_coarsened` match nothing, which proves nothing: never a wrong answer.
_COARSEN = "vyre_vk.opt.coarsen:"


def _assigned(nodes) -> set:
    return {n.name for n in walk_nodes(nodes) if isinstance(n, N.Assign)}


def id_guards(p: Program, buffer: str) -> Optional[tuple[tuple[E.Expr, ...], int]]:
    """(the bounds X of the ``if id < X`` branches around an unconditional ``buffer[id] = v`` of `p`,
    the ids per invocation: 1, or the factor of a coarsened program) (module docstring), or None
    where `p` may leave an element of `buffer` unwritten or reads it."""
    if tuple(p.workgroup_size[1:]) != (1, 1):
        return None
    for x in node_all_exprs(p.entry):
        if (isinstance(x, (E.Load, E.Atomic)) and x.buffer == buffer) or isinstance(x, E.Call):
            return None  # a read of it, or a call that might read it
    if any(isinstance(n, N.UNSUPPORTED_NODES) for n in walk_nodes(p.entry)):
        return None  # async copies name buffers outside expressions
    return _find(tuple(p.entry), buffer, frozenset(), (), _assigned(p.entry), True)


def _is_id(e: E.Expr, ids: frozenset, gid: bool) -> bool:
    return (gid and e == _GID) or (isinstance(e, E.Var) and e.name in ids)


def _coarsened(r: N.Region) -> Optional[tuple[int, str, E.Expr, tuple]]:
    """(factor, the logical id's name, its bound, the body it guards) of dispatch.py's coarsening
    region ``let base = id * f; for c in 0..f { let g = base + c; if g < T { body } }``, else None."""
    tail = r.generator[len(_COARSEN):]
    if not (tail.isdigit() and len(r.body) == 2 and isinstance(r.body[0], N.Let) and isinstance(r.body[1], N.Loop)):
        return None
    f, (base, loop) = int(tail), r.body
    if base.value != E.BinOpExpr(BinOp.Mul, _GID, E.LitU32(f)) or (loop.from_, loop.to) != (E.LitU32(0), E.LitU32(f)):
        return None
    if len(loop.body) != 2 or not isinstance(loop.body[0], N.Let) or not isinstance(loop.body[1], N.If):
        return None
    g, guard = loop.body
    if g.value != E.BinOpExpr(BinOp.Add, E.Var(base.name), E.Var(loop.var)) or guard.otherwise:
        return None
    c = guard.cond
    if not (isinstance(c, E.BinOpExpr) and c.op is BinOp.Lt and c.left == E.Var(g.name)):
        return None
    return f, g.name, c.right, tuple(guard.then)


def _find(nodes: tuple, buffer: str, ids: frozenset, guards: tuple, assigned: set,
          gid: bool, factor: int = 1) -> Optional[tuple]:
    """Scan `nodes` in order for the store; `gid`: the invocation id itself is the element's id
    (not inside a coarsening region, where the logical id is a let)."""
    for n in nodes:
        if isinstance(n, N.Let) and _is_id(n.value, ids, gid) and n.name not in assigned:
            ids = ids | {n.name}
        elif isinstance(n, N.Store) and n.buffer == buffer and _is_id(n.index, ids, gid):
            return guards, factor
        elif isinstance(n, N.Region) and isinstance(n.generator, str) and n.generator.startswith(_COARSEN):
            if not gid or factor != 1 or ids:
                return None
            shape = _coarsened(n)
            if shape is None or shape[1] in assigned:
                return None
            f, g, bound, body = shape
            return _find(body, buffer, frozenset({g}), guards + (bound,), assigned, False, f)
        elif isinstance(n, (N.Region, N.Block)):
            found = _find(tuple(n.body), buffer, ids, guards, assigned, gid, factor)
            if found is not None:
                return found
        elif (isinstance(n, N.If) and not n.otherwise and isinstance(n.cond, E.BinOpExpr)
              and n.cond.op is BinOp.Lt and _is_id(n.cond.left, ids, gid)):
            found = _find(tuple(n.then), buffer, ids, guards + (n.cond.right,), assigned, gid, factor)
            if found is not None:
                return found
        if any(isinstance(m, N.Return) for m in walk_nodes((n,))):
            return None  # a return before the store may skip it
    return None


def _value(x: E.Expr, counts: Mapping[str, int]) -> Optional[int]:
    if isinstance(x, E.LitU32):
        return x.value
    if isinstance(x, E.BufLen) and x.buffer in counts:
        return int(counts[x.buffer])
    return None


def rewrites(p: Program, buffer: str, grid: tuple[int, int, int], counts: Mapping[str, int]) -> bool:
    """Whether one dispatch of `p` over `grid` workgroups stores every element of `buffer` (bound
    with ``counts[buffer]`` elements; `counts` gives every bound buffer's) before the run ends and
    never reads it, so its contents before the run are never seen."""
    found = id_guards(p, buffer)
    n = counts.get(buffer)
    if found is None or n is None:
        return False
    guards, factor = found
    if int(grid[0]) * int(p.workgroup_size[0]) * factor < n:
        return False  # ids that would store the last elements are not dispatched
    return all((v := _value(x, counts)) is not None and v >= n for x in guards)


__all__ = ["id_guards", "rewrites"]
