"""Split-K f32 sums: the fast precision's first reassociating pass (docs/PRECISION.md).

A serial sum ``for i in a..b { ...; acc = acc + t(i) }`` is a chain of b - a dependent adds:
on a GPU each waits for the previous one (and in exact mode it must: the order is the contract).
In the fast precision the sum may be reassociated, so this pass gives each of K interleaved
copies of the body its own partial sum and adds the partials at the end::

    for i in a..b { BODY(acc) }
 ->
    let acc_1 = 0.0; ... let acc_(K-1) = 0.0
    for io in 0..(b-a)/K {
        { let i = a + io*K + 0; BODY(acc) } ... { let i = a + io*K + K-1; BODY(acc_(K-1)) }
    }
    for i in a + ((b-a)/K)*K .. b { BODY(acc) }                  // the rest
    acc = (acc + acc_1) + (acc_2 + acc_3)                        // K = 4: a pairwise combine

Every term is added once; only the grouping changes, so the result stays within the
recursive-summation bound gamma_(n-1) * sum |t_i| of the serial sum (and its chain is K times
shorter). It applies to an innermost loop with literal bounds whose body writes no buffer (no
store, atomic, barrier, return or trap, no nested loop) and whose accumulators are f32 variables
defined before the loop, each assigned only as ``acc = acc + t`` with ``t`` not reading it, and
read nowhere else in the body. It never runs in the exact precision.

>>> from vyre_vk.ops import get
>>> p = get("vyre-libs::nn::linear_relu").build_with(in_dim=512, out_dim=64)
>>> q, why = reassociate(p)
>>> why.startswith("fast precision: split f32 sums into 4 partial sums")
True
"""
from __future__ import annotations

from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program
from ..ir.types import DataType
from ..ir.walk import map_expr, node_all_exprs, node_exprs, rewrite_nodes, walk_expr, walk_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, blocked_loop, defined_vars, iteration, replace_entry
from .protocol import PassBase, PassContext, Rewrite

#: Partial sums per accumulator: 4 breaks the add chain into four independent ones (an f32 add's
#: latency is ~4 cycles on current GPUs) without multiplying the registers a long body holds.
SPLIT_K = 4
_ADD = E.BinOp.Add


def _reads(e: E.Expr, name: str) -> bool:
    return any(isinstance(x, E.Var) and x.name == name for x in walk_expr(e))


def accumulators(loop: N.Loop, facts: Facts) -> list[str]:
    """The loop's f32 sums that may be split (module docstring), in first-assigned order."""
    nodes = list(walk_nodes(loop.body))
    if any(isinstance(n, (N.Loop, N.Store, N.Barrier, N.Return, N.Trap)) for n in nodes):
        return []
    if any(isinstance(x, E.Atomic) for x in node_all_exprs(loop.body)):
        return []
    local = defined_vars(loop.body)
    out: list[str] = []
    for n in nodes:
        if not isinstance(n, N.Assign) or n.name in out or n.name in local:
            continue
        a = n.name
        assigns = [m for m in nodes if isinstance(m, N.Assign) and m.name == a]
        ok = facts.type_of(E.Var(a)) is DataType.F32 and all(
            isinstance(m.value, E.BinOpExpr) and m.value.op is _ADD and m.value.left == E.Var(a)
            and not _reads(m.value.right, a) for m in assigns)
        # read only by its own accumulating assignments
        reads = sum(_reads(x, a) for m in nodes for x in node_exprs(m))  # each statement's own expressions
        if ok and reads == len(assigns):
            out.append(a)
    return out


def reassociate(p: Program, k: int = SPLIT_K) -> tuple[Program, str]:
    """`p` with every splittable f32 sum split into `k` partial sums, and the one-line why."""
    facts = Facts(p)
    fresh = NameSource(all_names(p), "ra_")
    done: list[str] = []

    def rewrite(loop: N.Loop) -> Optional[tuple]:
        if not (isinstance(loop.from_, E.LitU32) and isinstance(loop.to, E.LitU32)):
            return None
        lo, hi = loop.from_.value, loop.to.value
        if hi - lo < 2 * k or loop.var in assigned_vars(loop.body):
            return None
        accs = accumulators(loop, facts)
        if not accs:
            return None
        parts = {a: [a] + [fresh(f"{a}_{j}") for j in range(1, k)] for a in accs}

        def block(base: E.Expr) -> list:
            return [N.Block((N.Let(loop.var, iteration(base, j)),) + tuple(rewrite_nodes(
                loop.body, stmt=lambda n, j=j: _renamed(n, {a: parts[a][j] for a in accs})))) for j in range(k)]

        out: list = [N.Let(parts[a][j], E.LitF32(0)) for a in accs for j in range(1, k)]
        out += blocked_loop(loop, k, fresh, block)
        out += [N.Assign(a, _pairwise([E.Var(v) for v in parts[a]])) for a in accs]
        done.append(f"{loop.var} ({hi - lo} terms: {', '.join(accs)})")
        return tuple(out)

    entry = rewrite_nodes(p.entry, stmt=lambda n: rewrite(n) if isinstance(n, N.Loop) else None)
    if not done:
        return p, ""
    return replace_entry(p, entry), (f"fast precision: split f32 sums into {k} partial sums added pairwise "
                                     f"(shorter add chains; within the serial sum's error bound): loop "
                                     f"{', '.join(done)}")


def _renamed(n: N.Node, ren: dict) -> Optional[tuple]:
    """Accumulating assignment `n` onto its copy's partial sum (other statements: unchanged)."""
    if isinstance(n, N.Assign) and n.name in ren and ren[n.name] != n.name:
        new = ren[n.name]
        value = map_expr(n.value, lambda x: E.Var(new) if x == E.Var(n.name) else None)
        return (N.Assign(new, value),)
    return None


def _pairwise(xs: list) -> E.Expr:
    """((x0 + x1) + (x2 + x3)) ...: a balanced tree of adds in index order."""
    while len(xs) > 1:
        xs = [E.BinOpExpr(_ADD, xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
    return xs[0]


class Reassociate(PassBase):
    """Split-K f32 sums (module docstring); the fast precision only."""
    name = "reassociate"
    kind = "scalar"
    precision = "fast"  # results within docs/PRECISION.md's bound, not the reference's bits

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return ctx.precision == "fast" and any(isinstance(n, N.Loop) for n in walk_nodes(program.entry))

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        if ctx.precision != "fast":  # the exact precision's bits: nothing to do
            return Rewrite((program,), detail="")
        q, why = reassociate(program)
        return Rewrite((q,), detail=why)

    def explain(self, rewrite: Rewrite) -> str:
        return rewrite.detail


REASSOCIATE = Reassociate()
