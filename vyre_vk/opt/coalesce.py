"""Coalescing by a transposed copy: a loop whose lanes each walk their own row of a small,
often re-read buffer reads a column-major copy instead.

attention's score table is ``dot[q, j] = sum_k q[q*64 + k] * key[j*64 + k]`` with one
invocation per (q, j): the 32 lanes of a warp hold 32 consecutive j, so every load of `key`
touches 32 different 128-byte lines. `key` is 256 KB and each element is read 1024 times, so
the data sits in cache and the stage is bound by cache wavefronts (H100: 0.288 ms of
attention's 0.53, the same in flash_attention). With ``keyT[k*1024 + j] = key[j*64 + k]``
written once by a pre-pass, the lanes read 32 consecutive floats: one line per load.

A load ``buf[r*R + s]`` inside a loop qualifies when
* R is a literal > 1, `r` depends on the invocation id and not on the loop, `s` on the loop
  and not on the invocation (the lanes walk rows, each in its own order). `r*R` may be a sum
  of terms ``x * L`` with every L a multiple of the smallest, R: gqa_attention's key row
  ``kv_head * S*D + j * D`` is row ``kv_head * S + j`` of a D-wide buffer;
* the value ranges prove ``0 <= s < R`` and ``r < ceil(count / R)`` (``bounds.interval``),
  so ``(r, s)`` is the element's true (row, column) and ``s * rows + r`` its place in the copy;
* `buf` is a non-workgroup buffer the stage never writes, f32/u32/i32, and each element is
  read at least MIN_REUSE times by the stage (a buffer read once gains nothing from a copy that
  costs a read and a write of it: the seed op's rows of w1);
* the copy has MIN_COPY to MAX_COPY elements (a tiny buffer is served from L1 anyway).
The copy is the same bits (loads and stores of one value), so every invocation reads what it
read before. One pre-pass per buffer and row length; the pass repeats on the main stage.

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt import optimize
    >>> graph, _ = optimize(get("vyre-libs::nn::attention").build_with(seq_len=64, head_dim=64), device_class="nvidia")
    >>> [b.name for b in graph.scratch if b.name.startswith("opt_co_")]   # k, column-major
    ['opt_co_k_r64_t0']
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import BufferDecl, Program, Region
from ..ir.types import BufferAccess, DataType
from ..ir.walk import map_expr, node_exprs, rewrite_nodes, walk_expr, walk_nodes
from ..lower.bounds import interval, refinements, var_key
from .analysis import (INVOCATION_EXPRS, Facts, NameSource, all_names, assigned_vars, next_binding, read_only,
                       replace_entry)
from .dispatch import invocation_total
from .keychain import KEYCHAIN_GENERATOR
from .protocol import PassBase, PassContext, Rewrite

COALESCE_GENERATOR = "vyre_vk.opt.coalesce"
MIN_REUSE = 8           # reads per element of the buffer by the stage
MAX_COPY = 1 << 22      # elements (16 MB of f32): a copy must stay cheap next to the reads it saves
MIN_COPY = 1 << 12      # elements (16 KB): a smaller buffer sits in L1, and the copy's dispatch and
                        # barrier (a few us) would cost a small op more than its loads (the seed op 4x8)
PRE_LOCAL_SIZE = 256
WARP = 32               # lanes that run a load together (NVIDIA's warp; AMD's wave is wider)
_TYPES = (DataType.F32, DataType.U32, DataType.I32)


@dataclasses.dataclass(frozen=True)
class Coalesced:
    prepass: Program
    main: Program
    scratch: BufferDecl
    buffer: str
    row: int
    rows: int
    loop_var: str
    reads: int


def _terms(e: E.Expr) -> list:
    if isinstance(e, E.BinOpExpr) and e.op is E.BinOp.Add:
        return _terms(e.left) + _terms(e.right)
    return [e]


def _sum(terms: list) -> E.Expr:
    out = terms[0]
    for t in terms[1:]:
        out = E.BinOpExpr(E.BinOp.Add, out, t)
    return out


class _Scan:
    """Walks the stage with the ranges and dependences of its never-assigned lets in scope."""

    def __init__(self, p: Program) -> None:
        self.p, self.facts = p, Facts(p)
        self.assigned = assigned_vars(p.entry)
        self.found: list = []  # (loop, load, r, R, s): loads that qualify, at every site seen
        # never-assigned let -> its (last) value: lane_varying, a speed heuristic, reads through them;
        # whether a copy reads the same element is decided by the ranges alone
        self.defs: dict = {}
        self.bad: set = set()   # loads (by value) seen at a site where they do not qualify

    def depends(self, e: E.Expr, deps: dict, loop_var: Optional[str]) -> tuple[bool, bool]:
        """(reads the invocation id, reads the loop) for `e`, through the lets in `deps`."""
        inv = loop = False
        for x in walk_expr(e):
            if isinstance(x, INVOCATION_EXPRS):
                inv = True
            elif isinstance(x, E.Var):
                if x.name == loop_var:
                    loop = True
                elif x.name in self.assigned:
                    inv = loop = True  # unknown: counts as both, so nothing qualifies by it
                else:
                    a, b = deps.get(x.name, (False, False))
                    inv, loop = inv or a, loop or b
        return inv, loop

    def lane_varying(self, e: E.Expr) -> bool:
        """Whether neighbouring lanes see different values of `e`: it reads the invocation id other
        than through a division by a warp's width or more (attention's query row id // S is one row
        for the whole warp: its loads are broadcasts, which a copy would not help)."""
        if isinstance(e, E.InvocationId):
            return e.axis == 0
        if isinstance(e, E.Var):
            v = self.defs.get(e.name)
            return v is not None and self.lane_varying(v)
        if isinstance(e, E.BinOpExpr):
            if isinstance(e.right, E.LitU32) and ((e.op is E.BinOp.Div and e.right.value >= WARP)
                                                  or (e.op in (E.BinOp.Mod, E.BinOp.Mul) and e.right.value == 0)
                                                  or (e.op is E.BinOp.Mod and e.right.value == 1)):
                return False
            return self.lane_varying(e.left) or self.lane_varying(e.right)
        return False

    def nodes(self, nodes, ranges: dict, deps: dict, loop: Optional[N.Loop]) -> None:
        ranges, deps = dict(ranges), dict(deps)
        lv = loop.var if loop is not None else None
        for n in nodes:
            if isinstance(n, N.Let) and n.name not in self.assigned:
                r = interval(n.value, ranges.get)
                if r is not None:
                    ranges[var_key(n.name)] = r
                deps[n.name] = self.depends(n.value, deps, lv)
                self.defs[n.name] = n.value
            for x in node_exprs(n):  # every statement kind's own expressions: any load rewritten was checked
                for ld in walk_expr(x):
                    if isinstance(ld, E.Load):
                        if loop is None or not self._qualifies(loop, ld, ranges, deps):
                            self.bad.add(ld)
            if isinstance(n, N.Loop):
                inner = dict(ranges)
                if isinstance(n.from_, E.LitU32) and isinstance(n.to, E.LitU32) and n.to.value > n.from_.value:
                    inner[var_key(n.var)] = (n.from_.value, n.to.value - 1)
                # the lets outside do not change while this loop runs: only its own variable is "the loop"
                self.nodes(n.body, inner, {k: (a, False) for k, (a, _) in deps.items()}, n)
            elif isinstance(n, N.If):  # the guard's bound holds inside (gqa: flat < q_total)
                for body, taken in ((n.then, True), (n.otherwise, False)):
                    self.nodes(body, {**ranges, **refinements(n.cond, ranges.get, self.assigned, taken)}, deps, loop)
            elif isinstance(n, (N.Block, N.Region)):
                self.nodes(n.body, ranges, deps, loop)

    def _qualifies(self, loop: N.Loop, ld: E.Load, ranges: dict, deps: dict) -> bool:
        b = self.facts.bufs.get(ld.buffer)
        if (b is None or b.is_workgroup or ld.buffer in self.facts.written or b.element not in _TYPES
                or b.count < 2 or self.facts.may_trap(ld.index)):
            return False
        terms = _terms(ld.index)
        if len(terms) < 2:
            return False
        rows_terms, cols = [], []  # (x, L) of the terms x * L that read the invocation; the rest
        walks = False  # some column term reads the loop
        for t in terms:
            tinv, tloop = self.depends(t, deps, loop.var)
            if tinv and tloop:
                return False
            if not tinv:
                cols.append(t)  # the loop's, or constant
                walks = walks or tloop
                continue
            pairs = ((t.left, t.right), (t.right, t.left)) if isinstance(t, E.BinOpExpr) and t.op is E.BinOp.Mul else ()
            lit = [(x, m.value) for x, m in pairs if isinstance(m, E.LitU32)]
            if not lit:
                return False
            rows_terms.append(lit[0])
        if not rows_terms or not walks:
            return False
        # R: the smallest multiplier, which every other divides (gqa's head * S*D + j * D + d:
        # row head * S + j of a D-wide buffer); r the row, s the column
        R = min(m for _, m in rows_terms)
        if R < 2 or any(m % R for _, m in rows_terms):
            return False
        r = _sum([x if m == R else E.BinOpExpr(E.BinOp.Mul, x, E.LitU32(m // R)) for x, m in rows_terms])
        s = _sum(cols)
        rows = -(-b.count // R)
        rr, sr = interval(r, ranges.get), interval(s, ranges.get)
        if rr is None or sr is None or rr[1] >= rows or sr[1] >= R or not self.lane_varying(r):
            return False
        self.found.append((loop, ld, r, R, s))
        return True


def coalesce(p: Program, prepass_local_size: int = PRE_LOCAL_SIZE) -> Optional[Coalesced]:
    """The first qualifying buffer's pre-pass and the stage reading its copy, or None."""
    total = invocation_total(p)
    if not isinstance(total, E.LitU32) or any(isinstance(n, Region) and n.generator == KEYCHAIN_GENERATOR
                                              for n in walk_nodes(p.entry)):
        # keychain's kernels: one acting lane per key reads each table element once, though the idle
        # lanes of its grid make `reads` look high (H100: flash_attention 0.385 -> 0.40 ms with its
        # score table copied)
        return None
    scan = _Scan(p)
    scan.nodes(p.entry, {}, {}, None)
    for loop, ld, r, R, s in scan.found:
        b = scan.facts.bufs[ld.buffer]
        trips = loop.to.value - loop.from_.value if isinstance(loop.to, E.LitU32) and isinstance(
            loop.from_, E.LitU32) else 0
        rows = -(-b.count // R)
        reads = total.value * trips
        if trips < 2 or reads < MIN_REUSE * b.count or not MIN_COPY <= rows * R <= MAX_COPY:
            continue
        same = [(x, r2, s2) for _, x, r2, R2, s2 in scan.found if x.buffer == ld.buffer]
        if {x for x, _, _ in same} & scan.bad or any(R2 != R for _, x, _, R2, _ in scan.found if x.buffer == ld.buffer):
            continue  # the same load somewhere it does not qualify, or another row length: leave it
        fresh = NameSource(all_names(p), "opt_co_")
        # the row length in the name: stages that copy one buffer share the copy only when it is the same
        name = fresh(f"{ld.buffer}_r{R}_t")
        src = read_only(b, 0)
        dst = BufferDecl(name, 1, BufferAccess.ReadWrite, b.element, rows * R, pipeline_live_out=True)
        g, t = E.InvocationId(0), E.Var(fresh("t"))
        # element t of the column-major copy is column t / rows, row t % rows of the buffer
        at = E.BinOpExpr(E.BinOp.Add, E.BinOpExpr(E.BinOp.Mul, E.BinOpExpr(E.BinOp.Mod, t, E.LitU32(rows)),
                                                  E.LitU32(R)), E.BinOpExpr(E.BinOp.Div, t, E.LitU32(rows)))
        body = (N.Let(t.name, g), N.If(E.BinOpExpr(E.BinOp.Lt, t, E.LitU32(rows * R)),
                                       (N.Store(name, t, E.Load(ld.buffer, at)),), ()))
        prepass = Program((src, dst), (prepass_local_size, 1, 1), (Region(COALESCE_GENERATOR, None, body),),
                          p.entry_op_id)
        copy = BufferDecl(name, next_binding(p), BufferAccess.ReadOnly, b.element, rows * R)
        table = {x: E.Load(name, E.BinOpExpr(E.BinOp.Add, E.BinOpExpr(E.BinOp.Mul, s2, E.LitU32(rows)), r2))
                 for x, r2, s2 in same}
        entry = rewrite_nodes(p.entry, expr=lambda e: map_expr(
            e, lambda x: table.get(x) if isinstance(x, E.Load) else None))
        main = replace_entry(dataclasses.replace(p, buffers=tuple(p.buffers) + (copy,)), entry)
        return Coalesced(prepass, main, copy, ld.buffer, R, rows, loop.var, reads)
    return None


class Coalesce(PassBase):
    """Transposed copies for row-walking loops (module docstring); the main stage is offered
    again (another buffer may qualify)."""
    name, kind, repeat, max_stages = "coalesce", "split", True, 12
    tidy = ("dce",)

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        c = coalesce(program)
        return None if c is None else Rewrite((c.prepass, c.main), (c.scratch,), detail=c)

    def explain(self, rewrite: Rewrite) -> str:
        c: Coalesced = rewrite.detail
        return (f"loop {c.loop_var}: each lane walks its own row of {c.buffer} ({c.rows} rows of {c.row}, "
                f"~{c.reads // max(c.rows * c.row, 1)} reads per element over the grid): a pre-pass copies it column-major into "
                f"{c.scratch.name}, so a warp's lanes read consecutive elements (same values)")


COALESCE = Coalesce()
