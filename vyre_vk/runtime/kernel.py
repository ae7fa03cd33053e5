"""Compiled programs on one device: kp tensors per buffer, one sequence recorded per size signature.

A :class:`Kernel` runs one or more *stages* (compiled programs) over buffers shared by
name, in one submission: upload, each stage's dispatch (with a compute barrier exactly
where a stage touches what an earlier one wrote), download. A plain program is one
stage; an optimised program (vyre_vk.opt) may be several, plus device-only scratch.

Example:
    >>> from vyre_vk.runtime import Device
    >>> from vyre_vk.ops import get
    >>> with Device() as dev:
    ...     kernel = dev.compile(get("vyre-libs::nn::mlp_backward").build())
    ...     out = kernel(x=x, w1=w1, b1=b1, w2=w2, grad_out=g)    # doctest: +SKIP
    ...     out["grad_x"]
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from vyre_vk.compile import (MAX_BINDING_SLOTS, MAX_STORAGE_BUFFER_BYTES, Compiled, Stage, check_bindings,
                             record_ops)
from vyre_vk.compile.stage import check_storage_size
from vyre_vk.ir import DataType
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir.coverage import rewrites
from vyre_vk.ir.optable import canon
from vyre_vk.ir.walk import node_bodies, node_exprs, walk_expr
from vyre_vk.runtime import kp_bridge
from vyre_vk.runtime.buffer import DeviceArray
from vyre_vk.errors import LaunchError, VyreError
from vyre_vk.runtime.inputs import Binder, Inputs, InputError

if TYPE_CHECKING:
    from vyre_vk.lower import Lowered
    from vyre_vk.runtime.device import Device


#: Size signatures whose grids a kernel remembers (a cache, so bounded).
MAX_GRID_SIGNATURES = 64


def buffer_accesses(nodes) -> Optional[int]:
    """Loads, stores and atomics one invocation can execute in `nodes` (each loop counted at its
    literal trip count), or None where a loop's bounds are not literals.

    >>> from vyre_vk.ir import expr as E, node as N
    >>> body = (N.Loop("k", E.LitU32(0), E.LitU32(4), (N.Store("o", E.Var("k"), E.Load("a", E.Var("k"))),)),)
    >>> buffer_accesses(body)
    8
    >>> buffer_accesses((N.Loop("k", E.LitU32(0), E.BufLen("a"), ()),)) is None
    True
    """
    total = 0
    for n in nodes:
        here = sum(isinstance(x, (E.Load, E.Atomic)) for e in node_exprs(n) for x in walk_expr(e))
        here += isinstance(n, N.Store)
        inner = 0
        for body in node_bodies(n):
            got = buffer_accesses(body)
            if got is None:
                return None
            inner += got
        if isinstance(n, N.Loop):
            if not (isinstance(n.from_, E.LitU32) and isinstance(n.to, E.LitU32)):
                return None
            inner *= max(0, n.to.value - n.from_.value)
        total += here + inner
    return total


class KernelTrapError(VyreError, RuntimeError):
    """An invocation trapped (i32 division by zero or MIN / -1, or a ``Trap`` node).

    The reference raises ``EvalError`` / ``TrapError`` on the same programs and inputs.
    Attributes: ``stage``, ``code``, ``reason``, ``invocation`` (gl_GlobalInvocationID.x of
    the stage that trapped), ``address``.
    """

    def __init__(self, stage: int, code: int, reason: str, invocation: int, address: int, where: str) -> None:
        self.stage, self.code, self.reason, self.invocation, self.address = stage, code, reason, invocation, address
        super().__init__(f"stage {stage} trapped: {reason} (code {code}) at {where}, address {address}. "
                         "Fix: guard the operation so active invocations never reach it "
                         "(the reference raises EvalError on these inputs too).")


@dataclass
class KernelStats:
    runs: int = 0
    plans_built: int = 0  # kp.Algorithms + tensors + recorded sequence, per size signature


@dataclass
class _Plan:
    """Everything bound for one set of buffer sizes and grids."""
    tensors: dict[str, Any]
    algorithms: list
    sequence: Any
    uploads: list[str]
    downloads: list[str]
    traps: list                       # (stage index, trap tensor)
    ops: list
    resident: dict[str, DeviceArray]  # owned by the caller; kept alive, never destroyed here
    grids: list = field(default_factory=list)  # kept alive: plans are keyed by id(grids)
    # Mapped host views, made once: kp's data() builds a new array on every call.
    staging: dict[str, np.ndarray] = field(default_factory=dict)
    results: dict[str, np.ndarray] = field(default_factory=dict)
    trap_words: list = field(default_factory=list)
    host: bool = False  # host-visible tensors used in place (Device.host_tensor_bytes)
    key: tuple = ()
    live: bool = True  # False once destroyed: a kept rerun closure checks this, not the plan cache

    def destroy(self) -> None:
        self.live = False
        owned = [t for n, t in self.tensors.items() if n not in self.resident]
        for obj in (self.sequence, *self.algorithms, *owned):
            obj.destroy()


class Kernel:
    """A program (one or more stages) compiled for one device. Call it with arrays, get arrays back.

    The first run for a given set of buffer sizes builds the tensors, one kp Algorithm
    (pipeline) per stage and a sequence; later runs with the same sizes write the
    staging buffers and replay it. Inputs given as :class:`DeviceArray` stay on the
    device and are not uploaded. Up to ``max_plans`` size signatures are kept.
    """

    def __init__(self, device: "Device", compiled: Compiled, *, max_plans: int = 8) -> None:
        self.device = device
        self.compiled = compiled
        self.program = compiled.program
        self.stages = list(compiled.stages)
        self.scratch = tuple(compiled.scratch)
        self.reports = list(compiled.reports)
        self.ops = list(compiled.ops)
        self.max_plans = max_plans
        self.stats = KernelStats()
        self._plans: "OrderedDict[tuple, _Plan]" = OrderedDict()
        self._repeat: Optional[Callable] = None  # the last run's plan replayed for like inputs (run)
        self._grids: dict[tuple, list[tuple[int, int, int]]] = {}
        self._lock = threading.Lock()
        self._bind = Binder(self.program.buffers)
        self.bindings = tuple(self._bind.bound)
        self._names = [b.name for b in self.bindings]
        self._results = [b for b in self.bindings if b.is_result]
        # The reference canonicalises every f32 it reads; a read_write buffer the program
        # leaves alone must come back canonical too, so those are canonicalised on upload.
        self._canon = {b.name for b in self._results if b.is_input and b.element is DataType.F32}
        self._itemsizes = [(b, b.element.size) for b in self.bindings]
        # U8/I8 buffers: uint8/int8 host arrays over packed word tensors (kp_bridge.byte_view)
        self._byte_dtypes = {b.name: np.dtype(b.element.numpy) for b in self.bindings if b.element.is_byte}
        self._max_bytes = min(MAX_STORAGE_BUFFER_BYTES, device.limits.storage_buffer_bytes)
        self._ranged = [b for b in self._results if b.output_byte_range is not None]
        # buffer accesses one invocation of each stage can make (None: a loop with a run-time bound)
        self._accesses = [buffer_accesses(st.program.entry) for st in self.stages]
        # No storage buffer, scratch or trap words at all: a dispatch could change nothing visible.
        self._nothing_bound = not self._names and not self.scratch and all(
            st.lowered.trap_binding is None for st in self.stages)
        for st in self.stages:  # workgroup and shared-memory limits: checked by compile (compile.stage.check_limits)
            if (st.lowered.trap_binding or 0) >= MAX_BINDING_SLOTS:
                raise LaunchError(f"binding {st.lowered.trap_binding} (trap words) is over the runtime's "
                                  f"{MAX_BINDING_SLOTS} slots. Fix: number storage buffers densely from 0.")

    def explain(self) -> str:
        """Which optimiser passes changed the program and why, and the stages it runs."""
        return self.compiled.explain()

    # The single-stage view (what `vyre-vk emit` and tests look at).
    @property
    def lowered(self) -> "Lowered":
        return self.stages[-1].lowered

    @property
    def spirv(self) -> bytes:
        return self.stages[-1].spirv

    @property
    def glsl(self) -> str:
        return "\n".join(s.lowered.glsl for s in self.stages)

    def _check_grid(self, g: Any) -> tuple[int, int, int]:
        ok = isinstance(g, (tuple, list)) and len(g) == 3 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= 1 for v in g)
        if not ok:
            raise LaunchError(f"grid {g!r:.80} must be three positive integers. Fix: pass e.g. (4, 1, 1).")
        g = tuple(int(v) for v in g)
        limit = tuple(self.device.properties["max_work_group_count"])
        if any(a > m for a, m in zip(g, limit)):
            raise LaunchError(
                f"grid {g} exceeds {self.device.name}'s maxComputeWorkGroupCount {limit}. "
                "Fix: split the work, or use a 2-D/3-D workgroup shape so vyre spreads the grid.")
        return g  # type: ignore[return-value]

    def grids_for(self, arrays: dict, grid: Optional[Sequence[int]] = None) -> list[tuple[int, int, int]]:
        """Each stage's workgroup grid for these arrays, as vyre infers it (or ``grid``)."""
        if grid is not None:
            if self.compiled.optimized:
                raise LaunchError("a grid override is in units of the program as written, which this "
                                  "optimised kernel does not dispatch. Fix: compile with optimize=False.")
            g = self._check_grid(tuple(grid) if isinstance(grid, (tuple, list)) else grid)
            if len(self._grids) >= MAX_GRID_SIGNATURES:
                self._grids.clear()
            return self._grids.setdefault(("override", g), [g])  # one list object per grid: plans key on it
        sizes = tuple([arrays[n].size for n in self._names])
        grids = self._grids.get(sizes)
        if grids is None:  # the grid rule walks the stage programs: once per size signature
            grids = [self._check_grid(g) for g in self.compiled.grids({n: arrays[n].size for n in self._names})]
            if len(self._grids) >= MAX_GRID_SIGNATURES:  # plans keep their own grids alive
                self._grids.clear()
            self._grids[sizes] = grids
        return grids

    def _plan(self, arrays: dict, grids: list) -> _Plan:
        # Sizes, plus the identity of resident arrays (their tensors are bound into the plan);
        # grids lists are interned in self._grids, so their id names the grid.
        key = (id(grids), *[v.size if type(v) is np.ndarray else (v.size, id(v)) for v in arrays.values()])
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
            return plan
        from vyre_vk.lower import TRAP_WORDS

        resident = {n: v for n, v in arrays.items() if isinstance(v, DeviceArray)}
        mgr = self.device.manager
        sizes = {n: arrays[n].size for n in self._names}  # elements: bytes for a U8/I8 buffer
        host = not resident and self._host_ok(arrays, grids)
        fell_back: list = []

        downloads = [b.name for b in self._results]

        def new_tensor(data: np.ndarray, write_only: bool = False):
            if host and not fell_back:
                try:
                    return kp_bridge.tensor(mgr, data, True, write_only)
                except RuntimeError:
                    # a driver without a usable host-visible storage memory type: the rest of this plan
                    # and the device's later runs take the staging path (the same results, the copies'
                    # latency); the sync ops below cover both kinds, kp skipping host tensors in them
                    self.device.host_tensor_bytes = 0
                    fell_back.append(True)
            return kp_bridge.tensor(mgr, data, False)

        # inputs and scratch the host never reads back: written by the host, read by shaders
        tensors = {n: resident[n].tensor_for(self.device) if n in resident else
                   new_tensor(arrays[n], n not in downloads) for n in self._names}
        for s in self.scratch:
            tensors[s.name] = new_tensor(np.zeros(max(s.count, 1), dtype=s.element.numpy), True)
            sizes[s.name] = max(s.count, 1)
        algorithms, traps = [], []
        for k, (st, g) in enumerate(zip(self.stages, grids)):
            by_binding = {b.binding: tensors[b.name] for b in st.lowered.bindings}
            if st.lowered.trap_binding is not None:
                trap = tensors[f"\0trap-{k}"] = new_tensor(np.zeros(TRAP_WORDS, np.uint32))
                by_binding[st.lowered.trap_binding] = trap
                traps.append((k, trap))
            # kp binds tensor k at binding k, so binding gaps (vyre's rms_norm_linear uses
            # 0,1,2,4) get a 1-word filler tensor in every unused slot.
            for slot in range(max(by_binding, default=-1) + 1):
                if slot not in by_binding:
                    by_binding[slot] = tensors[f"\0unused-{k}-{slot}"] = new_tensor(np.zeros(1, np.uint32))
            algorithms.append(kp_bridge.algorithm(mgr, [by_binding[s] for s in sorted(by_binding)], st.spirv, g,
                                                  [sizes[n] for n in st.lowered.byte_lengths]))
        # results a stage rewrites in full every run start unseen: neither zeroed nor uploaded
        rewritten = self._rewritten(sizes, grids)
        uploads = [n for n in self._names if n not in resident and n not in rewritten] + [
            f"\0trap-{k}" for k, _ in traps]
        if host:  # no staging copy restores the scratch: the host zeroes it before each run
            uploads += [s.name for s in self.scratch]
        seq = mgr.sequence()
        fresh = [t for n, t in tensors.items() if n not in resident and n not in rewritten]  # scratch, fillers: zeroed
        staged = not host or fell_back
        if fresh and staged:  # every buffer resident (Device.array): kp refuses an empty sync
            seq.record(kp_bridge.sync_device(fresh)).record(kp_bridge.transfer_barrier(fresh))
        # the dispatches record no barriers of their own: the copies above have theirs, the host's
        # writes are visible to a later submission, the stages' order is self.ops' barriers
        for op, arg in self.ops:
            if op == "barrier":
                seq.record(kp_bridge.compute_barrier([tensors[n] for n in arg]))
            else:
                seq.record(kp_bridge.dispatch(algorithms[arg], ordered=True))
        if downloads or traps:
            back = [tensors[n] for n in downloads] + [t for _, t in traps]
            if staged:
                seq.record(kp_bridge.sync_local(back))
            if host:
                seq.record(kp_bridge.host_read_barrier(back))
        plan = _Plan(tensors, algorithms, seq, uploads, downloads, traps, list(self.ops), resident, grids,
                     staging={n: self._host_view(tensors[n], n, sizes) for n in uploads},
                     results={n: self._host_view(tensors[n], n, sizes) for n in downloads},
                     trap_words=[(k, t.data()) for k, t in traps], host=host and not fell_back, key=key)
        self._plans[key] = plan
        self.stats.plans_built += 1
        while len(self._plans) > self.max_plans:
            self._plans.popitem(last=False)[1].destroy()
        return plan

    def _rewritten(self, sizes: dict, grids: list) -> set[str]:
        """Result buffers (outputs only, 4-byte elements, whole) that the one stage binding them stores
        in full every run without reading them (vyre_vk.ir.coverage): their starting zeros are never seen."""
        out = set()
        for b in self._results:
            if b.is_input or b.element.is_byte or b.output_byte_range is not None:
                continue
            users = [k for k, st in enumerate(self.stages) if any(x.name == b.name for x in st.program.buffers)]
            if len(users) == 1 and rewrites(self.stages[users[0]].program, b.name, grids[users[0]], sizes):
                out.add(b.name)
        return out

    def _host_ok(self, arrays: dict, grids: list) -> bool:
        """Whether a plan for `arrays` may use host-visible tensors in place: every tensor together
        fits ``device.host_tensor_bytes``, and the stages' 4-byte accesses (at most) fit 4x that in
        bytes, so no shader walks host memory over the bus many times."""
        limit = self.device.host_tensor_bytes
        if not limit or None in self._accesses:
            return False
        size = sum(arrays[n].nbytes for n in self._names) + sum(max(s.count, 1) * s.element.size
                                                                 for s in self.scratch)
        words = sum(a * math.prod(g) * math.prod(st.program.workgroup_size)
                    for a, g, st in zip(self._accesses, grids, self.stages))
        return size <= limit and words <= limit

    def _host_view(self, tensor: Any, name: str, sizes: dict) -> np.ndarray:
        """The tensor's mapped memory as the buffer's host array (a byte buffer's bytes, not its words)."""
        words = tensor.data()
        dt = self._byte_dtypes.get(name)
        return words if dt is None else kp_bridge.byte_view(words, sizes[name], dt)

    def _prepare(self, inputs: Inputs, grid) -> tuple[dict, list]:
        arrays = self._bind(inputs)
        for b, itemsize in self._itemsizes:  # before anything is allocated or uploaded
            if arrays[b.name].size * itemsize > self._max_bytes:
                check_storage_size(b.name, arrays[b.name].size, itemsize, self._max_bytes)
        for name in self._canon:
            if not isinstance(arrays[name], DeviceArray):
                arrays[name] = canon(arrays[name])
        return arrays, self.grids_for(arrays, grid)

    def _repeat_check(self, inputs: Any, arrays: dict, plan: _Plan) -> Optional[Callable[[Any], Optional[dict]]]:
        """A rerun for a later run whose `inputs` bind as these did (same names, plain 1-D arrays of the
        same dtypes and sizes): the plan's mapped views written, its sequence replayed, the results copied,
        with no binding, planning or lookup (a tiny kernel's submit+wait is mostly this). It returns None,
        having replayed nothing, where the inputs differ or the plan was dropped since. None where this
        run does not qualify."""
        if type(inputs) is not dict or self._canon or len(inputs) != len(self._bind.logical):
            return None
        if any(type(inputs[n]) is not np.ndarray or inputs[n] is not arrays[n] for n in inputs):
            return None
        if any(n not in plan.staging for n in inputs):
            return None
        # All a run looks up is fixed with the plan: looked up once, here. Any strides pass: the copy into
        # the mapped view reads them as the binder's contiguous copy would. The other uploads (outputs
        # read before written, trap words, host scratch) start at zero.
        specs = tuple((n, arrays[n].dtype, (arrays[n].size,), plan.staging[n]) for n in inputs)
        zeroed = tuple(v for n, v in plan.staging.items() if n not in inputs)
        results = tuple(plan.results.items())
        count, dev, ndarray, stats, replay = len(specs), self.device, np.ndarray, self.stats, plan.sequence.eval
        check_traps = self._check_traps if plan.trap_words else None
        ranges = self._ranges if self._ranged else None
        acquire, release = dev.lock.acquire, dev.lock.release  # half the cost of `with` on an RLock

        def rerun(new: Any) -> Optional[dict]:
            if type(new) is not dict or len(new) != count:
                return None
            if dev._forked:  # a forked child must not wait on the parent's lock
                dev.check_usable()
            acquire()  # every change to a kernel's plans holds it too: the kernel's own lock is not needed
            try:
                if dev._closed or not plan.live:  # closed (run raises), or the plan was evicted or released since
                    return None
                # checked and written in one pass: views left part-written by a mismatch are rewritten
                # in full, under this lock, by every run of this plan (this one's fallback first)
                for name, dtype, shape, view in specs:
                    v = new.get(name)
                    # `is` first: a builtin dtype is one object, so the slower == runs only where it differs
                    if type(v) is not ndarray or v.shape != shape or (v.dtype is not dtype and v.dtype != dtype):
                        return None
                    view[...] = v  # [...] is half the cost of [:] for a small array
                for view in zeroed:
                    view.fill(0)
                replay()
                if check_traps is not None:
                    check_traps(plan)
                stats.runs += 1
                out = {}
                for name, view in results:  # a loop: a comprehension's frame costs more for a few items
                    out[name] = view.copy()
            finally:
                release()
            return out if ranges is None else ranges(out)
        return rerun

    def _check_traps(self, plan: _Plan) -> None:
        for k, words in plan.trap_words:
            if words[0]:
                st, code, inv = self.stages[k], int(words[1]), int(words[2])
                where = (f"invocation {inv} (elements {inv * st.factor}..{inv * st.factor + st.factor - 1} "
                         f"after x{st.factor} coarsening)" if st.factor > 1 else f"invocation {inv}")
                raise KernelTrapError(k, code, st.lowered.trap_codes.get(code, "unknown trap"), inv,
                                      int(words[3]), where)

    def run(self, inputs: Inputs = None, *, grid: Optional[Sequence[int]] = None) -> dict[str, np.ndarray]:
        """Run once. Returns a fresh array per result buffer (read_write / output).

        A ``grid`` override is in units of the program as written's workgroups: an optimised
        kernel hands such a run to the program as written (compiled on first use)."""
        rerun = self._repeat if grid is None else None
        out = rerun(inputs) if rerun is not None else None
        if out is not None:
            return out
        if grid is not None and self.compiled.optimized:
            return self.device.compile(self.program, optimize=False).run(inputs, grid=grid)
        self.device.check_usable()  # before the lock: a forked child must not wait on the parent's
        arrays, grids = self._prepare(inputs, grid)
        if self._nothing_bound:  # nothing observable (vyre's reference returns {}); kp cannot bind nothing
            return {}
        with self.device.lock, self._lock:
            self.device.manager  # raises if the device was closed: its tensors are gone
            plan = self._plan(arrays, grids)
            self._repeat = self._repeat_check(inputs, arrays, plan) if grid is None else None
            out = self._execute(plan, arrays)
        return self._ranges(out)

    def _execute(self, plan: _Plan, arrays: dict) -> dict:
        """One run of a plan (locks held): inputs in, sequence replayed, traps raised, results copied."""
        for name, view in plan.staging.items():  # the bound arrays; trap words and scratch start at zero
            v = arrays.get(name)
            view[...] = 0 if v is None else v  # [...] is half the cost of [:] for a small array
        plan.sequence.eval()
        if plan.trap_words:
            self._check_traps(plan)
        self.stats.runs += 1
        return {n: view.copy() for n, view in plan.results.items()}

    def _ranges(self, out: dict) -> dict:
        for b in self._ranged:  # with_output_byte_range: only that slice, as the reference returns
            lo, hi = b.output_byte_range
            raw = out[b.name].view(np.uint8)[lo:hi]
            sz = b.element.size
            out[b.name] = (raw.view(out[b.name].dtype) if lo % sz == 0 and (hi - lo) % sz == 0
                           else raw).copy()
        return out

    def __call__(self, **arrays: Any) -> dict[str, np.ndarray]:
        return self.run(arrays)

    def profile(self, inputs: Inputs = None, *, repeats: int = 10, timestamp_period_ns: float = 1.0,
                grid: Optional[Sequence[int]] = None, per_op: Optional[list] = None) -> tuple[list[float], list[float]]:
        """GPU and host seconds of the dispatches alone (inputs uploaded once), ``repeats`` times.

        GPU time comes from timestamp queries around the dispatches, scaled by the device's
        timestampPeriod (kp does not report it: pass it, e.g. from tools/bench's probe).
        Pass a list as ``per_op`` to get, per repeat, the seconds of each recorded op
        (``self.ops``: dispatches and barriers) appended to it.
        """
        self.run(inputs, grid=grid)  # builds the plan and leaves the inputs on the device
        arrays, grids = self._prepare(inputs, grid)
        gpu, host = [], []
        with self.device.lock, self._lock:
            plan = self._plan(arrays, grids)
            seq = self.device.manager.sequence(0, len(plan.ops))
            for op, arg in plan.ops:
                seq.record(kp_bridge.compute_barrier([plan.tensors[n] for n in arg]) if op == "barrier"
                           else kp_bridge.dispatch(plan.algorithms[arg], ordered=True))
            try:
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    seq.eval()
                    host.append(time.perf_counter() - t0)
                    ts = seq.get_timestamps()
                    gpu.append((ts[-1] - ts[0]) * timestamp_period_ns * 1e-9)
                    if per_op is not None:
                        per_op.append([(b - a) * timestamp_period_ns * 1e-9 for a, b in zip(ts, ts[1:])])
            finally:
                seq.destroy()
        return gpu, host

    def release(self) -> None:
        """Free this kernel's tensors, pipelines and sequences now (else at device close).

        The kernel stays usable: its next run rebuilds them from the kept SPIR-V. To also
        drop it from the device's cache, use ``device.forget(kernel)``."""
        with self.device.lock, self._lock:  # kp objects are destroyed under the device's lock, as made
            if not self.device.closed:
                for plan in self._plans.values():
                    plan.destroy()
            self._plans.clear()
            self._grids.clear()
            self._repeat = None


__all__ = ["Kernel", "KernelStats", "KernelTrapError", "LaunchError", "InputError", "Stage", "record_ops",
           "check_bindings", "MAX_STORAGE_BUFFER_BYTES", "MAX_BINDING_SLOTS", "MAX_GRID_SIGNATURES"]
