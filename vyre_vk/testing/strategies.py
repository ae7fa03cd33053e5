"""Hypothesis strategies that generate *valid*, runnable vyre IR programs.

Programs are built type-directed: every expression is drawn for a wanted type, variables
are tracked per scope (no shadowing), integer divisors are forced non-zero (and positive
for i32, so `MIN / -1` cannot happen), loops have small literal bounds, barriers appear
only in uniform control flow, and atomics target a counter buffer that is never read
non-atomically (no fusion hazards). Every generated program passes `validate` and runs in
the reference without errors.

Example::

    from hypothesis import given
    from vyre_vk.testing.strategies import programs, program_inputs

    @given(programs())
    def test_roundtrip(p):
        assert Program.from_json(p.to_json()) == p
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from hypothesis import strategies as st

from ..ir import (LitU32, BINOPS, BinOp, BufferDecl, DataType, Expr, Node, Program, UnOp, UNOPS, wrap_anonymous)
from ..ir.optable import SAME

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
VALUE_TYPES = (U32, I32, F32, BOOL)
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
        if t is F32:
            return Expr.f32(d(st.floats(width=32, allow_nan=True, allow_infinity=True)))
        return Expr.bool(d(st.booleans()))

    def expr(self, t: DataType, scope: _Scope, depth: int = 0) -> Expr:
        d = self.draw
        leaves = ["lit"]
        vs = [v for v in scope.vars if v[1] is t]
        if vs:
            leaves += ["var", "var"]
        loadable = [b for b in self.buffers.values() if b.element is t and b.name != self.counter]
        if loadable:
            leaves.append("load")
        if t is U32:
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
            return Expr.load(b.name, sub(U32))
        if k == "gid":
            return d(st.sampled_from([Expr.gid_x(), Expr.local_x(), Expr.workgroup_x(), Expr.gid_y()]))
        if k == "buf_len":
            return Expr.buf_len(d(st.sampled_from(sorted(n for n in self.buffers if n != self.counter))))
        if k == "bin":
            ops = [op for op in _ARITH_SAME if t in BINOPS[op].types]
            if not ops:
                return self.lit(t)
            op = d(st.sampled_from(ops))
            a, b = sub(t), sub(t)
            if op in (BinOp.Div, BinOp.Mod) and t in (U32, I32):
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
            return Expr.cast(t, sub(d(st.sampled_from(VALUE_TYPES))))
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
                kinds += ["if", "loop", "block"]
            if uniform:
                kinds.append("barrier")
            if self.counter:
                kinds.append("atomic")
            if self.scratch is not None and uniform:
                kinds.append("scratch")
            k = d(st.sampled_from(kinds))
            if k == "let":
                t = d(st.sampled_from(VALUE_TYPES))
                name = self.fresh("v")
                out.append(Node.let_bind(name, self.expr(t, scope)))
                scope.vars.append((name, t, False))
            elif k == "assign":
                name, t, _ = d(st.sampled_from(assignable))
                out.append(Node.assign(name, self.expr(t, scope)))
            elif k == "store":
                b = self.buffers["out"]
                idx = self.expr(U32, scope)
                if isinstance(idx, LitU32):  # a constant index must be in range (V036)
                    idx = Expr.u32(idx.value % b.count)
                out.append(Node.store("out", idx, self.expr(b.element, scope)))
            elif k == "if":
                cond = self.expr(d(st.sampled_from([BOOL, U32])), scope)
                then = self.stmts(scope.child(), depth + 1, False, 3)
                other = self.stmts(scope.child(), depth + 1, False, 2)
                if d(st.booleans()):
                    then.append(Node.return_())
                out.append(Node.if_then_else(cond, then, other))
            elif k == "loop":
                var = self.fresh("l")
                inner = scope.child()
                inner.vars.append((var, U32, True))
                lo = d(st.integers(0, 2))
                hi = d(st.integers(0, 4))
                out.append(Node.loop_for(var, Expr.u32(lo), Expr.u32(hi), self.stmts(inner, depth + 1, uniform, 3)))
            elif k == "block":
                out.append(Node.block(self.stmts(scope.child(), depth + 1, uniform, 2)))
            elif k == "barrier":
                out.append(Node.barrier())
            elif k == "atomic":
                op = d(st.sampled_from(["atomic_add", "atomic_or", "atomic_max", "atomic_min", "atomic_xor",
                                        "atomic_exchange", "cas"]))
                idx = self.expr(U32, scope)
                if op == "cas":
                    e = Expr.atomic_compare_exchange(self.counter, idx, self.expr(U32, scope), self.expr(U32, scope))
                else:
                    e = getattr(Expr, op)(self.counter, idx, self.expr(U32, scope))
                name = self.fresh("a")
                out.append(Node.let_bind(name, e))
                scope.vars.append((name, U32, False))
            elif k == "scratch":
                s = self.scratch
                out.append(Node.store(s.name, Expr.local_x(), self.expr(s.element, scope)))
                out.append(Node.barrier())
                name = self.fresh("s")
                out.append(Node.let_bind(name, Expr.load(s.name, self.expr(U32, scope))))
                scope.vars.append((name, s.element, False))
                out.append(Node.barrier())
        return out


def _is_zero_lit(e: Expr) -> bool:
    from ..ir.validate import _static_zero
    return _static_zero(e)


@st.composite
def programs(draw, max_statements: int = 6, allow_atomics: bool = True,
             allow_workgroup: bool = True) -> Program:
    """A random valid Program (buffers in0.., `out`, optional `counter` and `scratch`)."""
    buffers: list[BufferDecl] = []
    n_in = draw(st.integers(1, 3))
    for i in range(n_in):
        t = draw(st.sampled_from([U32, I32, F32, BOOL]))
        buffers.append(BufferDecl.read(f"in{i}", i, t).with_count(draw(st.integers(1, 16))))
    out_t = draw(st.sampled_from([U32, I32, F32]))
    buffers.append(BufferDecl.output("out", n_in, out_t).with_count(draw(st.integers(1, 16))))
    counter = None
    if allow_atomics and draw(st.booleans()):
        counter = "counter"
        buffers.append(BufferDecl.read_write("counter", n_in + 1, U32).with_count(draw(st.integers(1, 8))))
    scratch = None
    wg = draw(st.sampled_from([(1, 1, 1), (4, 1, 1), (8, 1, 1), (64, 1, 1), (4, 2, 1)]))
    if allow_workgroup and draw(st.booleans()):
        scratch = BufferDecl.workgroup("scratch", wg[0] * wg[1] * wg[2], draw(st.sampled_from([U32, F32])))
        buffers.append(scratch)
    g = _Gen(draw, {b.name: b for b in buffers}, counter, scratch)
    body = g.stmts(_Scope(), 0, True, max_statements)
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
        else:
            out[b.name] = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    return out
