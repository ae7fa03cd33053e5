"""Vector memory access for coarsened elementwise programs (the lowering's one fast path).

The coarsening pass (vyre_vk.opt.dispatch.coarsen) rewrites an elementwise program so
that invocation t handles elements 4t..4t+3 one after another::

    region vyre_vk.opt.coarsen:4 {
        let base = gid.x * 4
        for k in 0..4 { let g = base + k; if g < TOTAL { BODY(g) } }
    }

Scalar loads and stores of four consecutive words per invocation coalesce poorly on
GPUs (H200: 2.1 TB/s against 4.4 TB/s with 16-byte accesses). When a program has this
exact shape, the lowering emits a fast path for the common case and keeps the loop
above, unchanged, for everything else::

    if (all four g < TOTAL and every vector buffer holds elements base..base+3) {
        vec4 a4 = a_v4[base / 4];                  // one 16-byte load per loaded buffer
        { g = base + 0; BODY(g), loads of a[g] -> a4.x, stores to out[g] -> o4.x }
        ... (k = 1, 2, 3)
        out_v4[base / 4] = o4;                     // one 16-byte store (if all four stored)
    } else { the scalar loop }

``a_v4`` is a second declaration of the same binding with a 4-word element type
(aliasing storage-buffer declarations is legal in Vulkan; spirv-val accepts it). base
is a multiple of 4 and every binding starts at offset 0, so the vector element is
16-byte aligned. The fast path is the scalar loop's meaning exactly when:

* a buffer read through the vector view is never written by the program (no store, no
  atomic), so loading the four words up front sees what each iteration would;
* a buffer written through the vector view is never read (no load, no atomic) and every
  store to it is at the element index g, so deferring the stores to the end changes
  nothing observable; a store that may not run is tracked by a mask bit (all four: one
  vector store; otherwise the stored words one by one);
* BODY has no Return, Trap or Barrier (an early exit would skip the deferred stores);
* TOTAL is a pure u32 expression (literals, buffer lengths, u32 arithmetic), so
  evaluating it once instead of four times is the same;
* "index g" means the variable g or a `let` bound to it (transitively) that is never
  reassigned or rebound to anything else.
Loads at other indices (a[0], a[g + 1]) stay scalar, bounds-checked accessor calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program
from ..ir.types import DataType
from vyre_vk.ir.walk import node_exprs, walk_expr
from vyre_vk.ir.paths import labelled_bodies

COARSENED_REGION_PREFIX = "vyre_vk.opt.coarsen:"
VECTOR_WIDTH = 4
_VEC_OF = {"float": "vec4", "uint": "uvec4", "int": "ivec4"}
_COMPONENTS = "xyzw"


@dataclass(frozen=True)
class VectorPlan:
    region: N.Region
    base: str          # let base = gid.x * 4
    lane: str          # the loop variable k
    elem: str          # let g = base + k
    total: E.Expr      # the guard's bound
    body: tuple        # BODY(g)
    aliases: frozenset  # variables equal to g
    loads: tuple       # buffer names read through the vector view (declaration order)
    stores: tuple      # buffer names written through the vector view


def _walk_nodes(nodes):
    for n in nodes:
        yield n
        for _, body in labelled_bodies(n):
            yield from _walk_nodes(body)


def _exprs(nodes):
    for n in _walk_nodes(nodes):
        for e in node_exprs(n):
            yield from walk_expr(e)


def _pure_u32(e: E.Expr) -> bool:
    return all(isinstance(x, (E.LitU32, E.BufLen, E.BinOpExpr)) for x in walk_expr(e))


def _aliases(body: tuple, g: str) -> frozenset:
    """Variables that always hold g's value inside `body`."""
    lets: dict[str, list] = {}
    assigned: set = set()
    for n in _walk_nodes(body):
        if isinstance(n, N.Let):
            lets.setdefault(n.name, []).append(n.value)
        elif isinstance(n, N.Assign):
            assigned.add(n.name)
        elif isinstance(n, N.Loop):
            assigned.add(n.var)
    if g in lets or g in assigned:
        return frozenset()
    alias = {g}
    changed = True
    while changed:
        changed = False
        for name, values in lets.items():
            if name in alias or name in assigned:
                continue
            if all(isinstance(v, E.Var) and v.name in alias for v in values):
                alias.add(name)
                changed = True
    return frozenset(alias)


def vector_plan(p: Program) -> Optional[VectorPlan]:
    """The fast-path plan for a coarsened elementwise program, or None (lower it as written)."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], N.Region):
        return None
    region = p.entry[0]
    if not str(region.generator).startswith(COARSENED_REGION_PREFIX) or len(region.body) != 2:
        return None
    let_base, loop = region.body
    w = VECTOR_WIDTH
    if not (isinstance(let_base, N.Let) and let_base.value == E.BinOpExpr(E.BinOp.Mul, E.InvocationId(0), E.LitU32(w))
            and isinstance(loop, N.Loop) and loop.from_ == E.LitU32(0) and loop.to == E.LitU32(w)
            and len(loop.body) == 2):
        return None
    let_g, guard = loop.body
    base, k = let_base.name, loop.var
    if not (isinstance(let_g, N.Let) and let_g.value == E.BinOpExpr(E.BinOp.Add, E.Var(base), E.Var(k))
            and isinstance(guard, N.If) and not guard.otherwise and isinstance(guard.cond, E.BinOpExpr)
            and guard.cond.op is E.BinOp.Lt and guard.cond.left == E.Var(let_g.name)
            and _pure_u32(guard.cond.right)):
        return None
    g, body = let_g.name, guard.then
    if len({base, k, g}) != 3:
        return None
    for n in _walk_nodes(body):
        if isinstance(n, (N.Return, N.Trap, N.Barrier)):
            return None
        if isinstance(n, (N.Let, N.Assign)) and n.name in (base, k):
            return None  # the copies re-declare base and k; keep their meaning simple
        if isinstance(n, N.Loop) and n.var in (base, k):
            return None
    aliases = _aliases(body, g)
    if not aliases:
        return None
    own = lambda e: isinstance(e, E.Var) and e.name in aliases  # noqa: E731
    loaded: dict[str, bool] = {}   # buffer -> has a load at index g
    stored: dict[str, bool] = {}   # buffer -> every store is at index g
    atomic: set = set()
    for x in _exprs(body):
        if isinstance(x, E.Load):
            loaded[x.buffer] = loaded.get(x.buffer, False) or own(x.index)
        elif isinstance(x, E.Atomic):
            atomic.add(x.buffer)
    for n in _walk_nodes(body):
        if isinstance(n, N.Store):
            stored[n.buffer] = stored.get(n.buffer, True) and own(n.index)
    decls = {b.name: b for b in p.buffers}
    ok = lambda name: (name in decls and not decls[name].is_workgroup  # noqa: E731
                       and decls[name].element in (DataType.F32, DataType.U32, DataType.I32, DataType.Bool))
    loads = tuple(b.name for b in p.buffers if loaded.get(b.name) and b.name not in stored
                  and b.name not in atomic and ok(b.name))
    stores = tuple(b.name for b in p.buffers if stored.get(b.name) and b.name not in loaded
                   and b.name not in atomic and ok(b.name))
    if not loads and not stores:
        return None
    return VectorPlan(region, base, k, g, guard.cond.right, body, aliases, loads, stores)


def vec_type(storage: str) -> str:
    return _VEC_OF[storage]


def component(k: int) -> str:
    return _COMPONENTS[k]
