"""Reciprocals a workgroup's lanes share: in a speculative loop, a division by a u32 counter that every
lane steps alike (Welford's ``delta / float(n)`` in reduce_variance) needs RN(1/b) at every step, and
every lane computes the same values. Here each lane computes its share of one iteration's reciprocals
into workgroup memory and every lane reads them (the iteration of an unrolled loop: 32 steps, a
16-lane workgroup, two reciprocals a lane instead of 32). H200 (tools/bench/welford_chain.py,
"RN(1/n) shared"): 3.96 -> 2.28 ms for 256 chains of 65536 steps.

Why the bits stay the reference's: a lane writes the pair (RN(1/b), b) for the divisor b its own
counters give at the iteration's start plus the offset the emitted code adds to them by then, and a
division reads its pair and checks that the b there is its own divisor (one compare folded into the
loop's state, vyre_sp_div_uy). If any lane's guess was wrong (lanes that disagree, an analysis that
missed an update) the check fails and the loop runs again exactly: the analysis here decides speed,
never bits. What no check can catch is a barrier some invocation skips, so sharing needs
workgroup-uniform control flow (Uniformity): the loop's bounds and every enclosing branch and loop
uniform (a test ``gid.x < C`` with C a multiple of the local x size counts: a workgroup's ids lie on
one side of C), and no return or trap anywhere in the stage.

    >>> "b == yb.y" in SHARED_DIVISION["vyre_sp_div_uy"]
    True
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp
from ..ir.types import DataType
from ..ir.walk import node_bodies, node_exprs, replace_expr, walk_expr, walk_nodes

if TYPE_CHECKING:  # pragma: no cover
    from .stmts import StmtLowerer

#: The division with a shared pair (RN(1/b), b): vyre_sp_div_u's window plus the divisor's identity.
SHARED_DIVISION: dict[str, str] = {
    "vyre_sp_div_uy": """float vyre_sp_div_uy(float a, float b, vec2 yb) {
    uint ua = floatBitsToUint(a);
    precise float q0 = a * yb.x;
    precise float q1 = fma(fma(-q0, b, a), yb.x, q0);
    vyre_sp_state = (((ua >> 23) & 0xFFu) - 50u <= 202u && b != 0.0 && b == yb.y) ? vyre_sp_state : 0u;
    return q1;
}""",
}

#: At most this many shared divisions per iteration (8 bytes of workgroup memory each).
MAX_SITES = 64
#: Fewer divisions than this per iteration are not shared: two barriers per iteration then cost about
#: what the reciprocals saved (an estimate; the measured case, reduce_variance's, has 32).
MIN_SITES = 4
#: Workgroup memory a stage may reach with the pairs: Vulkan's guaranteed maxComputeSharedMemorySize.
SHARED_LIMIT = 16384
_PURE = (E.Var, E.LitU32, E.BinOpExpr, E.UnOpExpr)
_MASK = 0xFFFFFFFF


def shared_reciprocals() -> bool:
    """Whether speculative divisions by a uniform u32 counter share RN(1/b) across the workgroup's
    lanes (by default; ``$VYRE_VK_SPEC_SHARED_RCP=0`` turns it off).

    >>> shared_reciprocals() == (os.environ.get("VYRE_VK_SPEC_SHARED_RCP") != "0")
    True
    """
    return os.environ.get("VYRE_VK_SPEC_SHARED_RCP") != "0"


class Uniformity:
    """Whether the control flow the lowerer is emitting now is workgroup-uniform (every invocation of
    a workgroup gets here together), for barriers the lowering adds itself."""

    def __init__(self, program):
        self.local = tuple(int(v) for v in program.workgroup_size)
        self.exits = any(isinstance(n, (N.Return, N.Trap)) for n in walk_nodes(program.entry))
        self.divergent = 0  # enclosing branches and loops that may differ within a workgroup
        self.uniform_vars: set[str] = set()
        self.lane_vars: dict[str, int] = {}  # name -> axis, for `let g = gid.<axis>` never assigned
        self.tainted: set[str] = set()  # once bound to a value that may differ: never uniform again

    @property
    def here(self) -> bool:
        return self.divergent == 0 and not self.exits

    def bind(self, name: str, value: Optional[E.Expr], assigned: set) -> None:
        """A let (or a loop's variable, value None: uniform bounds) binds `name`; a name bound again to
        a value of another kind is never uniform."""
        if name in assigned or name in self.tainted:
            return
        kind = value.axis if isinstance(value, E.InvocationId) else (
            "uniform" if value is None or self.uniform(value) else None)
        seen = "uniform" if name in self.uniform_vars else self.lane_vars.get(name)
        if kind is None or seen not in (None, kind):
            self.taint(name)
        elif kind == "uniform":
            self.uniform_vars.add(name)
        else:
            self.lane_vars[name] = kind

    def taint(self, name: str) -> None:
        self.uniform_vars.discard(name)
        self.lane_vars.pop(name, None)
        self.tainted.add(name)

    def uniform(self, e: E.Expr) -> bool:
        """Whether `e` has one value in the whole workgroup (literals, lengths, workgroup ids, such names)."""
        for x in walk_expr(e):
            if isinstance(x, E.Var):
                if x.name not in self.uniform_vars:
                    return False
            elif not isinstance(x, (E.LitU32, E.LitI32, E.LitF32, E.LitBool, E.BufLen, E.WorkgroupId,
                                    E.BinOpExpr, E.UnOpExpr, E.Cast, E.Select)):
                return False
        return True

    def uniform_test(self, cond: E.Expr) -> bool:
        """`uniform(cond)`, or ``gid.<a> < C`` / ``>= C`` with C a multiple of the local size on a:
        gid = wid * L + lid, so a workgroup's ids are all below C or all at or above it."""
        if self.uniform(cond):
            return True
        if not (isinstance(cond, E.BinOpExpr) and cond.op in (BinOp.Lt, BinOp.Ge) and isinstance(cond.right, E.LitU32)):
            return False
        x = cond.left
        axis = x.axis if isinstance(x, E.InvocationId) else self.lane_vars.get(x.name) if isinstance(x, E.Var) else None
        return axis is not None and cond.right.value % self.local[axis] == 0


class SharedDivisors:
    """The divisions of one speculative loop's body that read a shared pair, found while it is lowered."""

    def __init__(self, key: int, start: set[str]):
        self.key = key
        self.start = start  # names in scope at the start of an iteration
        self.offsets: dict[str, int] = {}  # u32 name -> what the body added to it so far (v = v + k)
        self.poisoned: set[str] = set()  # names the body rebinds or updates otherwise
        self.nest = -1  # nested loops and branches around the statement (the loop's own header: 0)
        self.shape: Optional[E.Expr] = None  # the divisor (u32, before its cast) every site shares
        self.sites: list[dict[str, int]] = []  # per site: each name's offset
        self.leading = False  # the body's leading lets are being lowered
        self.at = 0  # where the pairs are computed: the line after those lets (loads first, as written)

    def enter(self, at: int) -> None:
        """The loop's own body starts at line `at`."""
        self.nest, self.leading, self.at = 0, True, at

    @property
    def array(self) -> str:
        return f"vyre_ysh{self.key}"

    def assign(self, n: N.Assign) -> None:
        v = n.value
        step = None
        if isinstance(v, E.BinOpExpr) and v.op is BinOp.Add:
            for a, b in ((v.left, v.right), (v.right, v.left)):
                if isinstance(a, E.Var) and a.name == n.name and isinstance(b, E.LitU32):
                    step = b.value
        if step is None or self.nest:
            self.poisoned.add(n.name)
        else:
            self.offsets[n.name] = (self.offsets.get(n.name, 0) + step) & _MASK

    def site(self, x: E.Expr) -> Optional[int]:
        """The pair index a division by ``float(x)`` reads, or None (not shared)."""
        if self.nest or len(self.sites) >= MAX_SITES or not all(isinstance(y, _PURE) for y in walk_expr(x)):
            return None
        names = {y.name for y in walk_expr(x) if isinstance(y, E.Var)}
        if names & self.poisoned or not names <= self.start:
            return None
        if self.shape is None:
            self.shape = x
        elif x != self.shape:
            return None
        self.sites.append({v: self.offsets.get(v, 0) for v in names})
        return len(self.sites) - 1


def divisions(body: tuple) -> int:
    """Divisions by a cast value in `body` outside its nested loops (how many could share pairs)."""
    count, stack = 0, list(body)
    while stack:
        n = stack.pop()
        count += sum(isinstance(x, E.BinOpExpr) and x.op is BinOp.Div and isinstance(x.right, E.Cast)
                     for e in node_exprs(n) for x in walk_expr(e))
        if not isinstance(n, N.Loop):
            stack.extend(x for b in node_bodies(n) for x in b)
    return count


def start_sharing(lw: "StmtLowerer", loop: N.Loop, key: int, start: set[str]) -> Optional[SharedDivisors]:
    """A tracker for the speculative loop about to be lowered, where sharing is on and safe here."""
    if not (shared_reciprocals() and "vyre_sp_div_u" in lw.table and lw.wgu.here and lw.pred is None
            and lw.vplan is None and not lw.sg and lw.wgu.uniform(loop.from_) and lw.wgu.uniform(loop.to)
            and divisions(loop.body) >= MIN_SITES):
        return None
    if lw.p.workgroup_bytes + 8 * MAX_SITES > SHARED_LIMIT:
        return None
    return SharedDivisors(key, start)


def _offset(lw: "StmtLowerer", tr: SharedDivisors, name: str, j: E.Var) -> E.Expr:
    """Name `name`'s offset at site j as an IR expression: a constant, an arithmetic progression in j,
    or a constant table."""
    offs = [s[name] for s in tr.sites]
    a = offs[0]
    s = (offs[1] - a) & _MASK if len(offs) > 1 else 0
    if all(o == (a + s * i) & _MASK for i, o in enumerate(offs)):
        step = j if s == 1 else E.BinOpExpr(BinOp.Mul, E.LitU32(s), j)
        return (E.BinOpExpr(BinOp.Add, E.LitU32(a), step) if a else step) if s else E.LitU32(a)
    table = f"vk_yo{tr.key}_{lw.var[name]}"
    lw.emit(f"const uint {table}[{len(offs)}] = uint[{len(offs)}]({', '.join(f'{o}u' for o in offs)});", None)
    lw.emit(f"uint {table}_j = {table}[{lw.var[j.name]}];", None)
    return lw.declare(f"{table}_j", DataType.U32)


def finish_sharing(lw: "StmtLowerer", tr: SharedDivisors, depth: int, path: str) -> None:
    """Insert, after the leading lets of the loop body (its header emitted at `depth`), each lane's
    share of the iteration's pairs between two barriers, and declare the pairs' array."""

    d = len(tr.sites)
    if not d:
        return
    assert lw.lines[tr.at - 1][0].strip() and tr.at <= len(lw.lines)
    lanes = lw.wgu.local[0] * lw.wgu.local[1] * lw.wgu.local[2]
    saved, lw.lines = lw.lines, []
    outer, spec = lw.depth, lw.spec
    lw.depth, lw.spec = depth + 1, None
    lw.scopes.append({})
    lw.emit(f"{{  // RN(1/b) of this iteration's {d} division(s), each lane its share (lower/shared_rcp.py)", path)
    lw.depth += 1
    lw.emit("memoryBarrierShared(); barrier();", path)
    j = lw.declare(f"vk_ysj{tr.key}", DataType.U32)
    lw.emit(f"for (uint vk_ysj{tr.key} = gl_LocalInvocationIndex; vk_ysj{tr.key} < {d}u; "
            f"vk_ysj{tr.key} += {lanes}u) {{", path)
    lw.depth += 1
    subst = {name: E.BinOpExpr(BinOp.Add, E.Var(name), _offset(lw, tr, name, j)) for name in tr.sites[0]}
    guess = replace_expr(tr.shape, lambda x: subst.get(x.name) if isinstance(x, E.Var) else None)
    b, _ = lw.expr(E.Cast(DataType.F32, guess), path)
    lw.emit(f"float vk_ysb{tr.key} = {b};", path)
    lw.emit(f"{tr.array}[vk_ysj{tr.key}] = vec2(vyre_rcp_rn(vk_ysb{tr.key}), vk_ysb{tr.key});", path)
    lw.helpers.add("vyre_rcp_rn")
    lw.depth -= 1
    lw.emit("}", path)
    lw.emit("memoryBarrierShared(); barrier();", path)
    lw.depth -= 1
    lw.emit("}", path)
    lw.scopes.pop()
    block, lw.lines = lw.lines, saved
    lw.lines[tr.at:tr.at] = block
    lw.depth, lw.spec = outer, spec
    lw.table[tr.array] = f"shared vec2 {tr.array}[{d}];  // (RN(1/b), b) of a speculative loop's shared divisions"
    lw.helpers.add(tr.array)
    lw.features.add("barrier")
    lw.shared_extra += 8 * d
