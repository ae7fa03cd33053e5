"""Vectorised NumPy reference evaluator for vyre IR programs.

All invocations of the grid execute together, statement by statement ("lock-step"):
every value is a NumPy array over the lanes (or a 0-d array when it is the same for all
lanes), `if` narrows a boolean lane mask, loops with per-lane bounds run from the
smallest start to the largest end with a per-iteration mask, and `return` retires lanes.
Because a statement completes for all lanes before the next one starts, every barrier is
already satisfied. Lanes are ordered like vyre's invocation order (workgroups x-fastest,
then local index x-fastest), so stores from several lanes to one element resolve "last
lane wins" and atomics run one lane after another in that order.

Arithmetic follows vyre-reference through the operator table (vyre_vk.ir.optable): f32 in
float32 with canonical NaN and flush-to-zero after every operation, wrapping u32/i32,
u32 x/0 = 0xFFFFFFFF, shifts masked with 31, saturating float->int casts, loads out of
bounds return 0 and stores out of bounds are dropped.

Subgroup collectives (IR-SPEC 2.6) use vyre's simulated width 32 (reference/subgroup.py).
SubgroupLocalId is local index % 32 and SubgroupSize is 32 (vyre's reference leaves both
unimplemented).

Divergence from vyre's interpreter (documented decision): vyre runs workgroups one after
another, so in a *racy* program a later workgroup may see an earlier one's stores; here
all workgroups advance together. Race-free programs (the only ones a GPU defines) agree.

Loops whose body only accumulates (`acc = acc + term`, plus `let`s) run all iterations at once,
bit-identically (reference/fastloop.py).

Inputs are bound under the runtime's rules (vyre_vk.ir.binding: a float64 array for an F32 buffer
is an InputError) and the grid is vyre's (vyre_vk.ir.grid).

Loops are charged against a step budget (vyre_vk.reference.budget): a loop bound read from a
buffer holding 0xFFFFFFFF raises StepBudgetExceeded in seconds instead of running for hours.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import ATOMICS, BINOPS, CASTS, UNOPS, canon
from ..ir.program import Program
from ..ir.types import DataType
from ..ir.validate import validate as _validate
from . import budget as _budget
from .binding import Inputs, _bind_inputs, _has_workgroup_or_atomic, dispatch_grid  # noqa: F401 (re-exported)
from .errors import EvalError, StepBudgetExceeded, TrapError  # noqa: F401 (re-exported)
from .fastloop import fast_plan, run_fast_loop
from .numeric import fma_f32, to_storage  # noqa: F401 (fma_f32 re-exported: opt/fold.py)
from .subgroup import SubgroupOps

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool
# A value's type from its dtype; the byte types' values are uint8 / int8 (only casts take them).
_KIND = {np.dtype(np.uint32): U32, np.dtype(np.int32): I32, np.dtype(np.float32): F32, np.dtype(np.bool_): BOOL,
         np.dtype(np.uint8): DataType.U8, np.dtype(np.int8): DataType.I8}
#: Largest (iterations x lanes) block the accumulate fast path materialises.
FAST_LOOP_MAX_ELEMENTS = 1 << 22


# ----------------------------------------------------------------------------- evaluator
class _Machine(SubgroupOps):
    """All lanes of one dispatch, run in lock-step over NumPy arrays (see the module docstring)."""

    def __init__(self, program: Program, mem: dict[str, np.ndarray], grid: tuple[int, int, int],
                 max_steps: int = _budget.UNLIMITED):
        self.p = program
        self.decls = {b.name: b for b in program.buffers}
        self.mem = mem
        sx, sy, sz = program.workgroup_size
        gx, gy, gz = grid
        per_wg = sx * sy * sz
        self.n_wg = gx * gy * gz
        self.n = n = self.n_wg * per_wg
        lane = np.arange(n, dtype=np.int64)
        w, l = lane // per_wg, lane % per_wg
        self.wg_lin = w
        # Subgroups (vyre's simulated width 32): lane -> slot in a (workgroups, groups, 32) pad.
        sg = E.SUBGROUP_WIDTH
        self.sg_groups = -(-per_wg // sg)
        self.sg_local = l
        self.sg_slot = w * (self.sg_groups * sg) + l
        self.sg_valid = (np.arange(self.sg_groups * sg) < per_wg).reshape(self.sg_groups, sg)
        self.sg_len = np.minimum(sg, per_wg - (l // sg) * sg)  # lanes in this lane's subgroup
        wid = (w % gx, (w // gx) % gy, w // (gx * gy))
        lid = (l % sx, (l // sx) % sy, l // (sx * sy))
        self.lid = tuple(a.astype(np.uint32) for a in lid)
        self.wid = tuple(a.astype(np.uint32) for a in wid)
        self.gid = tuple((wid[a] * (sx, sy, sz)[a] + lid[a]).astype(np.uint32) for a in range(3))
        for b in program.buffers:
            if b.is_workgroup:  # zeroed per workgroup
                mem[b.name] = np.zeros((self.n_wg, b.count), dtype=b.element.numpy)
        self.env: dict[str, np.ndarray] = {}
        self.alive = np.ones(n, dtype=bool)
        self.any_returned = False
        self.fast_plans: dict[int, Any] = {}
        self.fast_loops_enabled = True
        # Step budget (see vyre_vk.reference.budget): charged per loop iteration, never per expression.
        self.max_steps = max_steps
        self.steps = 0
        self.lane_blocks = max(1, -(-n // _budget.LANES_PER_STEP))
        self.loop_profiles: dict[int, tuple[int, bool]] = {}
        self.loop_chain: list[N.Loop] = []  # loops being executed, outermost first (error path)
        self._eval = {
            E.LitU32: lambda e, m: np.asarray(e.value, np.uint32),
            E.LitI32: lambda e, m: np.asarray(e.value, np.int32),
            E.LitF32: lambda e, m: canon(np.array([e.bits], np.uint32).view(np.float32)[0]),
            E.LitBool: lambda e, m: np.asarray(e.value, np.bool_),
            E.Var: self._var,
            E.Load: self._load,
            E.BufLen: lambda e, m: np.asarray(self._len(e.buffer), np.uint32),
            E.InvocationId: lambda e, m: self.gid[e.axis],
            E.WorkgroupId: lambda e, m: self.wid[e.axis],
            E.LocalId: lambda e, m: self.lid[e.axis],
            E.BinOpExpr: self._binop,
            E.UnOpExpr: self._unop,
            E.Select: self._select,
            E.Cast: self._cast,
            E.Fma: self._fma,
            E.Atomic: self._atomic,
            E.SubgroupBallot: self._sg_ballot,
            E.SubgroupShuffle: self._sg_shuffle,
            E.SubgroupReduce: self._sg_reduce,
            E.SubgroupLocalId: lambda e, m: (self.sg_local % E.SUBGROUP_WIDTH).astype(np.uint32),
            E.SubgroupSize: lambda e, m: np.asarray(E.SUBGROUP_WIDTH, np.uint32),
        }

    # ---- expressions
    def ev(self, e: E.Expr, m: np.ndarray) -> np.ndarray:
        try:
            f = self._eval[type(e)]
        except KeyError:
            raise EvalError(f"the reference cannot evaluate {type(e).__name__}. Fix: validate the program "
                            "first; this expression kind is not supported.") from None
        return f(e, m)

    def _var(self, e: E.Var, m) -> np.ndarray:
        try:
            return self.env[e.name]
        except KeyError:  # only an unvalidated program (run(..., validate=False)) gets here
            raise EvalError(f"variable `{e.name}` is not bound here. Fix: bind it with a let in an enclosing "
                            "scope (validate the program to find such mistakes first).") from None

    def _len(self, name: str) -> int:
        d = self.decls[name]
        return d.count if d.is_workgroup else self.mem[name].shape[0]

    def _load(self, e: E.Load, m) -> np.ndarray:
        d = self.decls[e.buffer]
        idx = np.asarray(self.ev(e.index, m))
        arr = self.mem[e.buffer]
        n = self._len(e.buffer)
        vt = d.element
        if n == 0:
            out = np.zeros(idx.shape, arr.dtype)
        else:
            inb = idx < n
            full = bool(inb.all())
            safe = idx if full else np.where(inb, idx, np.uint32(0))
            if d.is_workgroup:
                w, s = np.broadcast_arrays(self.wg_lin, safe)
                out = arr[w, s]
            else:
                out = arr[safe]
            if not full:
                out = np.where(inb, out, arr.dtype.type(0))
        if vt is BOOL:
            return np.asarray(out != 0)
        return np.asarray(out)

    def _binop(self, e: E.BinOpExpr, m) -> np.ndarray:
        info = BINOPS[e.op]
        a = np.asarray(self.ev(e.left, m))
        b = np.asarray(self.ev(e.right, m))
        t = _KIND[a.dtype]
        if info.error is not None:
            bad = info.error(a, b, t)
            if bad is not None and np.any(bad & m):
                raise EvalError(f"{info.name}: {info.error_message}. Fix: guard the divisor so active "
                                "invocations never divide by zero (or MIN by -1).")
        return np.asarray(info.numpy(a, b, t))

    def _unop(self, e: E.UnOpExpr, m) -> np.ndarray:
        a = np.asarray(self.ev(e.operand, m))
        return np.asarray(UNOPS[e.op].numpy(a, _KIND[a.dtype]))

    def _select(self, e: E.Select, m) -> np.ndarray:
        c = self.ev(e.cond, m)
        t = self.ev(e.true_val, m)  # both arms always run (atomics in either arm execute)
        f = self.ev(e.false_val, m)
        return np.asarray(np.where(np.asarray(c) != 0, t, f))

    def _cast(self, e: E.Cast, m) -> np.ndarray:
        v = np.asarray(self.ev(e.value, m))
        return np.asarray(CASTS[(_KIND[v.dtype], e.target)].numpy(v))

    def _fma(self, e: E.Fma, m) -> np.ndarray:
        a, b, c = (np.asarray(self.ev(x, m), np.float64) for x in (e.a, e.b, e.c))
        return fma_f32(a, b, c)

    def _atomic(self, e: E.Atomic, m) -> np.ndarray:
        info = ATOMICS[e.op]
        idx = np.broadcast_to(np.asarray(self.ev(e.index, m)), (self.n,))
        exp = np.broadcast_to(np.asarray(self.ev(e.expected, m)), (self.n,)) if e.expected is not None else None
        val = np.broadcast_to(np.asarray(self.ev(e.value, m)), (self.n,))
        arr = self.mem[e.buffer]
        old = np.zeros(self.n, np.uint32)
        n = arr.shape[0]
        lanes = np.nonzero(np.broadcast_to(m, (self.n,)))[0]
        self.steps += lanes.size // _budget.ATOMIC_LANES_PER_STEP  # Python work per lane; checked per iteration
        # Atomics serialise in invocation order; each lane sees the previous lane's result.
        for lane in lanes:
            i = int(idx[lane])
            if i >= n:
                continue  # out of bounds: returns 0, writes nothing
            o = arr[i]
            old[lane] = o
            arr[i] = info.numpy(o, val[lane], exp[lane] if exp is not None else 0)
        return old

    # ---- statements
    def run_list(self, nodes: tuple, m: np.ndarray, full: bool, preset: Optional[dict] = None) -> None:
        names: list[str] = []
        if preset:
            self.env.update(preset)
            names.extend(preset)
        try:
            for n in nodes:
                if self.any_returned:
                    m = m & self.alive
                    if not m.any():
                        break
                    full = bool(m.all())
                self.step(n, m, full, names)
        finally:
            for name in names:
                self.env.pop(name, None)

    def step(self, n: N.Node, m: np.ndarray, full: bool, scope: list) -> None:
        t = type(n)
        if t is N.Let:
            self.env[n.name] = self.ev(n.value, m)
            scope.append(n.name)
        elif t is N.Assign:
            v = self.ev(n.value, m)
            self.env[n.name] = v if full else np.where(m, v, self.env[n.name])
        elif t is N.Store:
            self._store(n, m)
        elif t is N.If:
            c = np.asarray(self.ev(n.cond, m)) != 0
            if c.ndim == 0:
                body = n.then if c else n.otherwise
                if body:
                    self.run_list(body, m, full)
                return
            tm = m & c
            if n.then and tm.any():
                self.run_list(n.then, tm, bool(tm.all()))
            em = m & ~c
            if n.otherwise and em.any():
                self.run_list(n.otherwise, em, bool(em.all()))
        elif t is N.Loop:
            self._loop(n, m, full)
        elif t is N.Block or t is N.Region:
            self.run_list(n.body, m, full)
        elif t is N.Barrier:
            pass  # lock-step execution: all lanes finished the previous statement already
        elif t is N.Return:
            self.alive &= ~m
            self.any_returned = True
        elif t is N.Trap:
            if m.any():
                addr = np.broadcast_to(np.asarray(self.ev(n.address, m)), (self.n,))
                lane = int(np.nonzero(m)[0][0])
                raise TrapError(f"reference dispatch trapped: address={addr[lane]}, tag={n.tag} "
                                f"(invocation {lane}). Fix: the program rejects these inputs; see the tag.")
        else:
            raise EvalError(f"the reference cannot execute {t.__name__}. Fix: validate the program first.")

    def _store(self, n: N.Store, m: np.ndarray) -> None:
        d = self.decls[n.buffer]
        idx = np.broadcast_to(np.asarray(self.ev(n.index, m)), (self.n,))
        val = np.asarray(self.ev(n.value, m))
        arr = self.mem[n.buffer]
        cnt = self._len(n.buffer)
        lanes = np.nonzero(m & (idx < cnt))[0]  # out-of-bounds stores are dropped
        if lanes.size == 0:
            return
        keys = idx[lanes].astype(np.int64)
        vals = to_storage(d.element, np.broadcast_to(val, (self.n,))[lanes])
        if d.is_workgroup:
            keys = self.wg_lin[lanes] * cnt + keys
            arr = arr.reshape(-1)
        if keys.size > 1:  # several lanes -> one element: the last lane (invocation order) wins
            rev = keys[::-1]
            uniq, first = np.unique(rev, return_index=True)
            if uniq.size != keys.size:
                sel = keys.size - 1 - first
                keys, vals = keys[sel], vals[sel]
        arr[keys] = vals

    def _loop(self, n: N.Loop, m: np.ndarray, full: bool) -> None:
        lo = np.asarray(self.ev(n.from_, m))
        hi = np.asarray(self.ev(n.to, m))  # bounds are evaluated once
        if lo.ndim == 0 and hi.ndim == 0:
            uniform = True
            a, b = int(lo), int(hi)
        else:
            lo_b, hi_b = np.broadcast_to(lo, (self.n,)), np.broadcast_to(hi, (self.n,))
            # Lanes with an empty range take no part: they must not stretch the span [a, b).
            m = m & (lo_b < hi_b)
            act_lo, act_hi = lo_b[m], hi_b[m]
            if act_lo.size == 0:
                return
            full = bool(m.all())
            a, b = int(act_lo.min()), int(act_hi.max())
            uniform = a == int(act_lo.max()) and b == int(act_hi.min())
        if a >= b:
            return
        prof = self.loop_profiles.get(id(n))
        if prof is None:
            prof = self.loop_profiles[id(n)] = _budget.body_profile(n)
        w, runs_to_end = prof
        self.loop_chain.append(n)
        try:
            if uniform and self.fast_loops_enabled and self._fast_loop(n, a, b, m, full):
                # One pass over (iterations x lanes) arrays: charged for that width (bounded work).
                self._charge(w * -(-(b - a) * self.n // _budget.LANES_PER_STEP))
                return
            w *= self.lane_blocks  # every stepped iteration is a pass over the whole grid
            if runs_to_end:  # no Return/Trap/erroring op: the longest lane range surely runs
                span = b - a if uniform else int((act_hi.astype(np.int64) - act_lo).max())
                if self.steps + span * w > self.max_steps:
                    self._charge(span * w)  # fail now rather than after the budget's worth of time
            t = a
            while t < b:
                if uniform:
                    mt, ft = m, full
                else:
                    mt = m & (lo_b <= t) & (hi_b > t)
                    if not mt.any():  # a gap no active lane iterates in: jump to the next start
                        later = act_lo[act_lo > t]
                        if later.size == 0:
                            return
                        t = int(later.min())
                        continue
                    ft = bool(mt.all())
                self.steps += w  # inline _charge: this is the per-iteration hot path
                if self.steps > self.max_steps:
                    raise _budget.budget_error(self.p.entry, self.loop_chain, self.steps, self.max_steps)
                self.run_list(n.body, mt, ft, {n.var: np.asarray(t, np.uint32)})
                if self.any_returned and not (m & self.alive).any():
                    return
                t += 1
        finally:
            self.loop_chain.pop()

    def _charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps > self.max_steps:
            raise _budget.budget_error(self.p.entry, self.loop_chain, self.steps, self.max_steps)

    # ---- accumulate fast path
    def _plan(self, n: N.Loop):
        key = id(n)
        if key in self.fast_plans:
            return self.fast_plans[key]
        plan = fast_plan(n)
        self.fast_plans[key] = plan
        return plan

    def _fast_loop(self, n: N.Loop, a: int, b: int, m: np.ndarray, full: bool) -> bool:
        plan = self._plan(n)
        if plan is None or (b - a) * self.n > FAST_LOOP_MAX_ELEMENTS:  # read here: tests patch it
            return False
        return run_fast_loop(self, n.var, plan, a, b, m, full)


# ----------------------------------------------------------------------------- public entry
def run(program: Program, inputs: Inputs, grid: Optional[Sequence[int]] = None,
        validate: bool = True, max_steps: Optional[int] = None) -> dict[str, np.ndarray]:
    """Run `program` on NumPy and return every result buffer (ReadWrite/WriteOnly), by name.

    `inputs` maps buffer name -> array or little-endian bytes for every input buffer, or is
    a list in declaration order (logical inputs only, or vyre's legacy form with a
    placeholder per output), checked under the runtime's rules (vyre_vk.ir.binding; an
    InputError for a float64 array bound to an f32 buffer, an int64 one to a u32 buffer, ...). `grid` overrides the inferred workgroup grid. `max_steps` bounds
    the loop work (vyre_vk.reference.budget): None reads $VYRE_VK_REF_MAX_STEPS, else
    DEFAULT_MAX_STEPS; 0 is unlimited. Past it a loop raises StepBudgetExceeded.

    `validate` (default True) checks the program against the IR rules first (a ValidationError
    names the first broken one). False skips that check (vyre_vk.run takes the same flag): a
    program that breaks a rule then runs with whatever meaning the evaluator gives it (e.g. one
    whose only fault is a fusion hazard runs its statements in order), or raises EvalError
    where the evaluator cannot go on (an unbound variable, an undeclared buffer).

    >>> out = run(copy_program, {"a": np.arange(4, dtype=np.uint32)})   # doctest: +SKIP
    >>> out["out"]
    array([0, 1, 2, 3], dtype=uint32)
    """
    budget = _budget.resolve_max_steps(max_steps)
    if validate:
        _validate(program)
    mem = _bind_inputs(program, inputs)
    if grid is None:
        grid = dispatch_grid(program, {k: v.shape[0] for k, v in mem.items()})
    grid = tuple(int(g) for g in grid)
    if len(grid) != 3 or min(grid) < 1:
        raise EvalError(f"grid {grid} must be three positive integers. Fix: pass e.g. (4, 1, 1).")
    with np.errstate(all="ignore"):
        mach = _Machine(program, mem, grid, budget)  # type: ignore[arg-type]
        try:
            mach.run_list(program.entry, np.ones(mach.n, dtype=bool), True)
        except KeyError as e:
            if validate:
                raise
            # unvalidated: a name the program never declared (validation would have said so)
            raise EvalError(f"the program uses `{e.args[0]}`, which it does not declare or bind. Fix: declare "
                            "it (validate the program to find such mistakes first).") from None
    out: dict[str, np.ndarray] = {}
    for b in program.buffers:
        if not b.is_result:
            continue
        arr = mem[b.name]
        if b.output_byte_range is not None:
            lo, hi = b.output_byte_range
            raw = arr.view(np.uint8)[lo:hi]
            sz = b.element.size
            arr = raw.view(arr.dtype) if lo % sz == 0 and (hi - lo) % sz == 0 else raw
        out[b.name] = arr.copy()
    return out
