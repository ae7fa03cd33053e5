"""Workgroup-size freedom and elementwise coarsening: the two passes that change how a
program is dispatched without changing what any global invocation id computes.

Both keep the exact set of global invocation ids the original dispatch ran: the rewritten
body is guarded by ``gid < T`` where T is the original program's invocation total
(ceil(n / wg) * wg, n = the largest result-buffer length, as vyre's grid rule; a literal
when every result buffer has a fixed size, else computed from ``buf_len``).
"""
from __future__ import annotations

from typing import Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.program import Program, Region
from ..ir.walk import map_expr, node_all_exprs, rewrite_nodes
from .analysis import Facts, NameSource, all_names, assigned_vars, program_nodes, uses_workgroup_scope
from .protocol import OptimizerError, PassBase, PassContext, Rewrite

WG_GENERATOR = "vyre_vk.opt.workgroup_size"
COARSEN_GENERATOR = "vyre_vk.opt.coarsen"
COARSEN_FACTOR = 4

#: Best 1-D local size per device class. nvidia/amd from MEASUREMENTS.md (H200 axpy:
#: 256 -> 3.28 TB/s vs 64 -> 1.27 TB/s); llvmpipe measured with tools/bench/seed_passes.py
#: --wg (lavapipe, 2 cores: see the opt branch report).
BEST_LOCAL_SIZE = {"nvidia": 256, "amd": 256, "intel": 256, "llvmpipe": 256, "default": 256}

#: (workgroups wanted, smallest local size) per device class. A stage with few invocations
#: (the seed op's kernels: 2048 and 8192 long serial loops) at local size 256 occupies 8 or
#: 32 of an H200's 132 SMs; each SM then serves 8 warps of strided, uncoalesced loads while
#: the others idle. Halving the local size (not below the floor) until there are at least
#: that many workgroups spreads the same invocations over the whole GPU. nvidia: 132 SMs
#: (H200/H100 SXM); half-warps are allowed, since an otherwise idle SM is worth more than a
#: full warp. amd/intel: a typical compute-unit / Xe-core count, whole waves. llvmpipe and
#: unknown devices: no change (lavapipe runs workgroups on a few CPU threads).
MIN_WORKGROUPS = {"nvidia": (132, 16), "amd": (96, 64), "intel": (32, 32), "llvmpipe": (1, 64), "default": (1, 64)}


#: Below this many acting invocations a stage that loops is latency-bound: its f32 helpers are the
#: branch-free ones (vyre_vk.lower.helpers.BRANCHLESS), whose dependent chains are shorter; above,
#: the branchy ones, which issue fewer instructions. H200 (tools/bench/ops.py A/B, both ways):
#: the fold chains (256 invocations) and GEMV rows (64 to 8192) gain 1.4-1.7x branch-free, while
#: newton_schulz's 16M-invocation matmuls lose 1.4x and 2^24-element maps up to 1.25x. 2^17 is
#: about 32 warps per SM, where latency starts to hide. Not measured elsewhere: same threshold.
LATENCY_BOUND_BELOW = {"nvidia": 1 << 17, "amd": 1 << 17, "intel": 1 << 17, "llvmpipe": 1 << 17, "default": 1 << 17}

#: Fewest acting invocations (largest result-buffer count) at which an elementwise map is coarsened.
#: Below it the map is launch-bound and four elements in series only lengthen each lane: H100,
#: tools/bench/latency_parts.py --sweep (u32 map, GPU us, coarsened vs not): 2^10 7.14 vs 6.59, 2^14
#: 9.47 vs 9.07, 2^16 9.76 vs 9.41, 2^18 10.53 both, 2^20 12.74 vs 15.62, 2^22 24.5 vs 39.7 (a
#: 64-element Kernel.run: within its noise). Other classes: not measured, always coarsened.
COARSEN_MIN_INVOCATIONS = {"nvidia": LATENCY_BOUND_BELOW["nvidia"], "amd": 0, "intel": 0, "llvmpipe": 0,
                           "default": 0}


def latency_bound(p: Program, device_class: str = "default") -> bool:
    """True when `p` loops and its grid acts with fewer invocations than the class's threshold.

    >>> from vyre_vk.ops import get
    >>> latency_bound(get("vyre-libs::nn::linear_relu").build_with(in_dim=64, out_dim=64), "nvidia")
    True
    >>> latency_bound(get("vyre-libs::nn::silu").build_with(n=1 << 20), "nvidia")  # no loop
    False
    """
    if not any(isinstance(n, N.Loop) for n in program_nodes(p)):
        return False
    acting = min_invocations(p) or 1 << 62  # unknown (data-sized): not assumed small
    inert = inert_from(p)  # ids from here on do nothing (the guards of split and idle stages)
    if inert is not None:
        acting = min(acting, inert)
    return acting < LATENCY_BOUND_BELOW.get(device_class, LATENCY_BOUND_BELOW["default"])


