"""Tabulation: a value a loop recomputes for every invocation that shares a key is computed
once per (key, iteration) by a pre-pass kernel, and the loop loads it.

vyre's attention programs compute, inside ``for j in 0..S``, a score ``dot(q[row], k[j]) *
scale`` (a 64-step loop) in every invocation that works on ``row``: 256 lanes of a workgroup
(attention), 64 invocations per query (gqa_attention), three times per pass, or one
invocation per row serially (flash_attention). The score's arithmetic depends only on ``j``
and on ``row``, and ``row`` depends on the invocation id ``g`` only through ``Q = g // c``
for some ``c`` (the workgroup, the head_dim channels of one query). So a pre-pass with one
invocation per ``(Q, j)`` runs exactly the statements that computed it -- same operations, same
order, same bits -- and stores each result in a table; the loop loads ``table[Q*S + j]``.
Serial work of one invocation becomes parallel work over the grid, and work repeated by the
``c`` invocations of a key is done once.

The proof that a value depends on ``g`` only through ``Q`` is an abstract interpretation over
the value's expression (:class:`Keyed`): every value is ``C(f)`` -- equal to ``f(Q)`` for each
``R = g mod c`` -- or ``A(a)`` -- exactly ``c * a(Q) + R``, the id itself with a coarse part
subtracted -- or unknown. ``g = c*Q + R`` is ``A(Q)``; ``A(a) // m`` with ``c | m`` is
``C(a // (m/c))``; ``A(a) - C(b) * m`` with ``c | m`` is ``A(a - b*(m/c))`` when ``b = a // (m/c)``
(no wrap-around); ``workgroup_x`` is ``C(Q // (T/c))`` when ``c | T``; operators and loads from
buffers the stage never writes map ``C`` to ``C``. The keys a loop can see are bounded by the
``if`` conditions around it (``row < S``, ``g < N``); a program that has workgroup memory or
atomics (its grid counts the new table) must be wholly under such a guard, so the invocations
the larger grid adds do nothing.

Moved: a ``let`` whose value is ``C`` and a ``let acc = init; for k in lit..lit { acc = ... }``
reduction whose every value is ``C`` -- provided the statements are worth a kernel (a loop or
an exponential, division or square root), read ``Q`` (values of ``j`` alone are hoist's), have
f32/u32/i32 results, cannot trap, and the tables fit (:data:`MAX_TABLE` elements). Identical
computations in several loops (attention's three passes) share one table.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt import optimize
    >>> graph, reports = optimize(get("vyre-libs::nn::attention").build_with(seq_len=64, head_dim=16), ["tabulate"])
    >>> len(graph.stages), [(b.name, b.count) for b in graph.scratch]
    (2, [('opt_tab_score', 4096)])
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.grid import has_workgroup_or_atomic
from ..ir.optable import BinOp, TRANSCENDENTAL_UNOPS, UnOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import expr_children, node_all_exprs, rewrite_nodes, walk_expr, walk_nodes, with_children
from .analysis import Facts, NameSource, all_names, assigned_vars, read_vars, replace_entry, stored_buffers
from .protocol import PassBase, PassContext, Rewrite

TABULATE_GENERATOR = "vyre_vk.opt.tabulate"
#: Elements of one table (128 MiB of f32): larger tables are not worth their memory traffic.
MAX_TABLE = 1 << 25
PRE_LOCAL_SIZE = 256
_EXPENSIVE_UNOPS = TRANSCENDENTAL_UNOPS | {UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Reciprocal}
_TYPES = (DataType.F32, DataType.U32, DataType.I32)
_GID = E.InvocationId(0)


def _lit(e: E.Expr) -> Optional[int]:
    return e.value if isinstance(e, E.LitU32) else None


def _bin(op: BinOp, a: E.Expr, b: E.Expr) -> E.Expr:
    return E.BinOpExpr(op, a, b)


class Keyed:
    """The abstract interpretation of the module docstring for one ``c`` (invocations per key)
    and workgroup size ``tile``. `env`: pure invocation lets in scope by name; `local`: names
    that stand for themselves (the loop variable, values already moved); `readonly`: buffers
    the stage never writes. ``of(e)`` is ``("C", f)``, ``("A", a)`` or None, with ``Q`` as `q`."""

    def __init__(self, c: int, tile: int, env: dict, local: set, readonly: set, q: E.Var) -> None:
        self.c, self.tile, self.env, self.local, self.readonly, self.q = c, tile, env, local, readonly, q
        self._memo: dict = {}

    def coarse(self, e: E.Expr) -> Optional[E.Expr]:
        r = self.of(e)
        return r[1] if r is not None and r[0] == "C" else None

    def of(self, e: E.Expr):
        key = id(e)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not e:
            hit = (e, self._of(e))
            self._memo[key] = hit
        return hit[1]

    def _of(self, e: E.Expr):
        c, q = self.c, self.q
        if isinstance(e, (E.LitU32, E.LitI32, E.LitF32, E.LitBool)):
            return "C", e
        if isinstance(e, E.Var):
            if e.name in self.local:
                return "C", e
            return self.of(self.env[e.name]) if e.name in self.env else None
        if e == _GID:
            return ("C", q) if c == 1 else ("A", q)
        if e == E.WorkgroupId(0):
            if self.tile % c:
                return None
            t = self.tile // c
            return "C", (q if t == 1 else _bin(BinOp.Div, q, E.LitU32(t)))
        if e == E.LocalId(0) and c == 1:
            return "C", _bin(BinOp.Mod, q, E.LitU32(self.tile))
        if isinstance(e, E.BinOpExpr):
            return self._binop(e)
        if isinstance(e, E.Load) and e.buffer not in self.readonly:
            return None
        if not isinstance(e, (E.Load, E.UnOpExpr, E.Select, E.Cast, E.Fma)):
            return None  # builtins of other axes, subgroups, atomics, calls
        kids = [self.coarse(k) for k in expr_children(e)]
        return None if any(k is None for k in kids) else ("C", with_children(e, kids))

    def _binop(self, e: E.BinOpExpr):
        a, b = self.of(e.left), self.of(e.right)
        if a is None or b is None:
            return None
        m = _lit(e.right)
        if a[0] == "C" and b[0] == "C":
            if e.op in (BinOp.Div, BinOp.Mod) and not (m or (isinstance(e.right, E.LitI32)
                                                              and e.right.value not in (0, -1))):
                return None  # a division that may trap is never duplicated into a pre-pass
            return "C", with_children(e, [a[1], b[1]])
        if a[0] == "A" and b[0] == "C" and m and m % self.c == 0:
            k = m // self.c
            if e.op is BinOp.Div:
                return "C", (a[1] if k == 1 else _bin(BinOp.Div, a[1], E.LitU32(k)))
            if e.op is BinOp.Mod:
                return "A", _bin(BinOp.Mod, a[1], E.LitU32(k))
        if a[0] == "A" and e.op is BinOp.Sub and isinstance(e.right, E.BinOpExpr) and e.right.op is BinOp.Mul:
            # g - b*m with b = (g // m): the id's remainder by m, c | m (no wrap-around)
            bb, mm = e.right.left, _lit(e.right.right)
            if mm and mm % self.c == 0:
                k = mm // self.c
                fb = self.coarse(bb)
                if fb is not None and fb == (a[1] if k == 1 else _bin(BinOp.Div, a[1], E.LitU32(k))):
                    return "A", _bin(BinOp.Sub, a[1], _bin(BinOp.Mul, fb, E.LitU32(k)))
        return None


@dataclasses.dataclass
class _Site:
    """One loop with literal bounds, the `if` conditions around it and the pure lets in scope."""
    loop: N.Loop
    conds: list
    env: dict


def _sites(nodes, conds: list, env: dict, mutated: set, out: list) -> None:
    env = dict(env)
    for n in nodes:
        if isinstance(n, N.Let) and n.name not in mutated:  # Keyed decides what its value depends on
            env[n.name] = n.value
        if isinstance(n, N.If):
            _sites(n.then, conds + [n.cond], env, mutated, out)
            _sites(n.otherwise, conds, env, mutated, out)
        elif isinstance(n, N.Loop):
            if _lit(n.from_) is not None and _lit(n.to) is not None and n.to.value > n.from_.value:
                out.append(_Site(n, conds, env))
            _sites(n.body, conds, env, mutated, out)
        elif isinstance(n, (N.Block, Region)):
            _sites(n.body, conds, env, mutated, out)


def _conjuncts(e: E.Expr, env: dict) -> list:
    while isinstance(e, E.Var) and e.name in env:
        e = env[e.name]
    if isinstance(e, E.BinOpExpr) and e.op is BinOp.And:
        return _conjuncts(e.left, env) + _conjuncts(e.right, env)
    return [e]


def key_bound(conds: list, kd: Keyed) -> Optional[int]:
    """The fewest keys the conditions allow: ``X < N`` with ``X`` = ``Q`` (N keys) or the id
    itself (ceil(N / c) keys)."""
    best = None
    for cond in conds:
        for x in _conjuncts(cond, kd.env):
            if not (isinstance(x, E.BinOpExpr) and x.op is BinOp.Lt and _lit(x.right)):
                continue
            r = kd.of(x.left)
            n = x.right.value
            if r == ("C", kd.q):
                best = n if best is None else min(best, n)
            elif r == ("A", kd.q):
                best = -(-n // kd.c) if best is None else min(best, -(-n // kd.c))
    return best


def _worth(stmts, facts: Facts) -> bool:
    """A loop, an exponential-class op, a square root or an f32 division: worth a kernel (an index
    computation is not)."""
    return any(isinstance(n, N.Loop) for n in walk_nodes(stmts)) or any(
        (isinstance(x, E.UnOpExpr) and x.op in _EXPENSIVE_UNOPS)
        or (isinstance(x, E.BinOpExpr) and x.op is BinOp.Div and facts.type_of(x.left) is DataType.F32)
        for x in node_all_exprs(stmts))


def _coarse_stmt(n: N.Node, kd: Keyed) -> Optional[N.Node]:
    """`n` with every expression as its key form, or None if one is not coarse (or `n` is not a
    let, an assignment or a literal-bounded loop of those)."""
    if isinstance(n, (N.Let, N.Assign)):
        v = kd.coarse(n.value)
        return None if v is None else dataclasses.replace(n, value=v)
    if isinstance(n, N.Loop) and _lit(n.from_) is not None and _lit(n.to) is not None:
        kd.local.add(n.var)
        kd.local.update(s.name for s in n.body if isinstance(s, N.Let))
        body = [_coarse_stmt(s, kd) for s in n.body]
        return None if any(s is None for s in body) else dataclasses.replace(n, body=tuple(body))
    return None


def _region(loop: N.Loop, kd: Keyed) -> tuple[list, list]:
    """(indices of the loop body's statements to move, their key forms)."""
    body = list(loop.body)
    assigned = assigned_vars(body)
    moved: list = []
    forms: list = []
    i = 0
    while i < len(body):
        s = body[i]
        if isinstance(s, N.Let) and i + 1 < len(body) and s.name in assigned and isinstance(body[i + 1], N.Loop):
            red = body[i + 1]
            inner_assigned = assigned_vars(red.body)
            if (inner_assigned <= {s.name} | {x.name for x in red.body if isinstance(x, N.Let)}
                    and s.name not in assigned_vars(body[:i] + body[i + 2:])):
                saved = set(kd.local)
                kd.local.add(s.name)
                f0, f1 = _coarse_stmt(s, kd), _coarse_stmt(red, kd)
                if f0 is not None and f1 is not None:
                    moved += [i, i + 1]
                    forms += [f0, f1]
                    i += 2
                    continue
                kd.local = saved
        elif isinstance(s, N.Let) and s.name not in assigned:
            f = _coarse_stmt(s, kd)
            if f is not None:
                kd.local.add(s.name)
                moved.append(i)
                forms.append(f)
        i += 1
    return moved, forms


def _canonical(forms: list, out: str, loop_var: str, q: E.Var) -> str:
    """A text equal for two regions that compute `out` the same way (names renamed by order)."""
    names: dict = {loop_var: "J", q.name: "Q"}
    for n in walk_nodes(forms):
        for nm in ((n.name,) if isinstance(n, N.Let) else (n.var,) if isinstance(n, N.Loop) else ()):
            names.setdefault(nm, f"v{len(names)}")

    def ren(e: E.Expr) -> Optional[E.Expr]:
        return E.Var(names[e.name]) if isinstance(e, E.Var) and e.name in names else None

    def stmt(n: N.Node) -> N.Node:
        if isinstance(n, (N.Let, N.Assign)):
            return dataclasses.replace(n, name=names[n.name], value=_map(n.value, ren))
        return dataclasses.replace(n, var=names[n.var], body=tuple(stmt(s) for s in n.body))
    return repr((tuple(stmt(n) for n in forms), names[out]))


def _map(e: E.Expr, fn) -> E.Expr:
    r = fn(e)
    if r is not None:
        return r
    kids = expr_children(e)
    return with_children(e, [_map(k, fn) for k in kids]) if kids else e


def _key_expr(c: int, tile: int) -> E.Expr:
    if c == 1:
        return _GID
    if c == tile:
        return E.WorkgroupId(0)
    return _bin(BinOp.Div, _GID, E.LitU32(c))


def _candidates(p: Program) -> list[int]:
    """Invocations per key worth trying, largest (fewest keys) first."""
    cs = {1, p.workgroup_size[0]}
    for x in node_all_exprs(p.entry):
        if isinstance(x, E.BinOpExpr) and x.op in (BinOp.Div, BinOp.Mod, BinOp.Mul) and _lit(x.right):
            cs.add(x.right.value)
    return sorted(cs, reverse=True)


@dataclasses.dataclass
class Tabulated:
    stages: tuple
    scratch: tuple
    notes: list


def tabulate(p: Program, local_size: int = PRE_LOCAL_SIZE) -> Optional[Tabulated]:
    """The pre-pass kernels and the main program, or None when nothing is tabulated."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None
    root, tile = p.entry[0], p.workgroup_size[0]
    if any(isinstance(n, (N.Return, N.Trap) + N.UNSUPPORTED_NODES) for n in walk_nodes(root.body)):
        return None
    facts = Facts(p)
    written = stored_buffers(p.entry) | {x.buffer for x in node_all_exprs(p.entry) if isinstance(x, E.Atomic)}
    readonly = {b.name for b in p.buffers if not b.is_workgroup} - written
    mutated = assigned_vars(root.body)
    sites: list = []
    _sites(root.body, [], {}, mutated, sites)
    fresh = NameSource(all_names(p), "opt_tab_")
    qv = E.Var(fresh("q"))
    grid_guard = None  # keys the whole program is guarded to, when the table would change its grid
    if has_workgroup_or_atomic(p):
        lets = [s for s in root.body if isinstance(s, N.Let)]
        rest = [s for s in root.body if not isinstance(s, N.Let)]
        if len(rest) != 1 or not isinstance(rest[0], N.If) or rest[0].otherwise or any(
                s.name in mutated for s in lets):
            return None
        grid_guard = rest[0].cond
        top_env = {s.name: s.value for s in lets}
    max_result = max((b.count for b in p.buffers if b.is_result), default=0)
    tables: dict = {}  # canonical text -> (scratch decl, key c)
    pre_stages: list = []
    scratch: list = []
    notes: list = []
    replace: dict = {}
    inside: set = set()  # nodes of a loop already rewritten (an inner loop's site is then stale)
    for site in sites:
        if id(site.loop) in inside:
            continue
        for c in _candidates(p):
            kd = Keyed(c, tile, site.env, {site.loop.var}, readonly, qv)
            moved, forms = _region(site.loop, kd)
            if not moved:
                continue
            rest = [s for k, s in enumerate(site.loop.body) if k not in set(moved)]
            outs = [n.name for k, n in zip(moved, forms) if isinstance(n, N.Let) and n.name in read_vars(rest)]
            nq = key_bound(site.conds, kd)
            if grid_guard is not None:
                top = key_bound([grid_guard], Keyed(c, tile, top_env, set(), readonly, qv))
                if top is None or top * c > max_result:
                    nq = None
            length = site.loop.to.value - site.loop.from_.value
            if (not outs or nq is None or nq * length > MAX_TABLE or not _worth(forms, facts)
                    or not any(x == qv for x in node_all_exprs(forms))
                    or any(facts.type_of(E.Var(o)) not in _TYPES for o in outs)):
                continue
            loads, new_outs, names = [], [], []
            for o in outs:
                canon = _canonical(forms, o, site.loop.var, qv) + f"|{c}|{length}|{nq}"
                if canon not in tables:
                    decl = BufferDecl(fresh(o), 0, BufferAccess.ReadWrite, facts.type_of(E.Var(o)), nq * length)
                    tables[canon] = decl
                    new_outs.append((o, decl))
                    scratch.append(decl)
                idx = _bin(BinOp.Add, _bin(BinOp.Mul, _key_expr(c, tile), E.LitU32(length)),
                           _bin(BinOp.Sub, E.Var(site.loop.var), site.loop.from_)
                           if site.loop.from_.value else E.Var(site.loop.var))
                loads.append(N.Let(o, E.Load(tables[canon].name, idx)))
                names.append(tables[canon].name)
            if new_outs:
                pre_stages.append(_prepass(p, forms, site.loop, qv, nq, length, new_outs, fresh, local_size))
            notes.append(f"{', '.join(outs)} (in `for {site.loop.var}`) depend on the invocation only through "
                         f"{'the id' if c == 1 else f'id // {c}'}: computed once per ({nq} keys x {length} "
                         f"iterations) by a pre-pass into {', '.join(names)}")
            replace[id(site.loop)] = dataclasses.replace(site.loop, body=tuple(loads) + tuple(rest))
            inside.update(id(n) for n in walk_nodes(site.loop.body))
            break
    if not replace:
        return None
    main_bufs = list(p.buffers)
    nxt = max((b.binding for b in p.buffers if not b.is_workgroup), default=-1) + 1
    for k, s in enumerate(scratch):
        main_bufs.append(BufferDecl(s.name, nxt + k, BufferAccess.ReadOnly, s.element, s.count))
    main = replace_entry(dataclasses.replace(p, buffers=tuple(main_bufs)),
                         rewrite_nodes(p.entry, stmt=lambda n: (replace[id(n)],) if id(n) in replace else None))
    return Tabulated(tuple(pre_stages) + (main,), tuple(scratch), notes)


def _prepass(p: Program, forms: list, loop: N.Loop, qv: E.Var, nq: int, length: int, outs: list, fresh,
             local_size: int) -> Program:
    used = {x.buffer for x in node_all_exprs(forms) if isinstance(x, (E.Load, E.BufLen))}
    bufs = [dataclasses.replace(b, binding=k, access=BufferAccess.ReadOnly, is_output=False, pipeline_live_out=False,
                                output_byte_range=None)
            for k, b in enumerate(b for b in p.buffers if b.name in used)]
    for o, decl in outs:
        bufs.append(BufferDecl(decl.name, len(bufs), BufferAccess.ReadWrite, decl.element, decl.count,
                               pipeline_live_out=True))
    g = E.Var(fresh("g"))
    j = _bin(BinOp.Mod, g, E.LitU32(length))
    body = (N.Let(g.name, _GID),
            N.If(_bin(BinOp.Lt, g, E.LitU32(nq * length)), (
                N.Let(qv.name, _bin(BinOp.Div, g, E.LitU32(length))),
                N.Let(loop.var, _bin(BinOp.Add, j, loop.from_) if loop.from_.value else j),
                *forms,
                *(N.Store(decl.name, g, E.Var(o)) for o, decl in outs)), ()))
    return Program(tuple(bufs), (local_size, 1, 1), (Region(TABULATE_GENERATOR, None, body),), p.entry_op_id)


class Tabulate(PassBase):
    """Tabulation (module docstring): one split per stage, the main stage last."""
    name, kind, max_splits = "tabulate", "split", 1
    tidy = ("dce",)

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        t = tabulate(program, ctx.local_size or PRE_LOCAL_SIZE)
        return None if t is None else Rewrite(t.stages, t.scratch, detail=t)

    def explain(self, rewrite: Rewrite) -> str:
        return "; ".join(rewrite.detail.notes)


TABULATE = Tabulate()
