"""Lower bounds on a program's GPU time: its critical path and its memory traffic.

The critical path of a stage is the longest chain of dependent operations that one
invocation must execute in order, in cycles (the sum of the operations' latencies along
the chain). Every invocation runs concurrently at best, so no schedule of the same
arithmetic in the same order can finish a stage sooner; stages run one after another, so
their chains add up. The memory bound is the bytes that must move (every buffer the program
reads, read once; every result it writes, written once) over the device's bandwidth. The larger
of the two is the bound; ``measured / bound`` is what is left to win.

The model, kept simple and conservative (it should under-, never over-estimate):

- A value's depth is the longest chain from the invocation's start (or, inside a loop, from
  a loop-carried variable) to it: max over its operands plus its own latency (:class:`Model`).
  Literals, ids and buffer lengths cost nothing; stores cost nothing, but a later load of a
  written buffer depends on the store (per buffer, not per element) and hits the cache.
- A loop of T iterations (T from constant bounds; an unknown count is counted as one
  iteration) costs its body once, plus (T - 1) times the heaviest recurrence a variable
  (or written buffer) carries from one iteration to the next: ``acc = acc + x[i]`` adds one
  add per iteration, the loads do not (they are issued ahead). The loop counter itself is
  not a recurrence (it can be unrolled).
- Both arms of an ``if`` are taken (the longer one counts); what a branch (or a loop body)
  assigns depends on its condition (the loop's bounds). A loop whose work sits behind a flag
  it sets to a constant (``if found == 0 { ...; found = 1 }``) is counted once. A barrier
  adds its latency to every buffer written before it.
- Latencies are per device class, in cycles at the model's clock, for the exact lowering:
  f32 division is Markstein's fma sequence on the H200 (its fma probe passes) and a 25-step
  integer long division elsewhere, square root the digit-by-digit root (vyre_vk/lower/ieee.py),
  exp and tanh float-float sequences (vyre_vk/lower/ffmath.py). See :data:`MODELS`.

Example (a loop of 100 dependent adds, each 1 cycle in this toy model)::

    >>> from vyre_vk.ir import BufferDecl, DataType, Expr, Node, Program
    >>> acc = Expr.var("acc")
    >>> p = Program.wrapped([BufferDecl.read("x", 0, DataType.F32).with_count(100),
    ...                      BufferDecl.output("out", 1, DataType.F32).with_count(1)], (1, 1, 1),
    ...     [Node.let_bind("acc", Expr.f32(0.0)),
    ...      Node.loop_for("j", Expr.u32(0), Expr.u32(100),
    ...                    [Node.assign("acc", Expr.add(acc, Expr.load("x", Expr.var("j"))))]),
    ...      Node.store("out", Expr.u32(0), acc)])
    >>> stage_cycles(p, UNIT)
    100.0
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Optional

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BinOp, UnOp
from ..ir.program import Program
from ..ir.types import DataType
from ..ir.walk import expr_type, node_all_exprs, walk_expr, walk_nodes

Path = dict  # source -> cycles of the longest chain from it; "" is the invocation's start
START = ""


@dataclass(frozen=True)
class Model:
    """Per-device latencies (cycles), clock (GHz) and memory bandwidth (GB/s)."""
    name: str
    clock_ghz: float
    bandwidth_gbps: float
    alu: float = 4.0           # integer add/logic/shift/compare, select, f32 add/sub/mul/fma/min/max
    int_mul: float = 4.0       # IMAD
    int_div: float = 40.0      # u32/i32 / and % by a variable: a ~20-instruction sequence
    int_div_const: float = 8.0  # by a literal: multiply-high and shift
    cvt: float = 8.0           # int <-> float conversions
    fdiv: float = 340.0        # exact f32 divide: 25 steps of compare/subtract/shift + rounding (ieee.py)
    fsqrt: float = 420.0       # exact f32 sqrt: 25 steps of digit-by-digit root (ieee.py)
    exp: float = 170.0         # float-float exp: ~35 dependent f32 ops + a table load (ffmath.py)
    tanh: float = 520.0        # exp(2|x|) then (e - 1) / (e + 1) with a correction step
    transcendental: float = 40.0  # other unary math: the driver's builtin (MUFU + fix-up)
    load_global: float = 480.0  # a load that misses to HBM
    load_shared: float = 30.0   # workgroup memory
    load_cached: float = 40.0   # a storage buffer this invocation wrote before: an L1 hit at best
    atomic: float = 500.0
    subgroup: float = 24.0      # shuffle / reduce step
    barrier: float = 20.0
    call: float = 4.0           # an opaque Call, per call


#: H200 (Hopper): ~1.98 GHz boost clock; 4.8 TB/s HBM3e. Dependent-issue latencies from
#: published Hopper micro-benchmarks (4 cycles for FADD/FFMA/IADD3/IMAD, ~480 for an HBM load,
#: ~30 shared memory); the exact-math sequences are counted from their GLSL (the loop bodies'
#: dependent integer ops x 4 cycles).
#: Division: the fused-fma path (ieee.FUSED), the correctly rounded 1/b off the dividend's chain,
#: then x*y, two fmas, the sign's or and the window's select: 5 dependent ops from the dividend
#: (a lower bound where the divisor is on the chain, as it should be for a bound).
NVIDIA_H200 = Model("nvidia (H200)", clock_ghz=1.98, bandwidth_gbps=4800.0, fdiv=20.0)
#: lavapipe (llvmpipe on the CPU): nominal figures only, 3 GHz and 20 GB/s of DRAM bandwidth
#: per socket with the same cycle counts; a CPU runs few invocations at once, so this is a weak bound.
LLVMPIPE = replace(NVIDIA_H200, name="llvmpipe (nominal)", clock_ghz=3.0, bandwidth_gbps=20.0,
                   load_global=300.0, load_shared=4.0, load_cached=4.0, barrier=100.0, fdiv=Model.fdiv)
#: Any device: the H200's figures with the integer division (no fused fma assumed).
DEFAULT = replace(NVIDIA_H200, name="any device (H200 figures, integer division)", fdiv=Model.fdiv)
MODELS: dict[str, Model] = {"nvidia": NVIDIA_H200, "llvmpipe": LLVMPIPE, "default": DEFAULT}
#: Every operation 1 cycle, memory and barriers free: chains counted in operations (tests, doctests).
UNIT = Model("unit", 1.0, 1.0, alu=1, int_mul=1, int_div=1, int_div_const=1, cvt=1, fdiv=1, fsqrt=1, exp=1, tanh=1,
             transcendental=1, load_global=0, load_shared=0, load_cached=0, atomic=1, subgroup=1, barrier=0, call=1)


def model_for(device_class: str) -> Model:
    """The model of a device class (vyre_vk.opt.dispatch.device_class); unknown: the H200's."""
    return MODELS.get(device_class, MODELS["default"])


