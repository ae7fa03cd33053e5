"""Tabulation: a value that invocations sharing a key all recompute is computed once per key
(and loop iteration) by a pre-pass kernel, and the program loads it.

vyre's attention programs compute, inside ``for j in 0..S``, a score ``dot(q[row], k[j]) *
scale`` (a 64-step loop) in every invocation that works on ``row``: 256 lanes of a workgroup
(attention), 64 invocations per query (gqa_attention), three times over, or one invocation
per row serially (flash_attention). The score depends only on ``j`` and on ``row``, and
``row`` depends on the invocation id ``g`` only through ``Q = g // c`` (keyed.py proves it).
So a pre-pass with one invocation per ``(Q, j)`` runs exactly the statements that computed it --
same operations, same order, same bits -- and stores the result in a table; the loop loads
``table[Q*S + j]``. Serial work of one invocation becomes parallel work over the grid, and
work repeated by the ``c`` invocations of a key is done once.

What moves, per round (the pass repeats on the main stage while something moves):

* per (key, iteration): in a literal-bounded loop, a ``let`` whose value is a key form, a
  ``let acc = init; for k in lit..lit { acc = ... }`` reduction of key forms, and a costly key-form
  sub-expression of any other statement (``exp(score - max)`` inside a running sum);
* per key, when no per-iteration value moved and ``c > 1``: a ``let acc = init`` and the one
  loop (possibly in a Region) that updates it from key forms only -- gqa's row max, its exp
  sum -- run once per key instead of by each of the ``c`` invocations; the next round then
  finds the values that depended on it (the softmax weights).

Only what is worth a kernel moves (a loop, an exponential-class op, a square root, an f32
division), values that read the key (a value of ``j`` alone is hoist_invariant's), f32/u32/i32
results, tables of at most :data:`MAX_TABLE` elements. The keys a value can see are bounded by
the ``if`` conditions around it (``row < S``, ``g < N``). A program with workgroup memory or
atomics counts every buffer in its grid, so it must be wholly under such a guard: the
invocations the larger grid adds then do nothing. Identical computations in several loops
(attention's three passes, gqa's two dot loops) share one table.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt.tabulate import tabulate
    >>> t = tabulate(get("vyre-libs::nn::attention").build_with(seq_len=64, head_dim=16))
    >>> len(t.stages), [(b.name.split("_", 2)[-1], b.count) for b in t.scratch]   # the dot of each (row, key)
    (2, [('dot_val0', 4096)])
"""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.grid import has_workgroup_or_atomic
from ..ir.optable import BinOp, TRANSCENDENTAL_UNOPS, UnOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import expr_children, node_all_exprs, replace_expr, rewrite_nodes, walk_expr, walk_nodes, with_children
from .analysis import Facts, NameSource, all_names, assigned_vars, next_binding, read_only, read_vars, replace_entry
from .keyed import Keyed, _bin, _lit, key_bound, linear
from .protocol import PassBase, PassContext, Rewrite
from .tables import TABULATE_GENERATOR, share_tables

#: Elements of one table (128 MiB of f32): larger tables are not worth their memory traffic.
MAX_TABLE = 1 << 25
#: Stages the pass may grow a graph to (each pre-pass is a dispatch, ~2-5 us on an H200).
MAX_TAB_STAGES = 10
PRE_LOCAL_SIZE = 256
_EXPENSIVE_UNOPS = TRANSCENDENTAL_UNOPS | {UnOp.Sqrt, UnOp.InverseSqrt, UnOp.Reciprocal}
_TYPES = (DataType.F32, DataType.U32, DataType.I32)
_GID = E.InvocationId(0)


@dataclasses.dataclass
class _Site:
    """A statement list (a loop body, or a list holding lets and loops) with the `if` conditions
    around it and the never-assigned lets in scope."""
    node: N.Node
    conds: list
    env: dict


@dataclasses.dataclass
class _Scan:
    loops: list
    lists: list
    stores: list  # (buffer, index, env)


