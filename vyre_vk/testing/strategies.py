"""Hypothesis strategies that generate *valid*, runnable vyre IR programs.

Programs are built type-directed: every expression is drawn for a wanted type, variables
are tracked per scope (no shadowing), integer divisors are forced non-zero (and positive
for i32, so `MIN / -1` cannot happen), loops have small literal bounds, barriers appear
only in uniform control flow, and atomics target a counter buffer that is never read
non-atomically (no fusion hazards). Every generated program passes `validate` and runs in
the reference without errors.

Race freedom (``race_free=True``, the default; the differential mode). The reference runs
invocations in one fixed lock-step order, which is only one of the outcomes a GPU may
produce for a racy program, so differential programs must be data-race free:

* every invocation owns one *slot* of each buffer it stores to: the index ``f(own)`` where
  ``own`` is unique per invocation (``gid.x``, with ``gid.y << 16 | gid.z << 24`` folded in
  for 2-D/3-D workgroup shapes) and ``f`` is a bijection of u32 drawn once per buffer
  (``own + c``, ``own ^ c``, ``c - own``, ``own * odd``). Stores and loads of a stored
  buffer use the slot or an index that is always out of bounds (``own + count``,
  ``0xFFFFFFFF - (own & 0xFF)``); only never-stored buffers are loaded at any index;
* workgroup ``scratch`` is stored at the local linear index, then barrier, loads at any
  index, barrier; elsewhere it is loaded at the invocation's own local slot only;
* atomics either all hit the invocation's own counter slot (any op, result usable) or
  contend on any index with one commutative op per program (add/or/xor/max/min) and an
  unused result, so the final counter is order independent;
* after a `Return` or `Trap` (which end the invocation) no barrier is generated, and
  neither is returned from inside a loop whose body may hold a barrier: a barrier that
  not every invocation of the workgroup reaches is undefined in Vulkan.

``race_free=False`` draws indices freely (the lowering-totality tests use it).

Example::

    from hypothesis import given
    from vyre_vk.testing.strategies import programs, program_inputs

    @given(programs())
    def test_roundtrip(p):
        assert Program.from_json(p.to_json()) == p
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from hypothesis import strategies as st

from ..ir import (LitU32, BINOPS, BinOp, BufferDecl, DataType, Expr, Node, Program, UnOp, UNOPS, wrap_anonymous)
from ..ir.optable import SAME

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
U8, I8 = DataType.U8, DataType.I8
VALUE_TYPES = (U32, I32, F32, BOOL)
#: Byte types: buffers, lets, selects and casts only (no operator takes them; f32 <-> byte is V012).
BYTE_TYPES = (U8, I8)
_ARITH_SAME = [op for op, i in BINOPS.items() if i.supported and i.result == SAME and i.match]
_CMP = [BinOp.Eq, BinOp.Ne, BinOp.Lt, BinOp.Gt, BinOp.Le, BinOp.Ge]
_UN_SAME = [op for op, i in UNOPS.items() if i.result == SAME]
_UN_BOOL = [op for op, i in UNOPS.items() if i.result == BOOL]
_UNPACK = [UnOp.Unpack4Low, UnOp.Unpack4High, UnOp.Unpack8Low, UnOp.Unpack8High]


@dataclass
class _Scope:
    vars: list = field(default_factory=list)  # (name, type, is_loop_var)

    def child(self) -> "_Scope":
        return _Scope(list(self.vars))


@dataclass
class _Gen:
    draw: object
    buffers: dict  # name -> BufferDecl
    counter: Optional[str]
    scratch: Optional[BufferDecl]
    names: int = 0
    max_expr_depth: int = 3
    traps: bool = False          # unguarded i32 Div/Mod and Trap nodes (the reference may raise)
    writable: tuple = ("out",)   # buffers Store may target
    race_free: bool = False      # see the module doc
    slots: dict = field(default_factory=dict)  # buffer -> its slot index Expr (race_free)
    own: Optional[Expr] = None   # a u32 unique per invocation (race_free)
    contended_op: Optional[str] = None  # race_free atomics: one commutative op on any index
    ended: bool = False          # a Return/Trap was generated: no barrier after it (race_free)
    barrier_loops: int = 0       # depth of loops whose body may hold a barrier
    elementwise: bool = False    # no loops/barriers/atomics/returns, stores at the own slot (coarsenable)
    invariant: bool = False      # expressions of the loop variable, literals and never-stored buffers only

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    # ---- expressions
    def lit(self, t: DataType) -> Expr:
        d = self.draw
        if t is U32:
            return Expr.u32(d(st.one_of(st.integers(0, 8), st.integers(0, 0xFFFFFFFF))))
        if t is I32:
            return Expr.i32(d(st.one_of(st.integers(-4, 8), st.integers(-2**31, 2**31 - 1))))
        if t is F32:  # edge values often: a constant 0.0 / inf / NaN operand is where compilers fold wrongly
            return Expr.f32(d(st.one_of(st.sampled_from(_F32_EDGES),
                                        st.floats(width=32, allow_nan=True, allow_infinity=True))))
        if t in BYTE_TYPES:  # no byte literals: the low byte of a u32/i32 one
            return Expr.cast(t, self.lit(d(st.sampled_from([U32, I32]))))
        return Expr.bool(d(st.booleans()))

    def expr(self, t: DataType, scope: _Scope, depth: int = 0) -> Expr:
        d = self.draw
        leaves = ["lit"]
        vs = [v for v in scope.vars if v[1] is t]
        if vs:
            leaves += ["var", "var"]
        loadable = [b for b in self.buffers.values() if b.element is t and b.name != self.counter
                    and not (self.invariant and (b.name in self.slots or b.is_workgroup))]
        if loadable:
            leaves.append("load")
        if t is U32 and not self.invariant:
            leaves += ["gid", "buf_len"]
        kinds = list(leaves)
        if depth < self.max_expr_depth:
            kinds += ["bin", "bin", "un", "cast", "select"] + (["cmp", "cmp", "logic"] if t is BOOL else []) \
                + (["fma"] if t is F32 else []) + (["unpack"] if t is U32 else [])
        k = d(st.sampled_from(kinds))
        sub = lambda tt: self.expr(tt, scope, depth + 1)  # noqa: E731
        if k == "lit":
            return self.lit(t)
        if k == "var":
            return Expr.var(d(st.sampled_from(vs))[0])
        if k == "load":
            b = d(st.sampled_from(loadable))
            if b.name in self.slots:
                return Expr.load(b.name, self.slot_index(b))
            return Expr.load(b.name, self.index(b, scope, depth))
        if k == "gid" and self.elementwise:
            return d(st.sampled_from([Expr.gid_x(), Expr.gid_y(), Expr.gid_z()]))
        if k == "gid":
            return d(st.sampled_from([Expr.gid_x(), Expr.local_x(), Expr.workgroup_x(), Expr.gid_y(),
                                      Expr.gid_z(), Expr.local_y(), Expr.local_z(), Expr.workgroup_y(),
                                      Expr.workgroup_z()]))
        if k == "buf_len":
            return Expr.buf_len(d(st.sampled_from(sorted(n for n in self.buffers if n != self.counter))))
        if k == "bin":
            ops = [op for op in _ARITH_SAME if t in BINOPS[op].types]
            if not ops:
                return self.lit(t)
            op = d(st.sampled_from(ops))
            a, b = sub(t), sub(t)
            if op in (BinOp.Div, BinOp.Mod) and t is I32 and self.traps and not _is_zero_lit(b) and d(st.booleans()):
                pass  # unguarded: division by zero / MIN / -1 may trap (reference raises EvalError)
            elif op in (BinOp.Div, BinOp.Mod) and t in (U32, I32):
                # keep integer divisors non-zero (and positive for i32): (b & 0x7F) | 1
                mask, one = (Expr.u32(0x7F), Expr.u32(1)) if t is U32 else (Expr.i32(0x7F), Expr.i32(1))
                b = Expr.bitor(Expr.bitand(b, mask), one)
            elif op is BinOp.Div:
                b = Expr.select(Expr.eq(b, Expr.f32(0.0)), Expr.f32(1.0), b) if _is_zero_lit(b) else b
            return Expr.binop(op, a, b)
        if k == "un":
            ops = [op for op in _UN_SAME if t in UNOPS[op].types]
            if not ops:
                return self.lit(t)
            return Expr.unop(d(st.sampled_from(ops)), sub(t))
        if k == "unpack":
            return Expr.unop(d(st.sampled_from(_UNPACK)), sub(d(st.sampled_from([U32, I32]))))
        if k == "cast":
            sources = [x for x in VALUE_TYPES + BYTE_TYPES  # f32 <-> u8/i8 is V012
                       if not (F32 in (x, t) and (x in BYTE_TYPES or t in BYTE_TYPES))]
            return Expr.cast(t, sub(d(st.sampled_from(sources))))
        if k == "select":
            return Expr.select(sub(BOOL), sub(t), sub(t))
        if k == "fma":
            return Expr.fma(sub(F32), sub(F32), sub(F32))
        if k == "cmp":
            op = d(st.sampled_from(_CMP))
            ot = d(st.sampled_from([x for x in BINOPS[op].types]))
            return Expr.binop(op, sub(ot), sub(ot))
        if k == "logic":
            return d(st.sampled_from([Expr.and_, Expr.or_]))(sub(d(st.sampled_from([U32, BOOL]))),
                                                             sub(d(st.sampled_from([U32, BOOL]))))
        raise AssertionError(k)

    def index(self, b: BufferDecl, scope: _Scope, depth: int) -> Expr:
        """An index into `b`: any u32 expression, or one past the end on purpose."""
        d = self.draw
        k = d(st.sampled_from(["any", "any", "oob", "huge"]))
        if k == "oob" and b.count:
            return Expr.add(Expr.gid_x(), Expr.u32(b.count))
        if k == "huge":
            return Expr.sub(Expr.u32(0xFFFFFFFF), self.expr(U32, scope, depth + 1))
        return self.expr(U32, scope, depth + 1)

    def slot_index(self, b: BufferDecl) -> Expr:
        """Race free: the invocation's own slot of `b`, or an index that is always out of bounds."""
        k = self.draw(st.sampled_from(["slot", "slot", "slot", "oob", "huge"]))
        if self.elementwise:
            k = "slot"
        if k == "oob":
            return Expr.add(self.own if not b.is_workgroup else self.slots[b.name], Expr.u32(max(b.count, 1)))
        if k == "huge":
            return Expr.sub(Expr.u32(0xFFFFFFFF), Expr.bitand(self.own, Expr.u32(0xFF)))
        return self.slots[b.name]

    def stmt_allowed_barrier(self, uniform: bool) -> bool:
        return uniform and not (self.race_free and self.ended) and not self.elementwise

    def hoistable(self, scope: _Scope, depth: int) -> Node:
        """`for j in lo..hi { let acc = f(j); for k in 0..m { acc = acc + g(j, k) }; ...acc... }`
        with f, g invariant (the loop variables, literals, never-stored buffers): the shape
        vyre_vk.opt.hoist_invariant moves into a pre-pass kernel (a multi-kernel graph)."""
        d = self.draw
        j, k, acc = self.fresh("l"), self.fresh("l"), self.fresh("v")
        t = d(st.sampled_from([F32, U32, I32]))
        traps, self.traps, self.invariant = self.traps, False, True
        try:
            init = self.expr(t, _Scope([(j, U32, True)]), 1)
            term = self.expr(t, _Scope([(j, U32, True), (k, U32, True)]), 1)
        finally:
            self.traps, self.invariant = traps, False
        trips = d(st.integers(1, 4))
        if d(st.integers(0, 2)) == 0:  # long enough for vyre_vk.opt.unroll (>= 2 x 16 trips, a load)
            trips = d(st.integers(32, 40))
            src = d(st.sampled_from(sorted(n for n, b in self.buffers.items() if b.name not in self.slots
                                           and not b.is_workgroup and n != self.counter)))
            idx = Expr.add(Expr.var(k), Expr.var(j)) if d(st.booleans()) else Expr.var(k)
            ld = Expr.load(src, idx)
            if self.buffers[src].element in BYTE_TYPES and t is F32:  # no u8 -> f32 cast (V012)
                ld = Expr.cast(U32, ld)
            term = Expr.binop(BinOp.Add, term, Expr.cast(t, ld))
        inner = scope.child()
        inner.vars += [(j, U32, True), (acc, t, False)]
        out = self.buffers[d(st.sampled_from(self.writable))]
        et = U32 if out.element in BYTE_TYPES else out.element  # no arithmetic on bytes: in u32, then narrowed
        use = Expr.binop(BinOp.Add, Expr.cast(et, Expr.var(acc)), self.expr(et, inner))
        use = use if et is out.element else Expr.cast(out.element, use)
        body = [Node.let_bind(acc, init),
                Node.loop_for(k, Expr.u32(0), Expr.u32(trips),
                              [Node.assign(acc, Expr.binop(BinOp.Add, Expr.var(acc), term))]),
                *self.stmts(inner, depth + 1, False, 2),
                Node.store(out.name, self.slot_index(out), use)]
        return Node.loop_for(j, Expr.u32(d(st.integers(0, 2))), Expr.u32(d(st.integers(2, 6))), body)

    # ---- statements
    def stmts(self, scope: _Scope, depth: int, uniform: bool, max_len: int) -> list:
        d = self.draw
        out: list = []
        for _ in range(d(st.integers(0, max_len))):
            kinds = ["let", "let", "store"]
            assignable = [v for v in scope.vars if not v[2]]
            if assignable:
                kinds.append("assign")
            if depth < 3:
                kinds += ["if", "block"] + ([] if self.elementwise else ["loop"])
            if depth < 2 and self.race_free and not self.elementwise:
                kinds.append("hoistable")
            barrier_ok = self.stmt_allowed_barrier(uniform)
            if barrier_ok:
                kinds.append("barrier")
            if self.counter and not self.elementwise:
                kinds.append("atomic")
            if self.scratch is not None and barrier_ok:
                kinds.append("scratch")
            can_end = not (self.race_free and self.barrier_loops) and not self.elementwise
            if self.traps and can_end:
                kinds.append("trap")
            k = d(st.sampled_from(kinds))
            if k == "let":
                t = d(st.sampled_from(VALUE_TYPES + BYTE_TYPES))
                name = self.fresh("v")
                out.append(Node.let_bind(name, self.expr(t, scope)))
                scope.vars.append((name, t, False))
            elif k == "assign":
                name, t, _ = d(st.sampled_from(assignable))
                out.append(Node.assign(name, self.expr(t, scope)))
            elif k == "store":
                b = self.buffers[d(st.sampled_from(self.writable))]
                idx = self.slot_index(b) if b.name in self.slots else self.index(b, scope, 0)
                if isinstance(idx, LitU32):  # a constant index must be in range (V036)
                    idx = Expr.u32(idx.value % b.count)
                out.append(Node.store(b.name, idx, self.expr(b.element, scope)))
            elif k == "trap":
                out.append(Node.if_then(self.expr(BOOL, scope), [Node.trap(self.expr(U32, scope), self.fresh("t"))]))
                self.ended = True
            elif k == "if":
                cond = self.expr(d(st.sampled_from([BOOL, U32])), scope)
                then = self.stmts(scope.child(), depth + 1, False, 3)
                other = self.stmts(scope.child(), depth + 1, False, 2)
                if can_end and d(st.booleans()):
                    then.append(Node.return_())
                    self.ended = True
                out.append(Node.if_then_else(cond, then, other))
            elif k == "loop":
                var = self.fresh("l")
                inner = scope.child()
                inner.vars.append((var, U32, True))
                lo = Expr.u32(d(st.integers(0, 2)))
                hi = Expr.u32(d(st.integers(0, 4)))
                if d(st.integers(0, 3)) == 0:  # a bound computed at run time, kept small
                    hi = Expr.min(self.expr(U32, scope), Expr.u32(d(st.integers(0, 5))))
                    uniform = False  # the trip count may differ between invocations
                body_uniform = self.stmt_allowed_barrier(uniform)
                self.barrier_loops += body_uniform
                out.append(Node.loop_for(var, lo, hi, self.stmts(inner, depth + 1, body_uniform, 3)))
                self.barrier_loops -= body_uniform
            elif k == "hoistable":
                out.append(self.hoistable(scope, depth))
            elif k == "block":
                out.append(Node.block(self.stmts(scope.child(), depth + 1, uniform, 2)))
            elif k == "barrier":
                out.append(Node.barrier())
            elif k == "atomic":
                op = d(st.sampled_from(["atomic_add", "atomic_or", "atomic_max", "atomic_min", "atomic_xor",
                                        "atomic_exchange", "cas"]))
                if self.contended_op:  # any index, one commutative op, result unused
                    op = self.contended_op
                    idx = self.expr(U32, scope)
                elif self.race_free:
                    idx = self.slot_index(self.buffers[self.counter])
                else:
                    idx = self.expr(U32, scope)
                if op == "cas":
                    e = Expr.atomic_compare_exchange(self.counter, idx, self.expr(U32, scope), self.expr(U32, scope))
                else:
                    e = getattr(Expr, op)(self.counter, idx, self.expr(U32, scope))
                name = self.fresh("a")
                out.append(Node.let_bind(name, e))
                if not self.contended_op:  # a contended atomic's old value depends on the order
                    scope.vars.append((name, U32, False))
            elif k == "scratch":
                s = self.scratch
                where = self.slots[s.name] if self.race_free else Expr.local_x()
                out.append(Node.store(s.name, where, self.expr(s.element, scope)))
                out.append(Node.barrier())
                name = self.fresh("s")
                out.append(Node.let_bind(name, Expr.load(s.name, self.index(s, scope, 0))))
                scope.vars.append((name, s.element, False))
                out.append(Node.barrier())
        return out