def _join(*paths: Path) -> Path:
    out: Path = {}
    for p in paths:
        for k, v in p.items():
            if v > out.get(k, float("-inf")):
                out[k] = v
    return out


def _plus(p: Path, c: float) -> Path:
    return {k: v + c for k, v in p.items()} if c else p


_ZERO: Path = {START: 0.0}
_INT_DIV = (BinOp.Div, BinOp.Mod)
_UN_COST = {UnOp.Exp: "exp", UnOp.Exp2: "exp", UnOp.Tanh: "tanh", UnOp.Sqrt: "fsqrt", UnOp.Reciprocal: "fdiv"}
_CHEAP_UN = (UnOp.Negate, UnOp.BitNot, UnOp.LogicalNot, UnOp.Abs, UnOp.Floor, UnOp.Ceil, UnOp.Round, UnOp.Trunc,
             UnOp.Sign, UnOp.IsNan, UnOp.IsInf, UnOp.IsFinite, UnOp.Popcount, UnOp.Clz, UnOp.Ctz,
             UnOp.ReverseBits, UnOp.Unpack4Low, UnOp.Unpack4High, UnOp.Unpack8Low, UnOp.Unpack8High)


@dataclass
class _Walker:
    """One pass over a stage's statements, tracking each variable's (and buffer's) Path."""
    program: Program
    model: Model
    counts: Mapping[str, int]
    env: dict = field(default_factory=dict)      # var or "@buffer" -> Path
    types: dict = field(default_factory=dict)    # var -> DataType
    const: dict = field(default_factory=dict)    # var -> int, where known
    control: Path = field(default_factory=lambda: dict(_ZERO))
    notes: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bufs = {b.name: b for b in self.program.buffers}

    # ---- expressions
    def expr(self, e: E.Expr) -> Path:
        m = self.model
        if isinstance(e, E.Var):  # inside a branch or loop, nothing starts before its condition is known
            return _join(self.env.get(e.name, _ZERO), self.control)
        if isinstance(e, E.Load):
            b, key = self.bufs.get(e.buffer), "@" + e.buffer
            # written earlier by this invocation: the line is in cache, not in HBM
            lat = (m.load_shared if b is not None and b.is_workgroup else m.load_cached if key in self.env
                   else m.load_global)
            return _plus(_join(self.expr(e.index), self.env.get(key, _ZERO)), lat)
        if isinstance(e, E.BinOpExpr):
            return _plus(_join(self.expr(e.left), self.expr(e.right)), self._bin_cost(e))
        if isinstance(e, E.UnOpExpr):
            return _plus(self.expr(e.operand), self._un_cost(e))
        if isinstance(e, E.Select):
            return _plus(_join(self.expr(e.cond), self.expr(e.true_val), self.expr(e.false_val)), m.alu)
        if isinstance(e, E.Cast):
            return _plus(self.expr(e.value), m.cvt)
        if isinstance(e, E.Fma):
            return _plus(_join(self.expr(e.a), self.expr(e.b), self.expr(e.c)), m.alu)
        if isinstance(e, E.Call):
            return _plus(_join(_ZERO, *(self.expr(a) for a in e.args)), m.call)
        if isinstance(e, E.Atomic):
            key = "@" + e.buffer
            parts = [self.expr(e.index), self.expr(e.value), self.env.get(key, _ZERO), self.control]
            if e.expected is not None:
                parts.append(self.expr(e.expected))
            out = _plus(_join(*parts), m.atomic)
            self.env[key] = _join(self.env.get(key, {}), out)
            return out
        if isinstance(e, (E.SubgroupBallot, E.SubgroupShuffle, E.SubgroupReduce)):
            kids = [getattr(e, f) for f in e._field_names if isinstance(getattr(e, f), E.Expr)]
            return _plus(_join(*(self.expr(k) for k in kids)), m.subgroup)
        return self.control  # literals, ids, buffer lengths, subgroup id/size

    def _type(self, e: E.Expr) -> Optional[DataType]:
        return expr_type(e, self.types, self.bufs)

    def _bin_cost(self, e: E.BinOpExpr) -> float:
        m = self.model
        f32 = self._type(e.left) is DataType.F32
        if e.op is BinOp.Div and f32:
            return m.fdiv
        if e.op in _INT_DIV and not f32:
            return m.int_div_const if isinstance(e.right, (E.LitU32, E.LitI32)) else m.int_div
        if e.op in (BinOp.Mul, BinOp.MulHigh, BinOp.SaturatingMul) and not f32:
            return m.int_mul
        return m.alu

    def _un_cost(self, e: E.UnOpExpr) -> float:
        m = self.model
        if e.op in _UN_COST:
            return getattr(m, _UN_COST[e.op])
        if e.op is UnOp.InverseSqrt:
            return m.fsqrt + m.fdiv
        return m.alu if e.op in _CHEAP_UN else m.transcendental

    # ---- constants (loop trip counts)
    def value(self, e: E.Expr) -> Optional[int]:
        if isinstance(e, (E.LitU32, E.LitI32)):
            return int(e.value)
        if isinstance(e, E.Var):
            return self.const.get(e.name)
        if isinstance(e, E.BufLen):
            b = self.bufs.get(e.buffer)
            n = self.counts.get(e.buffer, b.count if b is not None else 0)
            return n or None
        if isinstance(e, E.BinOpExpr):
            a, b = self.value(e.left), self.value(e.right)
            if a is None or b is None:
                return None
            fn = {BinOp.Add: lambda: a + b, BinOp.Sub: lambda: a - b, BinOp.Mul: lambda: a * b,
                  BinOp.Div: lambda: a // b if b else None, BinOp.Mod: lambda: a % b if b else None,
                  BinOp.Min: lambda: min(a, b), BinOp.Max: lambda: max(a, b), BinOp.Shl: lambda: a << (b & 31),
                  BinOp.Shr: lambda: a >> (b & 31), BinOp.WrappingAdd: lambda: a + b,
                  BinOp.WrappingSub: lambda: a - b}.get(e.op)
            return fn() if fn is not None else None
        return None

    # ---- statements
    def stmts(self, nodes) -> None:
        for n in nodes:
            self.stmt(n)

    def stmt(self, n: N.Node) -> None:
        if isinstance(n, N.Let):
            self.env[n.name] = _join(self.expr(n.value), self.control)
            self.types[n.name] = self._type(n.value)
            c = self.value(n.value)
            if c is None:
                self.const.pop(n.name, None)
            else:
                self.const[n.name] = c
        elif isinstance(n, N.Assign):
            self.env[n.name] = _join(self.expr(n.value), self.control)
            self.const.pop(n.name, None)
        elif isinstance(n, N.Store):
            key = "@" + n.buffer
            self.env[key] = _join(self.env.get(key, {}), self.expr(n.index), self.expr(n.value), self.control)
        elif isinstance(n, N.If):
            self._if(n)
        elif isinstance(n, N.Loop):
            self._loop(n)
        elif isinstance(n, (N.Block, N.Region)):
            self.stmts(n.body)
        elif isinstance(n, N.Barrier):
            for k in [k for k in self.env if k.startswith("@")]:
                self.env[k] = _plus(self.env[k], self.model.barrier)
        elif isinstance(n, N.Trap):
            self.expr(n.address)
        # Return, async copies, indirect dispatch: no chain of their own

    def _if(self, n: N.If) -> None:
        cond = self.expr(n.cond)
        saved_env, saved_control = dict(self.env), self.control
        self.control = _join(saved_control, cond)
        self.stmts(n.then)
        then_env = self.env
        self.env = dict(saved_env)
        self.stmts(n.otherwise)
        else_env = self.env
        self.control = saved_control
        self.env = {k: _join(then_env.get(k, {}), else_env.get(k, {})) for k in set(then_env) | set(else_env)}

    def _loop(self, n: N.Loop) -> None:
        lo, hi = self.value(n.from_), self.value(n.to)
        if lo is None or hi is None or n.var == "__forever__":  # forever: left by a Return, count unknown
            trips = 1
            self.notes.append(f"loop {n.var}: trip count not constant, counted once")
        else:
            trips = max(hi - lo, 0)
        body_nodes = list(walk_nodes(n.body))
        written = {x.name for x in body_nodes if isinstance(x, N.Assign)}
        written |= {"@" + x.buffer for x in body_nodes if isinstance(x, N.Store)}
        written |= {"@" + x.buffer for x in _atomics(n.body)}
        carried = sorted(k for k in written if k in self.env or k.startswith("@"))
        flag = _early_exit_flag(n.body, carried)
        if flag is not None and trips > 1:
            trips = 1
            self.notes.append(f"loop {n.var}: its work stops behind the flag `{flag}`, counted once")
        for k in written:
            self.const.pop(k, None)
        outer = dict(self.env)
        entry = {k: outer.get(k, {}) for k in carried}
        # One iteration, each carried value starting from its own marker source "^name".
        for k in carried:
            self.env[k] = {"^" + k: 0.0}
        bounds = _join(self.expr(n.from_), self.expr(n.to), self.control)
        self.env[n.var] = bounds
        self.types[n.var] = DataType.U32
        saved_control, self.control = self.control, bounds  # the body runs once the bounds are known
        self.stmts(n.body)
        self.control = saved_control
        after = self.env
        if trips == 0:
            self.env = outer
            return
        # w[u][v]: longest chain from u at an iteration's start to v at its end.
        w = {u: {v: after.get(v, {}).get("^" + u) for v in carried} for u in carried}
        rate = _cycle_rates(carried, w)
        reach = _reach(carried, w)
        self.env = outer
        for k in written:  # the body's own Lets are scoped to it
            if k not in after:
                continue
            own = {s: c for s, c in after[k].items() if not s.startswith("^")}
            parts = [own] + [_plus(entry[u], c) for u in carried
                             if (c := after[k].get("^" + u)) is not None and entry[u]]
            gain = max((rate[u] for u in carried if rate[u] > 0 and (k in reach[u] or k == u)), default=0.0)
            self.env[k] = _plus(_join(*parts), (trips - 1) * gain)

    # ---- result
    def finish(self) -> float:
        tails = [max(p.values()) for k, p in self.env.items() if k.startswith("@") and p]
        return float(max(tails, default=0.0))