def _scan(nodes, conds: list, env: dict, mutated: set, out: _Scan, in_loop: bool = False) -> None:
    env = dict(env)
    for n in nodes:
        if isinstance(n, N.Let) and n.name not in mutated:  # Keyed decides what its value depends on
            env[n.name] = n.value
        if isinstance(n, N.Store):
            out.stores.append((n.buffer, n.index, env))
        if isinstance(n, N.If):
            _scan(n.then, conds + [n.cond], env, mutated, out, in_loop)
            _scan(n.otherwise, conds, env, mutated, out, in_loop)
        elif isinstance(n, N.Loop):
            if _lit(n.from_) is not None and _lit(n.to) is not None and n.to.value > n.from_.value:
                out.loops.append(_Site(n, conds, env))
            _scan(n.body, conds, env, mutated, out, True)
        elif isinstance(n, (N.Block, Region)):
            _scan(n.body, conds, env, mutated, out, in_loop)
    if not in_loop:
        out.lists.append((tuple(nodes), conds, env))


def _expensive(x: E.Expr, facts: Facts) -> bool:
    return ((isinstance(x, E.UnOpExpr) and x.op in _EXPENSIVE_UNOPS)
            or (isinstance(x, E.BinOpExpr) and x.op is BinOp.Div and facts.type_of(x.left) is DataType.F32))


def _worth(stmts, facts: Facts) -> bool:
    """A loop, an exponential-class op, a square root or an f32 division: worth a kernel (an index
    computation is not)."""
    return (any(isinstance(n, N.Loop) for n in walk_nodes(stmts))
            or any(_expensive(x, facts) for x in node_all_exprs(stmts)))


def _coarse_stmt(n: N.Node, kd: Keyed) -> Optional[N.Node]:
    """`n` with every expression as its key form, or None if one is not coarse (or `n` is not a
    let, an assignment or a literal-bounded loop of those)."""
    if isinstance(n, (N.Let, N.Assign)):
        v = kd.coarse(n.value)
        return None if v is None else dataclasses.replace(n, value=v)
    if isinstance(n, N.Loop) and _lit(n.from_) is not None and _lit(n.to) is not None:
        kd.with_local([n.var] + [s.name for s in n.body if isinstance(s, N.Let)])
        body = [_coarse_stmt(s, kd) for s in n.body]
        return None if any(s is None for s in body) else dataclasses.replace(n, body=tuple(body))
    return None


def _reduction(acc: N.Let, loop: N.Node, others: list, kd: Keyed) -> Optional[tuple]:
    """Key forms of ``let acc = init`` and the loop that alone updates it, or None."""
    if not (isinstance(loop, N.Loop) and acc.name in assigned_vars([loop])
            and assigned_vars(loop.body) <= {acc.name} | {x.name for x in loop.body if isinstance(x, N.Let)}
            and acc.name not in assigned_vars(others)):
        return None
    saved = set(kd.local)
    kd.with_local([acc.name])
    f0, f1 = _coarse_stmt(acc, kd), _coarse_stmt(loop, kd)
    if f0 is None or f1 is None:
        kd.set_local(saved)
        return None
    return f0, f1


def _region(loop: N.Loop, kd: Keyed, facts: Facts, fresh) -> tuple[list, list, list]:
    """(indices of the loop body's statements to move, their key forms, the body left)."""
    body = list(loop.body)
    assigned = assigned_vars(body)
    moved: list = []
    forms: list = []
    i = 0
    while i < len(body):
        s = body[i]
        if isinstance(s, N.Let) and s.name in assigned and i + 1 < len(body):
            red = _reduction(s, body[i + 1], body[:i] + body[i + 2:], kd)
            if red is not None:
                moved += [i, i + 1]
                forms += list(red)
                i += 2
                continue
        elif isinstance(s, N.Let) and s.name not in assigned:
            if any(isinstance(n, N.Loop) for n in forms) and _reads(s.value, forms):
                i += 1  # work on a reduction's result: next round (if worth it), from the reduction's own
                continue  # table, which other loops and stages then share (gqa's dots, attention's scores)
            f = _coarse_stmt(s, kd)
            if f is not None:
                kd.with_local([s.name])
                moved.append(i)
                forms.append(f)
        i += 1
    rest = [s for k, s in enumerate(body) if k not in set(moved)]
    if _worth(forms, facts):  # sub-expressions wait for the next round: they then read this round's
        return moved, forms, rest  # table, and a table shared by other stages stays one pre-pass
    return moved, forms, [_extract(s, kd, facts, fresh, forms) for s in rest]


