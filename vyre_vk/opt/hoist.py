"""Invocation-invariant hoisting: work every invocation repeats identically moves into a
pre-pass kernel that computes it once per loop iteration and leaves it in a scratch buffer.

Found from the IR's data dependences alone. In a loop ``for j in A..B`` (literal bounds)
the statements of its body whose values depend only on ``j``, literals, loads from buffers
the program never writes and each other (no invocation id, no effect, no trap) are
*invariant*. They run in a pre-pass program with one invocation per ``j`` (same
statements, same operation order, so the values are bit-identical); the variables the
rest of the body reads are stored to one scratch buffer each, and the main program's
loop body starts with ``let v = scratch_v[j - A]`` instead of computing them.

An invariant statement is kept in the main body if a non-invariant statement before it
reads a variable it writes (moving it would change what that statement sees). For the
seed op (mlp_backward) this moves h_acc, d_act, gh_act and gh out of every invocation:
O(M^2 H) work becomes O(M H).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess
from ..ir.walk import node_all_exprs, rewrite_nodes, walk_nodes
from ..ir.grid import has_workgroup_or_atomic as _has_workgroup_or_atomic
from .analysis import Facts, NameSource, all_names, assigned_vars, next_binding, read_only, read_vars, replace_entry
from .protocol import PassBase, PassContext, Rewrite

HOIST_GENERATOR = "vyre_vk.opt.hoist_invariant"
MAX_SCRATCH_ELEMENTS = 1 << 24
#: Stages a graph may reach by hoisting (each hoisting adds a pre-pass).
MAX_STAGES = 4


@dataclasses.dataclass(frozen=True)
class Hoisted:
    """The result of one hoisting: the pre-pass, the rewritten program, the scratch buffers."""
    prepass: Program
    main: Program
    scratch: tuple[BufferDecl, ...]
    exported: tuple[str, ...]
    loop_var: str
    moved: tuple[str, ...] = ()  # variables the pre-pass computes (top-level lets moved)


class _Finder:
    def __init__(self, p: Program, min_loops: int) -> None:
        self.p = p
        self.facts = Facts(p)
        self.min_loops = min_loops

    def value_ok(self, e: E.Expr, allowed: set) -> bool:
        return self.facts.computed_from(e, allowed)

    def list_ok(self, nodes, allowed: set, assignable: set) -> bool:
        allowed, assignable = set(allowed), set(assignable)
        for n in nodes:
            if not self.stmt_ok(n, allowed, assignable):
                return False
            if isinstance(n, N.Let):
                allowed.add(n.name)
                assignable.add(n.name)
        return True

    def stmt_ok(self, n, allowed: set, assignable: set) -> bool:
        if isinstance(n, N.Let):
            return self.value_ok(n.value, allowed)
        if isinstance(n, N.Assign):
            return n.name in assignable and self.value_ok(n.value, allowed)
        if isinstance(n, N.Loop):
            return (self.value_ok(n.from_, allowed) and self.value_ok(n.to, allowed)
                    and self.list_ok(n.body, allowed | {n.var}, assignable))
        if isinstance(n, N.If):
            return (self.value_ok(n.cond, allowed) and self.list_ok(n.then, allowed, assignable)
                    and self.list_ok(n.otherwise, allowed, assignable))
        if isinstance(n, N.Block):
            return self.list_ok(n.body, allowed, assignable)
        return False

    def split(self, loop: N.Loop):
        """(indices of hoisted body statements, exported variable names) for `loop`."""
        inv: set = set()
        observed: set = set()
        hoisted: list = []
        lets: list = []
        for i, s in enumerate(loop.body):
            if self.stmt_ok(s, inv | {loop.var}, inv) and not (assigned_vars([s]) & observed):
                hoisted.append(i)
                if isinstance(s, N.Let):
                    inv.add(s.name)
                    lets.append(s.name)
            else:
                observed |= read_vars([s]) & inv
                observed |= assigned_vars([s]) & inv
                inv -= assigned_vars([s])
        rest = [s for i, s in enumerate(loop.body) if i not in set(hoisted)]
        used = read_vars(rest) | assigned_vars(rest)
        exported = [v for v in lets if v in used]
        return hoisted, exported

    def profitable(self, loop: N.Loop, hoisted: list) -> bool:
        loops = sum(1 for i in hoisted for n in walk_nodes([loop.body[i]]) if isinstance(n, N.Loop))
        return loops >= self.min_loops


def find_candidate(p: Program, min_loops: int = 1):
    """The first loop worth hoisting from: (loop, hoisted indices, exported names) or None."""
    if _has_workgroup_or_atomic(p):
        return None
    f = _Finder(p, min_loops)
    for n in walk_nodes(p.entry):
        if not isinstance(n, N.Loop) or not (isinstance(n.from_, E.LitU32) and isinstance(n.to, E.LitU32)):
            continue
        length = n.to.value - n.from_.value
        if length <= 0 or length > MAX_SCRATCH_ELEMENTS:
            continue
        hoisted, exported = f.split(n)
        if exported and all(f.facts.env.get(v) is not None for v in exported) and f.profitable(n, hoisted):
            return n, hoisted, exported
    return None


def hoist_invariant(p: Program, min_loops: int = 1, prepass_local_size: int = 64) -> Optional[Hoisted]:
    """Split `p` into a pre-pass and a main program, or None if nothing is worth hoisting."""
    cand = find_candidate(p, min_loops)
    if cand is None:
        return None
    loop, hoisted, exported = cand
    facts = Facts(p)
    fresh = NameSource(all_names(p), "opt_hoist_")
    lo, hi = loop.from_.value, loop.to.value
    length = hi - lo
    moved = [loop.body[i] for i in hoisted]
    # ---- scratch buffers and the pre-pass
    used_bufs = {x.buffer for x in node_all_exprs(moved) if isinstance(x, (E.Load, E.BufLen))}
    pre_bufs: list = []
    for b in p.buffers:
        if b.name in used_bufs:
            pre_bufs.append(read_only(b, len(pre_bufs)))
    scratch_pre, scratch_main = [], []
    next_main = next_binding(p)
    for k, v in enumerate(exported):
        name = fresh(v + "_")
        t = facts.env[v]
        scratch_pre.append(BufferDecl(name, len(pre_bufs) + k, BufferAccess.ReadWrite, t, length,
                                      pipeline_live_out=True))
        scratch_main.append(BufferDecl(name, next_main + k, BufferAccess.ReadOnly, t, length))
    g = E.InvocationId(0)
    jv = E.BinOpExpr(E.BinOp.Add, g, E.LitU32(lo)) if lo else g
    pre_body = (N.Let(loop.var, jv),
                N.If(E.BinOpExpr(E.BinOp.Lt, g, E.LitU32(length)),
                     tuple(moved) + tuple(N.Store(s.name, g, E.Var(v)) for s, v in zip(scratch_pre, exported)),
                     ()))
    prepass = Program(tuple(pre_bufs) + tuple(scratch_pre), (prepass_local_size, 1, 1),
                      (Region(HOIST_GENERATOR, None, pre_body),), p.entry_op_id)
    # ---- the main program: loads instead of the moved statements
    idx = E.BinOpExpr(E.BinOp.Sub, E.Var(loop.var), E.LitU32(lo)) if lo else E.Var(loop.var)
    loads = tuple(N.Let(v, E.Load(s.name, idx)) for s, v in zip(scratch_main, exported))
    new_loop = N.Loop(loop.var, loop.from_, loop.to,
                      loads + tuple(s for i, s in enumerate(loop.body) if i not in set(hoisted)))
    main = replace_entry(Program(tuple(p.buffers) + tuple(scratch_main), p.workgroup_size, p.entry,
                                 p.entry_op_id, p.non_composable_with_self),
                         rewrite_nodes(p.entry, stmt=lambda n: (new_loop,) if n is loop else None))
    return Hoisted(prepass, main, tuple(scratch_main), tuple(exported), loop.var,
                   tuple(n.name for n in moved if isinstance(n, N.Let)))


class HoistInvariant(PassBase):
    """Invocation-invariant hoisting into a pre-pass kernel (module docstring). Splits the
    stage; the main part is offered again (another loop may be worth hoisting) until the
    graph has MAX_STAGES stages; dce then tidies what the main stage no longer reads."""
    name = "hoist_invariant"
    kind = "split"
    repeat = True
    max_stages = MAX_STAGES
    tidy = ("dce",)

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return not _has_workgroup_or_atomic(program)

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        h = hoist_invariant(program, min_loops=ctx.hoist_min_loops)
        return None if h is None else Rewrite((h.prepass, h.main), h.scratch, detail=h)

    def explain(self, rewrite: Rewrite) -> str:
        h: Hoisted = rewrite.detail
        return (f"{', '.join(h.moved)} depend only on `{h.loop_var}` (no invocation id): computed once "
                f"per `{h.loop_var}` by a pre-pass kernel instead of by every invocation; the main "
                f"kernel reads {', '.join(h.exported)} from scratch")


HOIST_INVARIANT = HoistInvariant()