def _early_exit_flag(body, carried: list) -> Optional[str]:
    """A carried variable that the loop sets to a literal and tests in an ``if`` around its
    work (``if !found { ...; found = 1 }``): the iterations after it is set do nothing."""
    consts = {x.name for x in walk_nodes(body) if isinstance(x, N.Assign) and x.name in carried
              and isinstance(x.value, (E.LitU32, E.LitI32, E.LitBool))}
    for n in body:
        if isinstance(n, N.If):
            hit = consts & {x.name for x in walk_expr(n.cond) if isinstance(x, E.Var)}
            if hit:
                return min(hit)
    return None


def _atomics(nodes):
    return [x for x in node_all_exprs(nodes) if isinstance(x, E.Atomic)]


def _cycle_rates(carried: list, w: dict) -> dict:
    """Per carried value, the heaviest mean cycles per iteration of a recurrence through it:
    max over k <= len(carried) of (the longest k-iteration chain from it back to it) / k."""
    nodes = carried[:8]  # longer cross-coupled recurrences are rare; self-loops are always found
    rate = {u: (w[u][u] if w[u][u] is not None else 0.0) for u in carried}
    power = {u: {v: w[u][v] for v in nodes} for u in nodes}
    for k in range(2, len(nodes) + 1):
        power = {u: {v: max((power[u][x] + w[x][v] for x in nodes
                             if power[u][x] is not None and w[x][v] is not None), default=None)
                     for v in nodes} for u in nodes}
        for u in nodes:
            if power[u][u] is not None:
                rate[u] = max(rate[u], power[u][u] / k)
    return rate