def _is_zero_lit(e: Expr) -> bool:
    from ..ir.validate import _static_zero
    return _static_zero(e)


_ATOMIC_COMMUTATIVE = ["atomic_add", "atomic_or", "atomic_xor", "atomic_max", "atomic_min"]


def _bijection(draw, own: Expr) -> Expr:
    """A random bijection of u32 applied to `own` (distinct invocations keep distinct slots)."""
    c = draw(st.one_of(st.integers(0, 20), st.integers(0, 0xFFFFFFFF)))
    k = draw(st.sampled_from(["id", "id", "add", "add", "xor", "rsub", "mul"]))
    if k == "add":
        return Expr.add(own, Expr.u32(c))
    if k == "xor":
        return Expr.bitxor(own, Expr.u32(c))
    if k == "rsub":
        return Expr.sub(Expr.u32(c), own)
    if k == "mul":
        return Expr.mul(own, Expr.u32(c | 1))
    return own


@st.composite
def programs(draw, max_statements: int = 6, allow_atomics: bool = True,
             allow_workgroup: bool = True, allow_traps: bool = False, race_free: bool = True) -> Program:
    """A random valid Program (buffers in0.., `out`, optional `rw`, `counter` and `scratch`).

    Indices go out of bounds on purpose (one past the end, near 2**32). Binding numbers
    are sometimes permuted or sparse. With ``allow_traps`` the program may also divide
    i32 values by unguarded divisors and contain Trap nodes, so the reference may raise
    ``EvalError`` (the GPU must then trap: see vyre_vk.testing.fuzz). ``race_free``
    (default) keeps the program free of data races (module doc), so the reference's
    invocation order is the only outcome and a differential test may compare it.
    """
    buffers: list[BufferDecl] = []
    n_in = draw(st.integers(1, 3))
    for i in range(n_in):
        t = draw(st.sampled_from([U32, I32, F32, BOOL, U8, I8]))
        make = BufferDecl.uniform if t is not BOOL and draw(st.integers(0, 5)) == 0 else BufferDecl.read
        buffers.append(make(f"in{i}", i, t).with_count(draw(st.integers(1, 16))))
    # race-free shapes that make optimiser passes fire: "elementwise" (coarsen: no loops,
    # own-slot stores, 1-D, no atomics/workgroup/traps) and "reduction" (hoist_invariant: no
    # atomics/workgroup, starts with a hoistable loop)
    shape = draw(st.sampled_from(["general", "general", "general", "elementwise", "reduction"])) \
        if race_free else "general"
    out_t = draw(st.sampled_from([U32, I32, F32]))  # byte results: `rw` (i8) and `scratch` (u8)
    buffers.append(BufferDecl.output("out", n_in, out_t).with_count(draw(st.integers(1, 16))))
    writable = ["out"]
    if draw(st.integers(0, 3)) == 0:
        buffers.append(BufferDecl.read_write("rw", len(buffers), draw(st.sampled_from([U32, I32, F32, I8])))
                       .with_count(draw(st.integers(1, 8))))
        if not race_free or draw(st.integers(0, 3)):  # else never stored: loaded at any index
            writable.append("rw")
    counter = None
    if allow_atomics and shape == "general" and draw(st.booleans()):
        counter = "counter"
        buffers.append(BufferDecl.read_write("counter", len(buffers), U32).with_count(draw(st.integers(1, 8))))
    layout = draw(st.sampled_from(["dense", "dense", "permuted", "sparse"]))
    if layout != "dense":
        slots = list(range(len(buffers) + (3 if layout == "sparse" else 0)))
        slots = draw(st.permutations(slots))[:len(buffers)]
        buffers = [dataclasses.replace(b, binding=k) for b, k in zip(buffers, slots)]
    scratch = None
    wg = draw(st.sampled_from([(1, 1, 1), (4, 1, 1), (8, 1, 1), (64, 1, 1)] + ([(4, 2, 1)] if shape == "general" else [])))
    if allow_workgroup and shape == "general" and draw(st.booleans()):
        scratch = BufferDecl.workgroup("scratch", wg[0] * wg[1] * wg[2], draw(st.sampled_from([U32, F32, U8])))
        buffers.append(scratch)
    g = _Gen(draw, {b.name: b for b in buffers}, counter, scratch, traps=allow_traps and shape != "elementwise",
             writable=tuple(writable), race_free=race_free, elementwise=shape == "elementwise")
    if race_free:
        sx, sy, sz = wg
        g.own = Expr.gid_x()
        if sy > 1 or sz > 1:  # 2-D/3-D shapes spread workgroups over y (and z): fold them in
            g.own = Expr.bitor(Expr.bitor(Expr.gid_x(), Expr.shl(Expr.gid_y(), Expr.u32(16))),
                               Expr.shl(Expr.gid_z(), Expr.u32(24)))
        for name in writable:
            g.slots[name] = g.own if shape == "elementwise" else _bijection(draw, g.own)
        if counter is not None:
            if draw(st.booleans()):
                g.contended_op = draw(st.sampled_from(_ATOMIC_COMMUTATIVE))
            else:
                g.slots[counter] = _bijection(draw, g.own)
        if scratch is not None:
            lin = Expr.add(Expr.local_x(), Expr.mul(Expr.local_y(), Expr.u32(sx)))
            g.slots[scratch.name] = lin if sy > 1 else Expr.local_x()
    pre = [g.hoistable(_Scope(), 0)] if shape == "reduction" else []  # first: it may Return
    scope = _Scope()
    body = pre + g.stmts(scope, 0, True, max_statements)
    if shape == "elementwise":  # at least one store, so there is something to coarsen
        body.append(Node.store("out", g.own, g.expr(out_t, scope)))
    op_id = draw(st.sampled_from(["fuzz::gen", "vyre-libs::test::op"]))
    return Program.wrapped(buffers, wg, [wrap_anonymous(op_id, body)])


