"""Phase splitting for programs whose every workgroup uses its own workgroup memory: each
workgroup's slice of a workgroup buffer becomes a slice of one device scratch buffer.

``split_phases`` (phases.py) handles vyre's one-workgroup reductions. vyre's tiled attention is
the other shape: one workgroup per query row, all under ``if workgroup_x < W``; lane 0 computes
the row max into ``attention_scratch[0]``, then the exp sum into ``[1]``, a barrier, then 64
lanes read both and write the outputs. Cut into kernels, the row statistics become values a
later kernel only reads, which is what lets ``tabulate`` compute the softmax weights once per
(row, key) instead of per lane.

Why the cuts keep every value:

* a workgroup's slice ``buf[i]`` lives at ``scratch[workgroup_x * count + i]`` (an index outside
  ``0..count`` reads 0 and drops stores, as workgroup memory does), so workgroups never share a
  slot, exactly as they never shared workgroup memory;
* a barrier orders a workgroup's accesses as a kernel boundary does, and so does a cut between
  two statements of which the second reads a workgroup buffer the first wrote: in the program
  as written the lanes could interleave there only where the reference (which runs statement
  by statement) already orders them, so the kernel boundary reproduces the reference's order;
* each kernel re-evaluates the guard and the pure invocation lets (an integer division only by
  a non-zero literal), and runs on a grid of at least ``W`` workgroups: the workgroups beyond
  ``W`` do nothing.

Refused: anything ``split_phases`` refuses for its own reasons (atomics, subgroups, traps,
values carried between phases, results written before the last phase), a guard without a
literal bound on ``workgroup_x``, statements outside the guard other than pure lets.

Example::

    >>> from vyre_vk.ops import get
    >>> stages, scratch, why = split_per_workgroup(get("vyre-libs::nn::attention").build_with(seq_len=16, head_dim=24))
    >>> len(stages), [(b.name, b.count) for b in scratch]
    (3, [('attention_scratch', 4096)])
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.grid import dispatch_grid
from ..ir.optable import BinOp
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess
from ..ir.walk import node_all_exprs, rewrite_nodes, walk_nodes, replace_expr
from .analysis import OPAQUE_EXPRS, assigned_vars, free_vars, read_only, read_vars, stored_buffers, zero_literal
from .keyed import literal_limits
from .phases import MAX_PHASES, _used_bufs, cut, invocation_pure, split_phases
from .protocol import PassBase, PassContext, Rewrite

_WGX = E.WorkgroupId(0)


def _bound(guard: E.Expr, env: dict) -> Optional[int]:
    return next((n for left, n in literal_limits([guard], env) if left == _WGX), None)


def _cut_on_reads(phases: list, wg: set) -> list:
    """Also cut before a statement that reads a workgroup buffer its phase has written."""
    out: list = []
    for ph in phases:
        cur: list = []
        written: set = set()
        for s in ph:
            reads = {x.buffer for x in node_all_exprs([s]) if isinstance(x, E.Load)} & wg
            if reads & written and cur:
                out.append(cur)
                cur, written = [], set()
            cur.append(s)
            written |= stored_buffers([s]) & wg
        out.append(cur)
    return [ph for ph in out if ph]


def _slice(nodes, shared: dict):
    """Loads and stores of each shared workgroup buffer moved to this workgroup's slice."""
    def idx(buf: str, i: E.Expr) -> E.Expr:
        return E.BinOpExpr(BinOp.Add, E.BinOpExpr(BinOp.Mul, _WGX, E.LitU32(shared[buf].count)), i)

    def inside(buf: str, i: E.Expr) -> Optional[E.Expr]:
        if isinstance(i, E.LitU32):
            return None if i.value < shared[buf].count else E.LitBool(False)
        return E.BinOpExpr(BinOp.Lt, i, E.LitU32(shared[buf].count))

    def expr(e: E.Expr) -> Optional[E.Expr]:
        if isinstance(e, E.Load) and e.buffer in shared:
            i = replace_expr(e.index, expr)
            load = E.Load(e.buffer, idx(e.buffer, i))
            ok = inside(e.buffer, i)
            return load if ok is None else E.Select(ok, load, zero_literal(shared[e.buffer].element))
        return None

    def stmt(n: N.Node):
        if isinstance(n, N.Store) and n.buffer in shared:
            i, v = replace_expr(n.index, expr), replace_expr(n.value, expr)
            store = N.Store(n.buffer, idx(n.buffer, i), v)
            ok = inside(n.buffer, i)
            return (store,) if ok is None else (N.If(ok, (store,), ()),)
        return None
    return rewrite_nodes(nodes, stmt=stmt, expr=lambda e: replace_expr(e, expr))