def _extract(s: N.Node, kd: Keyed, facts: Facts, fresh, forms: list) -> N.Node:
    """`s` with each maximal costly key-form sub-expression replaced by a new let moved to `forms`."""
    if not isinstance(s, (N.Let, N.Assign, N.Store)):
        return s

    def visit(e: E.Expr) -> E.Expr:
        f = kd.coarse(e) if any(_expensive(x, facts) for x in walk_expr(e)) else None
        if f is not None and facts.type_of(e) in _TYPES and not isinstance(e, E.Var):
            name = fresh("x")
            forms.append(N.Let(name, f))
            facts.env[name] = facts.type_of(e)
            kd.with_local([name])
            return E.Var(name)
        kids = expr_children(e)
        return with_children(e, [visit(k) for k in kids]) if kids else e
    if isinstance(s, N.Store):
        return dataclasses.replace(s, value=visit(s.value))
    return dataclasses.replace(s, value=visit(s.value))


def _reads(e: E.Expr, forms: list) -> bool:
    """`e` reads a variable a moved reduction computes."""
    made = {n.name for n in forms if isinstance(n, N.Let)}
    return any(isinstance(x, E.Var) and x.name in made for x in walk_expr(e))


def _canonical(forms: list, out: str, loop_var: Optional[str], q: E.Var) -> str:
    """A text equal for two regions that compute `out` the same way (names renamed by order)."""
    names: dict = {q.name: "Q", **({loop_var: "J"} if loop_var else {})}
    for n in walk_nodes(forms):
        for nm in ((n.name,) if isinstance(n, N.Let) else (n.var,) if isinstance(n, N.Loop) else ()):
            names.setdefault(nm, f"v{len(names)}")

    def ren(e: E.Expr) -> E.Expr:
        return replace_expr(e, lambda x: E.Var(names[x.name]) if isinstance(x, E.Var) and x.name in names else None)

    def stmt(n: N.Node) -> N.Node:
        if isinstance(n, (N.Let, N.Assign)):
            return dataclasses.replace(n, name=names[n.name], value=ren(n.value))
        return dataclasses.replace(n, var=names[n.var], body=tuple(stmt(s) for s in n.body))
    return repr((tuple(stmt(n) for n in forms), names.get(out)))


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