def program_inputs(program: Program, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic random inputs for every input buffer of `program`."""
    rng = np.random.default_rng(seed)
    out = {}
    for b in program.input_buffers:
        n = max(b.count, 1)
        if b.element is DataType.F32:
            out[b.name] = (rng.standard_normal(n) * 4).astype(np.float32)
        elif b.element is DataType.I32:
            out[b.name] = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        elif b.element is DataType.Bool:
            out[b.name] = rng.integers(0, 2, n).astype(np.uint32)
        elif b.element in BYTE_TYPES:
            out[b.name] = rng.integers(0, 256, n).astype(np.uint8).view(b.element.numpy)
        else:
            out[b.name] = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    return out


_F32_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, float("inf"), float("-inf"), float("nan"), 3.4028235e38, 1.17549435e-38,
              1e-45, -1e-45, 2.0 ** 24, 16777217.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 0.1, 100.0]
_F32_RAW = [0x00000001, 0x00000371, 0x007FFFFF, 0x80000001, 0x807FFFFF, 0x7FC00001, 0xFFC00000, 0x7F800001,
            0xFF800001, 0x7FFFFFFF, 0x3F800000, 0x00800000, 0x80000000, 0x00000000, 0x7F800000]
_I32_EDGES = [0, 1, -1, 2, -2, 31, 32, 33, 2**31 - 1, -2**31, 255, -256, 65536]
_U32_EDGES = [0, 1, 2, 31, 32, 33, 255, 256, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 65535]


@st.composite
def inputs_for(draw, program: Program) -> dict[str, np.ndarray]:
    """Inputs for every input buffer: random or edge values (NaN, inf, -0, subnormals, MIN, MAX)."""
    out = {}
    for b in program.input_buffers:
        n = max(b.count, 1)
        if b.element is F32:
            el = st.one_of(st.sampled_from(_F32_EDGES), st.floats(width=32), st.floats(-8, 8, width=32))
            arr = np.array(draw(st.lists(el, min_size=n, max_size=n)), dtype=np.float32)
            if draw(st.integers(0, 3)) == 0:  # raw bit patterns: NaN payloads, subnormals
                raw = draw(st.lists(st.sampled_from(_F32_RAW), min_size=n, max_size=n))
                arr = np.array(raw, dtype=np.uint32).view(np.float32)
            # ReadWrite f32 inputs are canonicalised at bind time by the reference and on
            # upload by the runtime (tests/reliability/test_known_deviations.py), so raw
            # bytes go into every f32 buffer, ReadWrite included.
            out[b.name] = arr
        elif b.element is I32:
            el = st.one_of(st.sampled_from(_I32_EDGES), st.integers(-2**31, 2**31 - 1), st.integers(-4, 4))
            out[b.name] = np.array(draw(st.lists(el, min_size=n, max_size=n)), dtype=np.int32)
        elif b.element is BOOL:
            out[b.name] = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.uint32)
        elif b.element in BYTE_TYPES:
            raw = draw(st.lists(st.one_of(st.sampled_from([0, 1, 127, 128, 255]), st.integers(0, 255)),
                                min_size=n, max_size=n))
            out[b.name] = np.array(raw, dtype=np.uint8).view(b.element.numpy)
        else:
            el = st.one_of(st.sampled_from(_U32_EDGES), st.integers(0, 2**32 - 1), st.integers(0, 20))
            out[b.name] = np.array(draw(st.lists(el, min_size=n, max_size=n)), dtype=np.uint32)
    return out


@st.composite
def cases(draw, **program_kwargs) -> tuple[Program, dict[str, np.ndarray]]:
    """(program, inputs): :func:`programs` with :func:`inputs_for` drawn for it."""
    p = draw(programs(**program_kwargs))
    return p, draw(inputs_for(p))
