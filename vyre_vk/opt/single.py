"""One invocation for a program whose invocations all do the same thing.

vyre's fft_radix2 names no invocation id: every invocation of its grid (one per output element)
copies the input into ``output`` and runs the whole in-place FFT there. The reference runs them
one after another, and each ends with the same values, because each reads ``output`` only where
it stored first. On a GPU they run at once over the same buffer: one invocation's first copy can
land on another's half-done butterflies (the H200 showed it: 1.2e6 ULP of scale in the fast
precision, where the shorter code changed the timing). When a program's body

* reads no invocation builtin, has no atomic, subgroup operation, barrier, call or workgroup buffer,
* is straight-line (lets, assignments, stores, blocks) and
* loads a buffer it stores only at a literal index it stored to earlier in the body,

every invocation computes the same stores from the same inputs, so one invocation leaves exactly
what the reference's sequence leaves. The body then runs under ``if id == 0``: same bits, no race.

>>> from vyre_vk.ops import get
>>> p = single_invocation(get("vyre-libs::math::fft::fft_radix2").build_with(n=4))
>>> c = p.entry[0].body[0].cond
>>> c.op.name, c.left, c.right
('Eq', InvocationId(axis=0), LitU32(value=0))
"""
from __future__ import annotations

from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.program import Program, Region
from ..ir.walk import node_all_exprs, node_exprs, walk_expr, walk_nodes
from .analysis import replace_entry, stored_buffers
from .protocol import PassBase, PassContext, Rewrite

_BUILTINS = (E.InvocationId, E.LocalId, E.WorkgroupId, E.Atomic, E.Call, E.SubgroupBallot, E.SubgroupShuffle,
             E.SubgroupReduce, E.SubgroupLocalId, E.SubgroupSize)


def _straight(nodes) -> Optional[list]:
    """The statements of `nodes` in program order (blocks and regions opened), or None."""
    out: list = []
    for n in nodes:
        if isinstance(n, (N.Block, Region)):
            inner = _straight(n.body)
            if inner is None:
                return None
            out += inner
        elif isinstance(n, (N.Let, N.Assign, N.Store)):
            out.append(n)
        else:
            return None
    return out


def single_invocation(p: Program) -> Optional[Program]:
    """`p` run by invocation 0 alone (module docstring), or None where that could change a result."""
    if any(b.is_workgroup for b in p.buffers) or any(isinstance(x, _BUILTINS) for x in node_all_exprs(p.entry)):
        return None
    stmts = _straight(p.entry)
    written = stored_buffers(p.entry)
    if not stmts or not written:
        return None
    stored: set = set()
    for n in stmts:
        for e in node_exprs(n):
            for x in walk_expr(e):
                if isinstance(x, E.Load) and x.buffer in written and not (
                        isinstance(x.index, E.LitU32) and (x.buffer, x.index.value) in stored):
                    return None  # reads what an earlier invocation may have left
        if isinstance(n, N.Store):
            if not isinstance(n.index, E.LitU32):
                return None
            stored.add((n.buffer, n.index.value))
    guard = N.If(E.BinOpExpr(BinOp.Eq, E.InvocationId(0), E.LitU32(0)), tuple(p.entry), ())
    return replace_entry(p, (Region("vyre_vk.opt.single_invocation", None, (guard,)),))


class SingleInvocation(PassBase):
    """Invocation 0 alone for programs whose invocations all do the same thing (module docstring)."""
    name = "single_invocation"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return not any(isinstance(n, (N.Loop, N.If, N.Barrier)) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        out = single_invocation(program)
        return None if out is None else Rewrite((out,), (), detail="")

    def explain(self, rewrite: Rewrite) -> str:
        return ("no invocation id, every load of a stored buffer after a store to it: all invocations compute the "
                "same stores, so invocation 0 alone leaves the reference's values (and no invocations race)")


SINGLE_INVOCATION = SingleInvocation()