def device_class(device_name: str) -> str:
    """'nvidia', 'amd', 'intel', 'llvmpipe' or 'default', from a Vulkan device name."""
    low = (device_name or "").lower()
    for key, cls in (("llvmpipe", "llvmpipe"), ("lavapipe", "llvmpipe"), ("nvidia", "nvidia"),
                     ("geforce", "nvidia"), ("amd", "amd"), ("radeon", "amd"), ("intel", "intel")):
        if key in low:
            return cls
    return "default"


def _one_d(p: Program) -> bool:
    return tuple(p.workgroup_size)[1:] == (1, 1)


def invocation_total(p: Program) -> Optional[E.Expr]:
    """The number of invocations vyre's grid rule dispatches for `p` (1-D shapes, programs
    without atomics/workgroup memory), as an expression; None if `p` has no result buffer."""
    outs = [b for b in p.buffers if b.is_result]
    if not outs:
        return None
    sx = int(p.workgroup_size[0])
    if all(b.backend_allocated for b in outs):
        n = max(max(b.count for b in outs), 1)
        return E.LitU32(-(-n // sx) * sx)
    n: E.Expr = E.LitU32(1)
    for b in outs:
        n = E.BinOpExpr(E.BinOp.Max, n, E.LitU32(b.count) if b.backend_allocated else E.BufLen(b.name))
    if sx == 1:
        return n
    wgs = E.BinOpExpr(E.BinOp.Div, E.BinOpExpr(E.BinOp.Add, n, E.LitU32(sx - 1)), E.LitU32(sx))
    return E.BinOpExpr(E.BinOp.Mul, wgs, E.LitU32(sx))


def min_invocations(p: Program) -> int:
    """A lower bound on the invocations vyre's grid rule dispatches: the largest declared
    result-buffer count (bound arrays may be longer, never shorter). 0 if unknown."""
    return max((b.count for b in p.buffers if b.is_result), default=0)


def inert_from(p: Program) -> Optional[int]:
    """A literal c such that every invocation with gid.x >= c has no effect at all, or None.

    Accepted shape: (nested Regions/Blocks of) non-trapping `let`s and `if (g < c) {...}`
    with no else, where g is gid.x or a never-reassigned `let` of it."""
    facts = Facts(p)
    assigned = assigned_vars(p.entry)
    gids: set = set()

    def bound(nodes) -> Optional[int]:
        best = 0
        for n in nodes:
            if isinstance(n, N.Let):
                if facts.may_trap(n.value):
                    return None
                if n.value == E.InvocationId(0) and n.name not in assigned:
                    gids.add(n.name)
                elif n.name in gids:
                    return None  # rebound to something else: keep it simple
            elif isinstance(n, (N.Region, N.Block)):
                b = bound(n.body)
                if b is None:
                    return None
                best = max(best, b)
            elif (isinstance(n, N.If) and not n.otherwise and isinstance(n.cond, E.BinOpExpr)
                  and n.cond.op is E.BinOp.Lt and isinstance(n.cond.right, E.LitU32)
                  and (n.cond.left == E.InvocationId(0)
                       or (isinstance(n.cond.left, E.Var) and n.cond.left.name in gids))):
                best = max(best, n.cond.right.value)
            else:
                return None
        return best

    return bound(p.entry)


def choose_local_size(n: int, local_size: int, min_workgroups: int = 1, min_local: int = 64) -> int:
    """`local_size`, halved (not below `min_local`) while `n` invocations (0: unknown) would make
    fewer than `min_workgroups` workgroups at it."""
    size = local_size
    while n and size // 2 >= min_local and -(-n // size) < min_workgroups:
        size //= 2
    return size


def workgroup_size(p: Program, local_size: int = 256, min_workgroups: int = 1,
                   min_local: int = 64) -> tuple[Program, str]:
    """Dispatch a program that observes nothing workgroup-scoped at `local_size` (smaller
    when it has few invocations: see MIN_WORKGROUPS)."""
    sx = int(p.workgroup_size[0])
    why = uses_workgroup_scope(p)
    if why or not _one_d(p) or any(isinstance(n, N.Region) and n.generator == WG_GENERATOR for n in p.entry):
        return p, ""
    factor = coarsen_factor(p)
    if factor > 1:
        return _hinted_size(p, factor, local_size, min_workgroups, min_local)
    total = invocation_total(p)
    if total is None:
        return p, ""
    requested = local_size
    wanted = choose_local_size(min_invocations(p), local_size, min_workgroups, min_local)
    if wanted < sx and sx % wanted == 0:
        # Fewer invocations may be dispatched than at sx (ceil(n / wanted) * wanted <= the
        # original total): allowed only when every id from some c <= n on does nothing.
        c = inert_from(p)
        if c is not None and c <= min_invocations(p):
            q = Program(p.buffers, (wanted, 1, 1), (Region(WG_GENERATOR, None, tuple(p.entry)),), p.entry_op_id,
                        p.non_composable_with_self)
            n = min_invocations(p)
            return q, (f"uses nothing workgroup-scoped; {n} invocations: local size {sx} -> {wanted} so the "
                       f"stage has {-(-n // wanted)} workgroups; ids >= {c} do nothing, so the ids that act "
                       "are unchanged")
        wanted = local_size
    local_size = wanted
    if sx == local_size or local_size % sx:
        return p, ""
    body: tuple = tuple(p.entry)
    new_total = invocation_total(Program(p.buffers, (local_size, 1, 1), p.entry))
    if not (isinstance(total, E.LitU32) and isinstance(new_total, E.LitU32) and total == new_total):
        body = (N.If(E.BinOpExpr(E.BinOp.Lt, E.InvocationId(0), total), body, ()),)
    q = Program(p.buffers, (local_size, 1, 1), (Region(WG_GENERATOR, None, body),), p.entry_op_id,
                p.non_composable_with_self)
    reason = ("best for this device class" if local_size == requested else
              f"{min_invocations(p)} invocations: sized for >= {min_workgroups} workgroups")
    return q, f"uses nothing workgroup-scoped: local size {sx} -> {local_size} ({reason}); global ids unchanged"


def coarsen_factor(p: Program) -> int:
    """Invocations folded into one by the coarsening pass (1 if not coarsened).

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node
    >>> p = Program([BufferDecl.output("out", 0, DataType.U32).with_count(8)], (64, 1, 1),
    ...             [Region(COARSEN_GENERATOR + ":4", None, ())])
    >>> coarsen_factor(p)
    4
    """
    if not (len(p.entry) == 1 and isinstance(p.entry[0], Region) and isinstance(p.entry[0].generator, str)
            and p.entry[0].generator.startswith(COARSEN_GENERATOR + ":")):
        return 1
    tail = p.entry[0].generator[len(COARSEN_GENERATOR) + 1:]
    if not (tail.isascii() and tail.isdigit() and int(tail) >= 1):
        raise OptimizerError(f"region generator {p.entry[0].generator!r} claims a coarsened program but "
                             f"{tail!r} is not a factor. Fix: the prefix {COARSEN_GENERATOR!r} is the coarsening "
                             "pass's; rename the region's generator.")
    return int(tail)


def _elementwise(p: Program) -> Optional[str]:
    """None if every written element is the invocation's own (index == gid.x), else why not."""
    if uses_workgroup_scope(p):
        return "workgroup-scoped"
    if not _one_d(p):
        return "multi-axis workgroup"
    if coarsen_factor(p) != 1:
        return "already coarsened"
    if any(isinstance(n, N.Loop) for n in program_nodes(p)):
        return "has loops (not a light elementwise map)"
    gid_vars = set()
    assigned = assigned_vars(p.entry)
    for n in program_nodes(p):
        if isinstance(n, N.Let) and n.value == E.InvocationId(0) and n.name not in assigned:
            gid_vars.add(n.name)
        if isinstance(n, (N.Return, N.Trap)):
            return "return/trap"
    # A trap reports the invocation that hit it; after coarsening that would name four.
    facts = Facts(p)
    if any(facts.may_trap(x) for x in node_all_exprs(p.entry)):
        return "can trap (i32 division)"
    own = lambda e: e == E.InvocationId(0) or (isinstance(e, E.Var) and e.name in gid_vars)  # noqa: E731
    written = {n.buffer for n in program_nodes(p) if isinstance(n, N.Store)}
    if not written:
        return "no stores"
    for n in program_nodes(p):
        if isinstance(n, N.Store) and not own(n.index):
            return "store at a computed index"
    for x in node_all_exprs(p.entry):
        if isinstance(x, E.Load) and x.buffer in written and not own(x.index):
            return "reads another invocation's element"
    return None


def _coarsened(p: Program, factor: int) -> Optional[Program]:
    """`p` with each invocation handling `factor` consecutive elements, or None if not elementwise."""
    if _elementwise(p) is not None:
        return None
    total = invocation_total(p)
    if total is None:
        return None
    fresh = NameSource(all_names(p), "co_")
    base, c, g = fresh("base"), fresh("k"), fresh("g")
    sub = lambda e: map_expr(e, lambda x: E.Var(g) if x == E.InvocationId(0) else None)  # noqa: E731
    body = (
        N.Let(base, E.BinOpExpr(E.BinOp.Mul, E.InvocationId(0), E.LitU32(factor))),
        N.Loop(c, E.LitU32(0), E.LitU32(factor), (
            N.Let(g, E.BinOpExpr(E.BinOp.Add, E.Var(base), E.Var(c))),
            N.If(E.BinOpExpr(E.BinOp.Lt, E.Var(g), total), rewrite_nodes(p.entry, expr=sub), ()),
        )),
    )
    return Program(p.buffers, p.workgroup_size, (Region(f"{COARSEN_GENERATOR}:{factor}", None, body),),
                   p.entry_op_id, p.non_composable_with_self)


def _hinted_size(p: Program, factor: int, local_size: int, min_workgroups: int,
                 min_local: int) -> tuple[Program, str]:
    """A coarsened program whose ids act only below ``c <= count / factor`` (keychain's chain
    kernels): any local size dispatches ceil(ceil(count / local) / factor) * local >= c ids, so it
    is chosen as for a program of c invocations."""
    inner = Program(p.buffers, p.workgroup_size, p.entry[0].body, p.entry_op_id, p.non_composable_with_self)
    c, n = inert_from(inner), min_invocations(p) // factor
    if c is None or not 0 < c <= n:
        return p, ""
    size = choose_local_size(c, local_size, min_workgroups, min_local)
    if size == int(p.workgroup_size[0]):
        return p, ""
    body = (Region(p.entry[0].generator, None, (Region(WG_GENERATOR, None, inner.entry),)),)
    return (Program(p.buffers, (size, 1, 1), body, p.entry_op_id, p.non_composable_with_self),
            f"{c} acting invocations, one per {factor} elements of the largest result: local size "
            f"{p.workgroup_size[0]} -> {size} ({-(-c // size)} workgroups); ids >= {c} do nothing")


def _coarsen_why(factor: int) -> str:
    return f"elementwise (each invocation writes only its own element): {factor} elements per invocation"


def coarsen(p: Program, factor: int = COARSEN_FACTOR) -> tuple[Program, str]:
    """Each invocation of an elementwise program handles `factor` consecutive elements."""
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise OptimizerError(f"coarsening factor {factor!r} is not a positive whole number. Fix: pass e.g. 4.")
    q = _coarsened(p, factor)
    return (p, "") if q is None else (q, _coarsen_why(factor))


class WorkgroupSize(PassBase):
    """The free local size per device class (workgroup_size above)."""
    name = "workgroup_size"
    kind = "schedule"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return _one_d(program) and not uses_workgroup_scope(program)

    def run(self, program: Program, ctx: PassContext) -> Rewrite:
        q, why = workgroup_size(program, ctx.local_size, ctx.min_workgroups, ctx.min_local)
        return Rewrite((q,), detail=why)


class Coarsen(PassBase):
    """Elementwise coarsening, COARSEN_FACTOR elements per invocation (coarsen above)."""
    name = "coarsen"
    kind = "schedule"
    factor = COARSEN_FACTOR

    def applies(self, program: Program, ctx: PassContext) -> bool:
        n = min_invocations(program)  # 0: data-sized, not assumed small
        floor = COARSEN_MIN_INVOCATIONS.get(ctx.device_class, COARSEN_MIN_INVOCATIONS["default"])
        return not (n and n < floor) and _elementwise(program) is None

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:
        q = _coarsened(program, self.factor)
        return None if q is None else Rewrite((q,), detail=self.factor)

    def explain(self, rewrite: Rewrite) -> str:
        return _coarsen_why(rewrite.detail)


WORKGROUP_SIZE = WorkgroupSize()
COARSEN = Coarsen()