class _Builder:
    """One round over one program: the tables made so far and the rewrites to apply."""

    def __init__(self, p: Program, local_size: int) -> None:
        self.p, self.local_size, self.tile = p, local_size, p.workgroup_size[0]
        root = p.entry[0]
        self.facts = Facts(p)
        atomics = {x.buffer for x in node_all_exprs(p.entry) if isinstance(x, E.Atomic)}
        self.mutated = assigned_vars(root.body)
        self.scan = _Scan([], [], [])
        _scan(root.body, [], {}, self.mutated, self.scan)
        written = {b for b, _, _ in self.scan.stores} | atomics
        self.readonly = {b.name for b in p.buffers if not b.is_workgroup} - written
        self.slot_bufs = written - atomics - {b.name for b in p.buffers if b.is_workgroup}
        self.fresh = NameSource(all_names(p), "opt_tab_")
        # table names unique across a graph's stages (each stage is tabulated on its own): a digest of the stage
        self.table_name = NameSource(all_names(p), f"opt_tab{hashlib.sha1(repr(p).encode()).hexdigest()[:4]}_")
        self.q = E.Var(self.fresh("q"))
        self.tables: dict = {}
        self.pre: list = []
        self.scratch: list = []
        self.notes: list = []
        self.replace: dict = {}
        self.grid_guard = self._grid_guard(root)

    def _grid_guard(self, root: Region):
        if not has_workgroup_or_atomic(self.p):
            return None
        lets = [s for s in root.body if isinstance(s, N.Let)]
        rest = [s for s in root.body if not isinstance(s, N.Let)]
        if len(rest) != 1 or not isinstance(rest[0], N.If) or rest[0].otherwise or any(
                s.name in self.mutated for s in lets):
            return False
        return rest[0].cond, {s.name: s.value for s in lets}

    def keyed(self, c: int, env: dict, local: set) -> Keyed:
        slots: dict = {b: [] for b in self.slot_bufs}
        for b, idx, senv in self.scan.stores:
            if b in slots:
                f = Keyed(c, self.tile, senv, set(), self.readonly, self.q).coarse(idx)
                slots[b].append(None if f is None else linear(f, self.q))
        return Keyed(c, self.tile, env, local, self.readonly, self.q, slots, self.facts.type_of)

    def keys(self, c: int, conds: list, kd: Keyed) -> Optional[int]:
        nq = key_bound(conds, kd)
        if self.grid_guard is False:
            return None
        if self.grid_guard is not None:
            cond, env = self.grid_guard
            top = key_bound([cond], Keyed(c, self.tile, env, set(), self.readonly, self.q))
            max_result = max((b.count for b in self.p.buffers if b.is_result), default=0)
            if top is None or top * c > max_result:
                return None
        return nq

    def table(self, forms: list, out: str, loop_var: Optional[str], c: int, count: int) -> tuple[BufferDecl, bool]:
        canon = _canonical(forms, out, loop_var, self.q) + f"|{c}|{count}"
        new = canon not in self.tables
        if new:
            self.tables[canon] = BufferDecl(self.table_name(out), 0, BufferAccess.ReadWrite,
                                            self.facts.type_of(E.Var(out)), count)
            self.scratch.append(self.tables[canon])
        return self.tables[canon], new

    def prepass(self, forms: list, loop: Optional[N.Loop], nq: int, length: int, outs: list) -> None:
        used = {x.buffer for x in node_all_exprs(forms) if isinstance(x, (E.Load, E.BufLen))}
        bufs = [read_only(b, k) for k, b in enumerate(b for b in self.p.buffers if b.name in used)]
        for o, decl in outs:
            bufs.append(BufferDecl(decl.name, len(bufs), BufferAccess.ReadWrite, decl.element, decl.count,
                                   pipeline_live_out=True))
        g = E.Var(self.fresh("g"))
        head = [N.Let(self.q.name, _bin(BinOp.Div, g, E.LitU32(length)) if length > 1 else g)]
        if loop is not None:
            j = _bin(BinOp.Mod, g, E.LitU32(length))
            head.append(N.Let(loop.var, _bin(BinOp.Add, j, loop.from_) if loop.from_.value else j))
        body = (N.Let(g.name, _GID),
                N.If(_bin(BinOp.Lt, g, E.LitU32(nq * length)),
                     (*head, *forms, *(N.Store(decl.name, g, E.Var(o)) for o, decl in outs)), ()))
        self.pre.append(Program(tuple(bufs), (self.local_size, 1, 1),
                                (Region(TABULATE_GENERATOR, None, body),), self.p.entry_op_id))

    def emit(self, forms: list, outs: list, loop: Optional[N.Loop], c: int, nq: int, length: int) -> list:
        """Tables for `outs` (new ones get a pre-pass) and the lets that load them."""
        loads, new, names = [], [], []
        key = _key_expr(c, self.tile)
        for o in outs:
            decl, fresh = self.table(forms, o, loop.var if loop is not None else None, c, nq * length)
            if fresh:
                new.append((o, decl))
            names.append(decl.name)
            if loop is None:
                idx = key
            else:
                j = _bin(BinOp.Sub, E.Var(loop.var), loop.from_) if loop.from_.value else E.Var(loop.var)
                idx = _bin(BinOp.Add, _bin(BinOp.Mul, key, E.LitU32(length)), j)
            loads.append(N.Let(o, E.Load(decl.name, idx)))
        if new:
            self.prepass(forms, loop, nq, length, new)
        by = "the id" if c == 1 else f"id // {c}"
        where = f"(key, `{loop.var}`) ({nq} x {length})" if loop is not None else f"key ({nq} keys)"
        self.notes.append(f"{', '.join(outs)} depend on the invocation only through {by}: computed once per "
                          f"{where} by a pre-pass into {', '.join(names)}")
        return loads

    def loop_tables(self) -> None:
        inside: set = set()  # nodes of a loop already rewritten (an inner loop's site is then stale)
        for site in self.scan.loops:
            if id(site.node) in inside:
                continue
            loop = site.node
            length = loop.to.value - loop.from_.value
            for c in _candidates(self.p):
                kd = self.keyed(c, site.env, {loop.var})
                moved, forms, rest = _region(loop, kd, self.facts, self.fresh)
                outs = [n.name for n in forms if isinstance(n, N.Let) and n.name in read_vars(rest)]
                nq = self.keys(c, site.conds, kd) if outs else None
                if (nq is None or nq * length > MAX_TABLE or not _worth(forms, self.facts)
                        or not any(x == self.q for x in node_all_exprs(forms))
                        or any(self.facts.type_of(E.Var(o)) not in _TYPES for o in outs)):
                    continue
                loads = self.emit(forms, outs, loop, c, nq, length)
                self.replace[id(loop)] = [dataclasses.replace(loop, body=tuple(loads) + tuple(rest))]
                inside.update(id(n) for n in walk_nodes(loop.body))
                break

    def key_tables(self) -> None:
        """One reduction per key (see the module docstring), the first found."""
        for nodes, conds, env in self.scan.lists:
            for i, s in enumerate(nodes):
                if not (isinstance(s, N.Let) and s.name in self.mutated):
                    continue
                users = [k for k in range(i + 1, len(nodes)) if s.name in assigned_vars([nodes[k]])]
                if len(users) != 1:
                    continue
                k = users[0]
                if s.name in read_vars(nodes[i + 1:k]):
                    continue  # read before the loop: the table would hold its final value
                loop, wrap = nodes[k], None
                while isinstance(loop, (Region, N.Block)) and len(loop.body) == 1:
                    wrap, loop = loop, loop.body[0]
                if not isinstance(loop, N.Loop) or _lit(loop.from_) is None or _lit(loop.to) is None:
                    continue
                for c in _candidates(self.p):
                    if c == 1:
                        continue  # one invocation per key: nothing is shared, nothing to gain
                    kd = self.keyed(c, env, set())
                    red = _reduction(s, loop, [n for m, n in enumerate(nodes) if m not in (i, k)], kd)
                    nq = self.keys(c, conds, kd) if red is not None else None
                    if (nq is None or nq > MAX_TABLE or not any(x == self.q for x in node_all_exprs(red))
                            or self.facts.type_of(E.Var(s.name)) not in _TYPES):
                        continue
                    loads = self.emit(list(red), [s.name], None, c, nq, 1)
                    self.replace[id(s)] = loads
                    self.replace[id(nodes[k])] = []
                    return

    def result(self) -> Optional[Tabulated]:
        if not self.replace:
            return None
        p = self.p
        bufs = list(p.buffers)
        nxt = next_binding(p)
        for k, s in enumerate(self.scratch):
            bufs.append(BufferDecl(s.name, nxt + k, BufferAccess.ReadOnly, s.element, s.count))
        main = replace_entry(dataclasses.replace(p, buffers=tuple(bufs)), rewrite_nodes(
            p.entry, stmt=lambda n: tuple(self.replace[id(n)]) if id(n) in self.replace else None))
        return Tabulated(tuple(self.pre) + (main,), tuple(self.scratch), self.notes)


def tabulate(p: Program, local_size: int = PRE_LOCAL_SIZE) -> Optional[Tabulated]:
    """The pre-pass kernels and the main program of one round, or None when nothing moves."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return None
    if any(isinstance(n, (N.Return, N.Trap) + N.UNSUPPORTED_NODES) for n in walk_nodes(p.entry)):
        return None
    b = _Builder(p, local_size)
    b.loop_tables()
    if not b.replace:
        b.key_tables()
    return b.result()


class Tabulate(PassBase):
    """Tabulation (module docstring): the main stage is offered again while a round moves something."""
    name, kind, repeat, max_stages = "tabulate", "split", True, MAX_TAB_STAGES
    tidy = ("dce",)

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        t = tabulate(program, ctx.local_size or PRE_LOCAL_SIZE)
        return None if t is None else Rewrite(t.stages, t.scratch, detail=t)

    def explain(self, rewrite: Rewrite) -> str:
        return "; ".join(rewrite.detail.notes)

    def merge(self, stages: list, scratch: list) -> tuple[list, list]:
        """After every stage was tabulated: one pre-pass per distinct table (tables.py)."""
        return share_tables(stages, scratch)


TABULATE = Tabulate()