def _reach(carried: list, w: dict) -> dict:
    """Per carried value, every value (carried or not) whose chain it starts, over any iterations."""
    reach = {u: {v for v in carried if w[u][v] is not None} for u in carried}
    changed = True
    while changed:
        changed = False
        for u in carried:
            more = set().union(*(reach[v] for v in reach[u])) - reach[u] if reach[u] else set()
            if more:
                reach[u] |= more
                changed = True
    return reach


def stage_cycles(program: Program, model: Model = NVIDIA_H200, counts: Optional[Mapping[str, int]] = None,
                 notes: Optional[list] = None) -> float:
    """Cycles of the longest dependent chain one invocation of `program` runs (no optimiser:
    the program as given). `counts` gives element counts of runtime-sized buffers."""
    w = _Walker(program, model, dict(counts or {}))
    w.stmts(program.entry)
    if notes is not None:
        notes.extend(w.notes)
    return w.finish()


@dataclass(frozen=True)
class Bound:
    """What a program cannot beat on a device class: see the module docstring."""
    model: Model
    stage_cycles: tuple
    bytes_moved: int
    notes: tuple = ()

    @property
    def critical_path_s(self) -> float:
        return sum(self.stage_cycles) / (self.model.clock_ghz * 1e9)

    @property
    def memory_s(self) -> float:
        return self.bytes_moved / (self.model.bandwidth_gbps * 1e9)

    @property
    def bound_s(self) -> float:
        return max(self.critical_path_s, self.memory_s)


