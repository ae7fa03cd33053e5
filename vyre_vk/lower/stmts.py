"""Statements -> GLSL: one method per node kind, chosen through :data:`STMT_RULES`.

Every IR statement list (If arms, Loop body, Block, Region) becomes a GLSL ``{}`` scope.
Under a predicated if (a body holding a subgroup collective, glsl.py's notes) a statement
without collectives is wrapped in ``if (p)``; one with collectives runs on every lane with
its effects guarded. The vector fast path of a coarsened region is here too (vector.py).
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.chains import SPECULATE
from . import bounds
from .base import BOOL, F32, I32, U32, canonical_expr, store_accessor, unwrap
from .exprs import ExprLowerer
from .names import comment
from .result import TRAP_CODE_DIVISION, LoweringError
from .speculate import speculative_region, speculative_store
from .spelling import I8, STORAGE_TYPE, U8, VALUE_TYPE, ZERO
from .vector import VectorPlan, component, vec_type


class StmtLowerer(ExprLowerer):
    """The statement layer of the lowerer."""

    #: Node class -> method (filled in below the class).
    STMT_RULES: ClassVar[dict[type, Callable[[Any, Any, str], None]]] = {}

    def stmt(self, n: N.Node, path: str) -> None:
        if self.pred is not None and not isinstance(n, (N.Let, N.Assign)) and not self.carries_sg(n):
            # Predicated if: a statement without collectives is simply skipped by the other lanes.
            self.emit(f"if ({self.pred}) {{", path)
            self.depth += 1
            pred, self.pred = self.pred, None
            self.stmt(n, path)
            self.pred = pred
            self.depth -= 1
            self.emit("}", path)
            return
        rule = self.STMT_RULES.get(type(n))
        if rule is None:
            raise LoweringError(path, f"node kind {type(n).__name__} is not supported by the Vulkan backend yet.",
                                "express it with loads, stores and loops.")
        tr = self.spec.shared if self.spec is not None else None
        lead = tr is not None and tr.nest == 0 and tr.leading
        if lead and not isinstance(n, N.Let):
            tr.leading = False  # the body's leading lets (its loads, issued first) end here
        rule(self, n, path)
        if lead and tr.leading:
            tr.at = len(self.lines)

    def block(self, nodes: tuple, path: str, header: str, hpath: Optional[str], bind: Optional[dict] = None,
              ranges: Optional[dict] = None) -> None:
        self.emit(header, hpath)
        self.depth += 1
        self.scopes.append(dict(bind or {}))
        self.iv.append(dict(ranges or {}))
        for i, n in enumerate(nodes):
            self.stmt(n, f"{path}[{i}]")
        self.iv.pop()
        self.scopes.pop()
        self.depth -= 1

    # ---- variables
    def let(self, n: N.Let, path: str) -> None:
        spec = self.spec
        if spec is not None and spec.raw is not None and n.name in spec.raw and isinstance(n.value, E.Load):
            spec.raw_load = n.value  # its only uses are the chain's adds and subs (speculate.raw_loads)
        v, vt = self.expr(n.value, path + ".value")
        self.emit(f"{VALUE_TYPE[vt]} {self.var[n.name]} = {self.guard(v, ZERO[vt])};", path)
        self.scopes[-1][n.name] = vt
        self.wgu.bind(n.name, n.value, self.assigned)
        if self.spec is not None and self.spec.shared is not None:
            self.spec.shared.poisoned.add(n.name)  # bound inside the body: not known at its start
        if vt is U32 and self.pred is None and n.name not in self.assigned:
            r = self.interval(n.value)
            if r is not None:
                self.iv[-1][bounds.var_key(n.name)] = r
            m = bounds.stride(n.value, self.range_of)
            if 1 < m < 1 << 32 and self.iv:
                self.iv[-1][bounds.stride_key(n.name)] = (m, m)

    def assign(self, n: N.Assign, path: str) -> None:
        if self.spec is not None and self.spec.shared is not None:
            self.spec.shared.assign(n)
        v, _ = self.expr(n.value, path + ".value")
        assign = f"{self.var[n.name]} = {v};"
        self.emit(f"if ({self.pred}) {{ {assign} }}" if self.pred else assign, path)

    # ---- memory
    def store(self, n: N.Store, path: str) -> None:
        d = self.buffer(n.buffer, path)
        if self.pred is None and self.vector_index(n.buffer, n.index, self.vplan.stores if self.vplan else ()):
            v, vt = self.expr(n.value, path + ".value")
            v = self.to_storage(v, vt, d.element)
            if d.element is F32:
                self.helpers.add("vyre_canon")
                v = f"vyre_canon({v})"
            name = self.stem[d.name]
            self.emit(f"vk_vs_{name}.{component(self.vlane)} = {v}; vk_vm_{name} |= {1 << self.vlane}u;", path)
            return
        idx, _ = self.expr(n.index, path + ".index")
        v, vt = self.expr(n.value, path + ".value")
        self.stores.add(d.name)
        # unchecked where the index is proven inside (byte buffers have their own accessors: always
        # checked); no vyre_canon where the value is already canonical
        checked = d.element.is_byte or not self.inside(d, n.index)
        canon = d.element is F32 and not canonical_expr(n.value, self.canon)
        self.stores_as.add((d.name, checked, canon))
        call = f"{store_accessor(self.stem[d.name], d.element, checked, canon)}({idx}, {self.to_storage(v, vt, d.element)});"
        # under a predicate only when the value or index holds a collective (else stmt() wrapped it)
        self.emit(f"if ({self.pred}) {{ {call} }}" if self.pred is not None else call, path)

    def barrier(self, n: N.Barrier, path: str) -> None:
        self.features.add("barrier")
        wg = any(b.is_workgroup for b in self.p.buffers)
        fences = ("memoryBarrierShared(); " if wg else "") + ("memoryBarrierBuffer(); " if self.exchanged else "")
        self.emit(f"{fences}barrier();", path)

    # ---- control flow
    def if_(self, n: N.If, path: str) -> None:
        if self.carries_sg(n):
            self.predicated_if(n, path)
            return
        known = bounds.decided(n.cond, self.range_of)
        if known is not None:  # the ranges prove the condition: the arm that runs, without a branch
            body, label = (n.then, ".if.then") if known else (n.otherwise, ".if.else")
            self.block(body, path + label, f"{{  // if: always {'true' if known else 'false'} (value ranges)", path,
                       ranges=bounds.refinements(n.cond, self.range_of, self.assigned, known))
            self.emit("}", path)
            return
        c = unwrap(self.cond(n.cond, path + ".cond"))
        step = self.nested(not self.wgu.uniform_test(n.cond))
        self.block(n.then, path + ".if.then", f"if ({c}) {{", path,
                   ranges=bounds.refinements(n.cond, self.range_of, self.assigned, True))
        if n.otherwise:
            self.block(n.otherwise, path + ".if.else", "} else {", path,
                       ranges=bounds.refinements(n.cond, self.range_of, self.assigned, False))
        self.nested(*step, leave=True)
        self.emit("}", path)

    def nested(self, divergent: bool, shared: bool = True, leave: bool = False) -> tuple[bool, bool]:
        """Enter (or `leave`) a branch or loop body: `divergent` when the workgroup may split there
        (shared_rcp.Uniformity), `shared` when it nests inside a speculative loop's body (SharedDivisors)."""
        d = -1 if leave else 1
        self.wgu.divergent += d * divergent
        tr = self.spec.shared if self.spec is not None else None
        if tr is not None and shared:
            tr.nest += d
        return divergent, shared

    def predicated_if(self, n: N.If, path: str) -> None:
        """An if whose body holds a collective: every lane runs both arms under a predicate."""
        c = unwrap(self.cond(n.cond, path + ".cond"))
        self.tmp += 1
        p = f"vk_p{self.tmp}"
        self.emit(f"bool {p} = {self.guard(c, 'false')};", path)
        outer = self.pred
        step = self.nested(True)
        for body, label, pred in ((n.then, ".if.then", p), (n.otherwise, ".if.else", f"vk_q{self.tmp}")):
            if not body:
                continue
            self.pred = outer
            if label == ".if.else":
                self.emit(f"bool {pred} = {self.guard(f'!{p}', 'false')};", path)
            self.pred = pred
            self.block(body, path + label, f"{{  // {'if' if label == '.if.then' else 'else'}, predicated", path)
            self.emit("}", path)
        self.pred = outer
        self.nested(*step, leave=True)

    def loop(self, n: N.Loop, path: str) -> None:
        lo, _ = self.expr(n.from_, path + ".from")
        hi, _ = self.expr(n.to, path + ".to")
        self.tmp += 1
        end, var = f"vk_end{self.tmp}", self.var[n.var]
        lo_r, hi_r = self.interval(n.from_), self.interval(n.to)
        ranges = ({bounds.var_key(n.var): (lo_r[0], hi_r[1] - 1)} if lo_r and hi_r and lo_r[0] <= hi_r[1] - 1
                  and n.var not in self.assigned else {})
        uniform = self.wgu.uniform(n.from_) and self.wgu.uniform(n.to)
        if uniform:
            self.wgu.bind(n.var, None, self.assigned)
        else:
            self.wgu.taint(n.var)
        # the speculative loop's own body is not nested in itself (speculate.py lowers it with spec set)
        own = self.spec is not None and self.spec.shared is not None and self.spec.shared.nest < 0
        step = self.nested(not uniform, not own)
        if own:
            self.spec.shared.enter(len(self.lines) + 1)  # the body starts after its header line
        # Both bounds evaluated once, `from` first; var < end keeps var++ from wrapping.
        self.block(n.body, f"{path}.loop({n.var}).body",
                   f"for (uint {var} = {lo}, {end} = {hi}; {var} < {end}; {var}++) {{", path, {n.var: U32},
                   ranges)
        self.nested(*step, leave=True)
        self.emit("}", path)

    def block_node(self, n: N.Block, path: str) -> None:
        self.block(n.body, path + ".block.body", "{", path)
        self.emit("}", path)

    def region(self, n: N.Region, path: str) -> None:
        if n.generator == SPECULATE and "vyre_sp_state" in self.table and self.spec is None:
            # the checked loop (value), then the exact one if needed
            (speculative_store if isinstance(n.body[0], N.Store) else speculative_region)(self, n, path)
            return
        # vyre's Regions are lexical scopes too (IR-SPEC 6.2): braces plus a comment naming the generator.
        self.block(n.body, path + ".region.body", f"{{  // region {comment(n.generator)}", path)
        self.emit("}", path)

    def return_(self, n: N.Return, path: str) -> None:
        self.emit("return;", path)

    def trap(self, n: N.Trap, path: str) -> None:
        a, at = self.expr(n.address, path + ".address")
        word = {U32: a, I32: f"uint({a})", BOOL: f"uint({a})", F32: f"floatBitsToUint({a})", U8: a,
                I8: f"uint({a})"}[at]
        code = self.trap_tags.setdefault(str(n.tag), TRAP_CODE_DIVISION + 1 + len(self.trap_tags))
        self.features.add("trap")
        trap = f"vk_trap_at({code}u, {word});"
        self.emit(f"if ({self.pred}) {{ {trap} }}" if self.pred else trap, path)  # pred: address has a collective
        if not self.sg:  # with collectives every lane must still reach their barriers (the run raises anyway)
            self.emit("return;", path)

    # ---- the vector fast path of a coarsened elementwise region (vector.py)
    def vector_region(self, plan: VectorPlan, path: str) -> None:
        region = plan.region
        self.emit(f"{{  // region {comment(region.generator)} (16-byte loads/stores when all four elements are in bounds)", path)
        self.depth += 1
        self.scopes.append({})
        rb = path + ".region.body"
        self.stmt(region.body[0], rb + "[0]")  # let base = gid.x * 4
        lp = rb + "[1]"
        inner = f"{lp}.loop({plan.lane}).body"
        base, var, stems = self.var[plan.base], self.var, self.stem
        tot, _ = self.expr(plan.total, inner + "[1].cond.right")
        self.emit(f"uint vk_vtot = {tot};", lp)
        q = f"({base} >> 2u)"
        conds = ["vk_vtot >= 4u", f"{base} <= vk_vtot - 4u"]
        conds += [f"{q} < uint(vk_v4_{stems[b]}.length())" for b in plan.loads + plan.stores]
        self.emit(f"if ({' && '.join(conds)}) {{", lp)
        self.depth += 1
        for b in plan.loads:
            vt = vec_type(STORAGE_TYPE[self.decls[b].element])
            self.emit(f"{vt} vk_vl_{stems[b]} = vk_v4_{stems[b]}[{q}];", lp)
        for b in plan.stores:
            vt = vec_type(STORAGE_TYPE[self.decls[b].element])
            self.emit(f"{vt} vk_vs_{stems[b]} = {vt}(0); uint vk_vm_{stems[b]} = 0u;", lp)
        self.vplan = plan
        for c in range(4):
            self.vlane = c
            self.emit("{", lp)
            self.depth += 1
            self.scopes.append({plan.lane: U32, plan.elem: U32})
            self.emit(f"uint {var[plan.lane]} = {c}u;", lp)
            self.emit(f"uint {var[plan.elem]} = ({base} + {var[plan.lane]});", inner + "[0]")
            for i, n in enumerate(plan.body):
                self.stmt(n, f"{inner}[1].if.then[{i}]")
            self.scopes.pop()
            self.depth -= 1
            self.emit("}", lp)
        self.vlane = self.vplan = None
        for b in plan.stores:
            n, member = stems[b], self.names.buf(b)
            self.emit(f"if (vk_vm_{n} == 15u) {{", lp)
            self.emit(f"    vk_v4_{n}[{q}] = vk_vs_{n};", lp)
            self.emit("} else {", lp)
            for c in range(4):
                self.emit(f"    if ((vk_vm_{n} & {1 << c}u) != 0u) {{ {member}[{base} + {c}u] = vk_vs_{n}.{component(c)}; }}", lp)
            self.emit("}", lp)
        self.depth -= 1
        self.emit("} else {", lp)
        self.depth += 1
        self.stmt(region.body[1], lp)  # the scalar loop, as written
        self.depth -= 1
        self.emit("}", lp)
        self.scopes.pop()
        self.depth -= 1
        self.emit("}", path)


StmtLowerer.STMT_RULES = {
    N.Let: StmtLowerer.let,
    N.Assign: StmtLowerer.assign,
    N.Store: StmtLowerer.store,
    N.Barrier: StmtLowerer.barrier,
    N.If: StmtLowerer.if_,
    N.Loop: StmtLowerer.loop,
    N.Block: StmtLowerer.block_node,
    N.Region: StmtLowerer.region,
    N.Return: StmtLowerer.return_,
    N.Trap: StmtLowerer.trap,
}
