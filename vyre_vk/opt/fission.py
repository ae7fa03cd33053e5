"""Invocation fission: independent loop chains of a one-value-per-invocation program run in
separate invocations, then a small kernel combines them.

The pre-pass that ``hoist_invariant`` builds has the shape

    let j = gid + lo;  if gid < L { S_1; ...; S_n; store scratch_v[gid] = v ... }

where S_1..S_n compute, per j, values through loops (the seed op: h_j through a loop over
the model dimension, and independently g_j through another). Each invocation walks the
chains one after the other, so the stage's time is the sum of the chains' latencies while
most of the GPU idles. Here the statements up to the last loop are split into the
connected components of their def-use graph; with two or more components that hold a
loop, stage A runs component c in invocations [c*L, (c+1)*L) and stores the values the
rest needs to scratch buffers of K*L elements (K*L so the inferred grid covers every
component), and stage B (one invocation per j) loads them and runs the remaining
statements and the original stores. Each value is computed by the same statements in the
same order, so results are bit-identical. Measured on the H200 (tools/bench/seed_schedules.py,
seed op 2048x8192): the pre-pass falls from 1.53 ms to 0.33 ms.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess
from ..ir.walk import node_all_exprs, walk_nodes
from .analysis import NameSource, all_names, assigned_vars, read_only, read_vars, uses_workgroup_scope, var_types
from .protocol import PassBase, PassContext, Rewrite

FISSION_GENERATOR = "vyre_vk.opt.fission"
MAX_COMPONENTS = 8
#: Fissions per optimize() run (each adds a stage).
MAX_FISSIONS = 2


def _shape(p: Program):
    """(var, lo, L, statements, stores) when `p` is `let var = gid [+ lo]; if gid < L {...; stores}`."""
    body: list = []
    for r in p.entry:
        if not isinstance(r, Region):
            return None
        body.extend(r.body)
    if len(body) != 2 or not isinstance(body[0], N.Let) or not isinstance(body[1], N.If) or body[1].otherwise:
        return None
    let, guard = body
    gid = E.InvocationId(0)
    lo = 0
    if let.value != gid:
        v = let.value
        if not (isinstance(v, E.BinOpExpr) and v.op is E.BinOp.Add and v.left == gid and isinstance(v.right, E.LitU32)):
            return None
        lo = v.right.value
    c = guard.cond
    if not (isinstance(c, E.BinOpExpr) and c.op is E.BinOp.Lt and c.left == gid and isinstance(c.right, E.LitU32)):
        return None
    stmts = list(guard.then)
    stores = []
    while stmts and isinstance(stmts[-1], N.Store):
        stores.insert(0, stmts.pop())
    if not stores or any(s.index != gid or not isinstance(s.value, E.Var) for s in stores):
        return None
    if any(isinstance(n, (N.Store, N.Barrier, N.Return)) for n in walk_nodes(stmts)):
        return None
    return let.name, lo, c.right.value, stmts, stores


def _defs(s: N.Node) -> set:
    return ({s.name} if isinstance(s, N.Let) else set()) | assigned_vars([s])


def _components(stmts: list) -> list[list[int]]:
    """Connected components (by shared variables) of `stmts`, each in statement order."""
    parent = list(range(len(stmts)))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    uses = [read_vars([s]) | assigned_vars([s]) for s in stmts]
    defs = [_defs(s) for s in stmts]
    for a in range(len(stmts)):
        for b in range(a + 1, len(stmts)):
            if defs[a] & uses[b] or defs[b] & uses[a] or defs[a] & defs[b]:
                parent[find(a)] = find(b)
    groups: dict = {}
    for i in range(len(stmts)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


def fission(p: Program) -> tuple[Program, Optional[tuple[Program, Program, tuple[BufferDecl, ...], str]]]:
    """Split `p` into (stage A, stage B, scratch, why), or return None as the second item."""
    if uses_workgroup_scope(p) or any(b.is_workgroup for b in p.buffers):
        return p, None
    shape = _shape(p)
    if shape is None:
        return p, None
    var, lo, length, stmts, stores = shape
    has_loop = [any(isinstance(n, N.Loop) for n in walk_nodes([s])) for s in stmts]
    if not any(has_loop):
        return p, None
    last = max(i for i, h in enumerate(has_loop) if h)
    head, tail = stmts[:last + 1], stmts[last + 1:]
    comps = _components(head)
    loops = [c for c in comps if any(has_loop[i] for i in c)]
    if not 2 <= len(loops) <= MAX_COMPONENTS:
        return p, None
    local = set().union(*(_defs(s) for s in stmts))
    if any(assigned_vars([s]) - local for s in stmts) or var in local:
        return p, None  # a chain writes a name from outside the body: not ours to split
    rest_idx = sorted(i for c in comps if c not in loops for i in c)  # loop-free parts run in stage B
    later = [head[i] for i in rest_idx] + tail + stores
    need = read_vars(later) | assigned_vars(later)
    types = var_types(p)
    k, total = len(loops), len(loops) * length
    if total > 1 << 24:
        return p, None
    fresh = NameSource(all_names(p), "opt_fiss_")
    gid = E.InvocationId(0)
    exports: list = []  # (component index, var, scratch name, type)
    for ci, comp in enumerate(loops):
        for i in comp:
            s = head[i]
            if isinstance(s, N.Let) and s.name in need:
                if types.get(s.name) is None:
                    return p, None
                exports.append((ci, s.name, fresh(s.name + "_"), types[s.name]))
    by_name = {b.name: b for b in p.buffers}

    def loaded(nodes) -> list:
        names = {x.buffer for x in node_all_exprs(nodes) if isinstance(x, (E.Load, E.BufLen))}
        return [b for b in p.buffers if b.name in names]

    def ro(bufs, start=0):
        return [read_only(b, start + n) for n, b in enumerate(bufs)]

    # ---- stage A: component c in invocations [c*L, (c+1)*L)
    a_src = loaded([head[i] for c in loops for i in c])
    if any(b.name in {s.buffer for s in stores} for b in a_src):
        return p, None  # a chain reads what the program writes: splitting would reorder it
    a_bufs = ro(a_src)
    a_scratch = [BufferDecl(name, len(a_bufs) + n, BufferAccess.ReadWrite, t, total, pipeline_live_out=True)
                 for n, (_, _, name, t) in enumerate(exports)]
    branch: tuple = ()
    for ci in reversed(range(k)):
        first = E.BinOpExpr(E.BinOp.Sub, gid, E.LitU32(ci * length)) if ci else gid
        jv = E.BinOpExpr(E.BinOp.Add, first, E.LitU32(lo)) if lo else first
        body = ((N.Let(var, jv),) + tuple(head[i] for i in loops[ci])
                + tuple(N.Store(name, gid, E.Var(v)) for c, v, name, _ in exports if c == ci))
        branch = body if ci == k - 1 else (N.If(E.BinOpExpr(E.BinOp.Lt, gid, E.LitU32((ci + 1) * length)),
                                                 body, branch),)
    # one outer guard, so workgroup_size sees that ids >= K*L do nothing
    guarded = (N.If(E.BinOpExpr(E.BinOp.Lt, gid, E.LitU32(total)), branch, ()),)
    stage_a = Program(tuple(a_bufs) + tuple(a_scratch), p.workgroup_size,
                      (Region(FISSION_GENERATOR, None, guarded),), p.entry_op_id)
    # ---- stage B: one invocation per j, the chains' values loaded, the rest as before
    outs = {b.name for b in p.buffers if b.is_result}  # the last stage returns every result
    b_src = [b for b in loaded(later) if b.name not in outs]
    b_bufs = ro(b_src)
    b_scratch = [BufferDecl(name, len(b_bufs) + n, BufferAccess.ReadOnly, t, total)
                 for n, (_, _, name, t) in enumerate(exports)]
    b_outs = [dataclasses.replace(by_name[name], binding=len(b_bufs) + len(b_scratch) + n)
              for n, name in enumerate(b.name for b in p.buffers if b.name in outs)]
    loads = tuple(N.Let(v, E.Load(name, E.BinOpExpr(E.BinOp.Add, gid, E.LitU32(c * length)) if c else gid))
                  for c, v, name, _ in exports)
    jv = E.BinOpExpr(E.BinOp.Add, gid, E.LitU32(lo)) if lo else gid
    b_body = (N.Let(var, jv), N.If(E.BinOpExpr(E.BinOp.Lt, gid, E.LitU32(length)),
                                   loads + tuple(later), ()))
    stage_b = Program(tuple(b_bufs) + tuple(b_scratch) + tuple(b_outs), p.workgroup_size,
                      (Region(FISSION_GENERATOR, None, b_body),), p.entry_op_id)
    chains = ["{" + ", ".join(s.name for s in (head[i] for i in c) if isinstance(s, N.Let)) + "}" for c in loops]
    why = (f"{k} independent loop chains {' '.join(chains)} run in separate invocations ({k} x {length}) "
           f"instead of one after another; a combine kernel loads {', '.join(v for _, v, _, _ in exports)}")
    scratch = tuple(dataclasses.replace(b, access=BufferAccess.ReadWrite, pipeline_live_out=False)
                    for b in b_scratch)
    return p, (stage_a, stage_b, scratch, why)


class Fission(PassBase):
    """Invocation fission of a pre-pass's independent loop chains (module docstring); at most
    MAX_FISSIONS splits per run, each stage split once."""
    name = "fission"
    kind = "split"
    max_splits = MAX_FISSIONS

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return not uses_workgroup_scope(program) and _shape(program) is not None

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        _, res = fission(program)
        return None if res is None else Rewrite((res[0], res[1]), res[2], detail=res[3])


FISSION = Fission()