def bytes_moved(program: Program, counts: Optional[Mapping[str, int]] = None) -> int:
    """Bytes that must move: every buffer the program loads from read once, every result it
    stores to written once. A gathered buffer (loaded at an index read from memory: an embedding
    table) is read at most once per load site per invocation (the largest result's elements)."""
    counts = counts or {}
    loads: dict = {}
    gathered: set = set()
    stored: set = set()
    for x in node_all_exprs(program.entry):
        if isinstance(x, E.Load):
            loads[x.buffer] = loads.get(x.buffer, 0) + 1
            if any(isinstance(y, E.Load) for y in walk_expr(x.index)):
                gathered.add(x.buffer)
        elif isinstance(x, E.Atomic):
            loads[x.buffer] = loads.get(x.buffer, 0) + 1
            stored.add(x.buffer)
    stored |= {n.buffer for n in walk_nodes(program.entry) if isinstance(n, N.Store)}
    invocations = max((counts.get(b.name, b.count) for b in program.buffers if b.is_result), default=0)
    total = 0
    for b in program.buffers:
        if b.is_workgroup:
            continue
        n = counts.get(b.name, b.count)
        reads = min(n, loads[b.name] * invocations) if b.name in gathered else n if b.name in loads else 0
        total += (reads + (n if b.is_result and b.name in stored else 0)) * b.element.size
    return total


def program_bound(program: Program, device_class: str = "nvidia", counts: Optional[Mapping[str, int]] = None,
                  optimize: bool = True, limits=None) -> Bound:
    """The bound of `program` as dispatched for `device_class` (and a device's `limits`, as
    ``Device.compile`` passes them): its stages from the compile front door
    (vyre_vk.compile.compile_program), their chains summed; bytes of the program's own buffers."""
    from ..compile import Options, compile_program
    from ..compile.stage import DeviceLimits

    options = Options(passes=optimize, device_class=device_class, limits=limits or DeviceLimits())
    compiled = compile_program(program, options)
    model = model_for(device_class)
    counts = {**{s.name: s.count for s in compiled.scratch}, **(counts or {})}
    notes: list = []
    cycles = tuple(stage_cycles(st.program, model, counts, notes) for st in compiled.stages)
    return Bound(model, cycles, bytes_moved(program, counts), tuple(dict.fromkeys(notes)))


__all__ = ["Model", "MODELS", "NVIDIA_H200", "LLVMPIPE", "UNIT", "Bound", "model_for", "stage_cycles",
           "bytes_moved", "program_bound"]