def split_per_workgroup(p: Program) -> tuple[list[Program], list[BufferDecl], str]:
    """The stage programs, the scratch buffers and why; ([p], [], reason) when refused."""
    if len(p.entry) != 1 or not isinstance(p.entry[0], Region) or tuple(p.workgroup_size[1:]) != (1, 1):
        return [p], [], "not one Region over a 1-D workgroup"
    root, tile = p.entry[0], p.workgroup_size[0]
    top = [s for s in root.body if isinstance(s, N.Let)]
    rest = [s for s in root.body if not isinstance(s, N.Let)]
    mutated = assigned_vars(root.body)
    env: dict = {}
    for s in top:
        if s.name in mutated or not invocation_pure(s.value, env, divisions=True):
            return [p], [], "a statement outside the guard"
        env[s.name] = s.value
    if len(rest) != 1 or not isinstance(rest[0], N.If) or rest[0].otherwise:
        return [p], [], "not one guarded body"
    guard = rest[0].cond
    w = _bound(guard, env)
    if w is None or not invocation_pure(guard, env, divisions=True):
        return [p], [], "no literal bound on workgroup_x"
    inner = rest[0].then
    bad = next((type(n).__name__ for n in walk_nodes(inner) if isinstance(n, (N.Return, N.Trap) + N.UNSUPPORTED_NODES)),
               None) or next((type(x).__name__ for x in node_all_exprs(inner) if isinstance(x, OPAQUE_EXPRS)
                              or isinstance(x, (E.SubgroupLocalId, E.SubgroupSize, E.BufLen))), None)
    if bad:
        return [p], [], f"uses {bad}"
    wg = {b.name: b for b in p.buffers if b.is_workgroup}
    phases = _cut_on_reads(cut(inner), set(wg))
    inner_env = dict(env)
    for ph in phases:
        for s in ph:
            if isinstance(s, N.Let) and s.name not in mutated and invocation_pure(s.value, inner_env, divisions=True):
                inner_env[s.name] = s.value
    pure = set(inner_env) - set(env)
    phases = [[s for s in ph if not (isinstance(s, N.Let) and s.name in pure)] for ph in phases]
    phases = [ph for ph in phases if ph]
    if not 2 <= len(phases) <= MAX_PHASES:
        return [p], [], f"{len(phases)} phase(s)"
    for k, ph in enumerate(phases):
        own = {s.name for s in ph if isinstance(s, N.Let)}
        for j, other in enumerate(phases):
            carried = own & free_vars(other) if j != k else set()
            if carried:
                return [p], [], f"`{sorted(carried)[0]}` is carried between phases"
    uses = [_used_bufs(ph) for ph in phases]
    shared = {n: b for n, b in wg.items() if sum(n in u for u in uses) > 1}
    if not shared:
        return [p], [], "no workgroup buffer is shared between phases"
    if any(isinstance(x, E.Atomic) and x.buffer in shared for x in node_all_exprs(inner)):
        return [p], [], "an atomic on a shared workgroup buffer"
    results = {b.name for b in p.buffers if b.is_result}
    last = len(phases) - 1
    for k in range(last):
        early = (stored_buffers(phases[k]) - set(wg)) | (uses[k] & results)
        if early:
            return [p], [], f"`{sorted(early)[0]}` is a result used before the last phase"
    total = {n: max(w * b.count, w * tile) for n, b in shared.items()}
    stages: list[Program] = []
    for k, ph in enumerate(phases):
        body = list(_slice(ph, shared))
        need = set(read_vars(body)) | read_vars([N.If(guard, (), ())])
        lets = [N.Let(n, v) for n, v in inner_env.items() if n in pure]
        grow = True
        while grow:
            more = set().union(*(read_vars([x]) for x in lets if x.name in need)) - need
            need |= more
            grow = bool(more)
        guarded = N.If(guard, tuple(x for x in lets if x.name in need) + tuple(body), ())
        stmts = [s for s in top if s.name in need] + [guarded]
        stores = stored_buffers(ph)
        bufs: list[BufferDecl] = []
        for b in p.buffers:
            if b.name in shared and b.name in uses[k]:
                acc = BufferAccess.ReadWrite if b.name in stores else BufferAccess.ReadOnly
                bufs.append(BufferDecl(b.name, len(bufs), acc, b.element, total[b.name]))
            elif b.is_workgroup and b.name in uses[k]:
                bufs.append(b)
            elif not b.is_workgroup and k == last and (b.name in uses[k] or b.is_result):
                bufs.append(dataclasses.replace(b, binding=len(bufs)))
            elif not b.is_workgroup and b.name in uses[k]:
                bufs.append(read_only(b, len(bufs)))
        st = Program(tuple(bufs), p.workgroup_size, (Region(root.generator, root.source_region, tuple(stmts)),),
                     p.entry_op_id)
        if dispatch_grid(st, {})[0] < w:
            return [p], [], f"phase {k}'s grid would cover fewer than {w} workgroups"
        stages.append(st)
    if dispatch_grid(p, {})[0] < w:
        return [p], [], f"the program's grid covers fewer than {w} workgroups"
    scratch = [BufferDecl(n, 0, BufferAccess.ReadWrite, b.element, total[n]) for n, b in shared.items()]
    why = (f"{len(phases)} phases of each of {w} workgroups run as {len(phases)} kernels (workgroup buffers "
           f"{', '.join(shared)} become per-workgroup slices of scratch), so later passes see the row statistics as inputs")
    return stages, scratch, why


class SplitPhases(PassBase):
    """Phase splitting: phases.py's one-workgroup split, else this module's per-workgroup one; at
    most one split per stage."""
    name, kind, max_splits = "split_phases", "split", 1

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return any(b.is_workgroup for b in program.buffers) and any(
            isinstance(n, N.Barrier) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        stages, scratch, why = split_phases(program)
        if len(stages) == 1:
            stages, scratch, why = split_per_workgroup(program)
        return Rewrite(tuple(stages), tuple(scratch), detail=why) if len(stages) > 1 else None


SPLIT_PHASES = SplitPhases()

__all__ = ["split_per_workgroup", "SplitPhases", "SPLIT_PHASES"]
