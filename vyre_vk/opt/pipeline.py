"""`optimize(program, passes=...)`: run the optimiser passes and report what each changed.

The result is a :class:`ProgramGraph`: one or more stage programs run in order over a
shared set of buffers (the original program's, plus device-only scratch buffers that a
pre-pass writes and a later stage reads). A program no pass split is a one-stage graph;
``graph.single`` is then that program.

The passes are the objects of ``PASS_ORDER`` (see protocol.py); :func:`optimize` is one loop
over them, each driven over the stages by its declared kind and limits (:func:`_run_pass`).

Example::

    >>> from vyre_vk.ops import get
    >>> from vyre_vk.opt import optimize
    >>> graph, reports = optimize(get("vyre-libs::nn::mlp_backward").build())
    >>> [r.name for r in reports if r.changed]
    ['licm', 'hoist_invariant', 'fission', 'speculate', 'workgroup_size', 'coarsen']
    >>> len(graph.stages)  # graph.run_reference(inputs) == reference.run(program, inputs), bit for bit
    3
"""
from __future__ import annotations

import os

from dataclasses import dataclass
from typing import Iterable, Optional, Union

import numpy as np

from ..ir.program import BufferDecl, Program
from ..ir.validate import ValidationError, validate
from .cse import CSE
from .dce import DCE
from .dispatch import BEST_LOCAL_SIZE, COARSEN, MIN_WORKGROUPS, WORKGROUP_SIZE, coarsen_factor
from .fission import FISSION, MAX_FISSIONS
from .fold import CONSTANT_FOLD
from .hoist import HOIST_INVARIANT, MAX_STAGES
from .licm import LICM
from .wgphases import SPLIT_PHASES
from .single import SINGLE_INVOCATION
from .spread import SPREAD
from .split_chains import SPLIT_CHAINS
from .tabulate import TABULATE
from .split_invocations import SPLIT_INVOCATIONS
from .idle import GUARD_IDLE
from .privatize import PRIVATIZE
from .protocol import OptimizerError, Pass, PassContext
from .reassociate import REASSOCIATE
from .speculate import SPECULATE_CHAINS
from .unroll import UNROLL_LOADS
from .coalesce import COALESCE
from .keychain import KEYCHAIN
from .stream import STREAM


@dataclass(frozen=True)
class PassReport:
    """What one pass did: `why` is a one-line reason when it changed something."""
    name: str
    changed: bool
    why: str = ""

    def __str__(self) -> str:
        return f"{self.name}: {'changed' if self.changed else 'no change'}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class ProgramGraph:
    """Stage programs run in order, one dispatch each, over shared buffers by name.

    `program` is the original (its inputs and results are the graph's); `scratch` are
    buffers only the stages see (zero-initialised, never returned).
    """
    program: Program
    stages: tuple[Program, ...]
    scratch: tuple[BufferDecl, ...] = ()

    @property
    def single(self) -> Optional[Program]:
        return self.stages[0] if len(self.stages) == 1 else None

    def writes(self, i: int) -> set[str]:
        return {b.name for b in self.stages[i].buffers if b.is_result}

    def reads(self, i: int) -> set[str]:
        return {b.name for b in self.stages[i].buffers if not b.is_workgroup}

    def run_reference(self, inputs, grid=None) -> dict[str, np.ndarray]:
        """Run every stage on the NumPy reference, threading buffers between stages.
        `grid` (the original program's grid override) applies to the last stage."""
        from ..reference.eval import _bind_inputs, run
        mem = _bind_inputs(self.program, inputs)
        for s in self.scratch:
            mem[s.name] = np.zeros(s.count, dtype=s.element.numpy)
        out: dict = {}
        for k, st in enumerate(self.stages):
            ins = {b.name: mem[b.name] for b in st.buffers if b.is_input}
            out = run(st, ins, grid=grid if k == len(self.stages) - 1 else None)
            for name, arr in out.items():
                mem[name] = arr  # pre-passes write only scratch buffers (never a ranged output)
        return {b.name: out[b.name].copy() for b in self.program.output_buffers}


#: Every pass, in the order optimize() runs them (see protocol.py for their shape).
PASS_ORDER: tuple[Pass, ...] = (CONSTANT_FOLD, DCE, SINGLE_INVOCATION, SPLIT_PHASES, SPREAD, TABULATE, SPLIT_INVOCATIONS, KEYCHAIN, GUARD_IDLE, PRIVATIZE, COALESCE, CSE, LICM, HOIST_INVARIANT, FISSION, SPLIT_CHAINS, REASSOCIATE, STREAM, UNROLL_LOADS, SPECULATE_CHAINS, WORKGROUP_SIZE,
                                COARSEN)
PASS_NAMES: tuple[str, ...] = tuple(p.name for p in PASS_ORDER)
PASSES: dict[str, Pass] = {p.name: p for p in PASS_ORDER}
DEFAULT_PASSES = frozenset(PASS_NAMES)


def _check(name: str, after: Program) -> Optional[str]:
    try:
        validate(after)
    except ValidationError as e:  # a pass bug must never reach the GPU: keep the input
        return f"reverted: {name} produced an invalid program ({e})"
    return None


#: The environment knobs that change what the passes (and the speculative lowering) make (tuning knobs
#: for measurements, read when a program is compiled): compile's cache keys include their settings (:func:`knob_settings`), so a
#: process that changes one between compiles gets the schedule it asked for, not a cached one.
SCHEDULE_KNOBS = ("VYRE_VK_PASSES_OFF", "VYRE_VK_SPECULATE", "VYRE_VK_UNROLL", "VYRE_VK_PIPELINE", "VYRE_VK_INFLIGHT",
                  "VYRE_VK_ROLL", "VYRE_VK_STREAM", "VYRE_VK_STREAM_SHAPE", "VYRE_VK_SPEC_DIV_U32",
                  "VYRE_VK_SPEC_MULV", "VYRE_VK_SPEC_STATES", "VYRE_VK_SPEC_ABSORB", "VYRE_VK_SPEC_PEEL",
                  "VYRE_VK_SPEC_SHARED_RCP", "VYRE_VK_SPEC_RAW")


def knob_settings() -> str:
    """The set knobs of SCHEDULE_KNOBS as ``NAME=value`` joined by commas ('' when none is set).

    >>> import os
    >>> knob_settings() == ",".join(f"{k}={os.environ[k]}" for k in SCHEDULE_KNOBS if os.environ.get(k))
    True
    """
    return ",".join(f"{k}={os.environ[k]}" for k in SCHEDULE_KNOBS if os.environ.get(k))


def check_each_pass() -> bool:
    """Validate every pass's output and revert just that pass ($VYRE_VK_CHECK_PASSES=1, set by the
    test suite), instead of validating the final schedule once and reverting all of it."""
    return os.environ.get("VYRE_VK_CHECK_PASSES", "0") == "1"


def _run_pass(p: Pass, stages: list, ctx: PassContext, check: bool = True) -> tuple[list, list, list]:
    """Drive `p` over the stages: (new stages, new scratch, one-line whys). A stage the pass
    changes is replaced by the rewrite's stages if they all validate; a split's last stage is
    offered again when `p.repeat`, while the graph stays under `p.max_stages` stages and the
    pass under `p.max_splits` splits."""
    out: list = []
    scratch: list = []
    whys: list = []
    splits = 0
    for k, st in enumerate(stages):
        cur = st
        while True:
            total = len(out) + len(stages) - k  # stages in the graph now
            if ((p.max_stages is not None and total >= p.max_stages)
                    or (p.max_splits is not None and splits >= p.max_splits) or not p.applies(cur, ctx)):
                break
            r = p.run(cur, ctx)
            if r is None or (len(r.stages) == 1 and r.stages[0] == cur):
                break
            bad = check and next((b for b in (_check(p.name, s) for s in r.stages) if b), None)
            if bad:
                whys.append(bad)
                break
            why = p.explain(r)
            whys.append(f"stage {k}: {why}" if len(stages) > 1 and why else why)
            scratch.extend(r.scratch)
            splits += len(r.stages) > 1
            out.extend(r.stages[:-1])
            cur = r.stages[-1]
            if not p.repeat:
                break
        out.append(cur)
    return out, scratch, whys


def _chosen(passes: Union[bool, Iterable, None]) -> frozenset:
    """The pass names `passes` asks for (True: all but those ``$VYRE_VK_PASSES_OFF`` names, a
    comma-separated A/B knob for measurements; False/None/empty: none; names or Pass objects)."""
    if passes is True:
        off = {n.strip() for n in os.environ.get("VYRE_VK_PASSES_OFF", "").split(",") if n.strip()}
        if off - DEFAULT_PASSES:
            raise OptimizerError(f"VYRE_VK_PASSES_OFF names unknown pass(es) {sorted(off - DEFAULT_PASSES)}. "
                                 f"Fix: use names from {list(PASS_NAMES)}, comma-separated, or unset it.")
        return DEFAULT_PASSES - off
    if isinstance(passes, str):
        raise OptimizerError(f"passes={passes!r} is one string, not a collection of pass names. "
                             f"Fix: pass a list, e.g. [{passes!r}], or True for all of {list(PASS_NAMES)}.")
    if not passes:
        return frozenset()
    try:
        names = [getattr(p, "name", p) for p in passes]
    except TypeError:
        raise OptimizerError(f"passes={passes!r} is not True, False or a collection of pass names. "
                             f"Fix: pass True, False or a list of names from {list(PASS_NAMES)}.") from None
    unknown = sorted({n if isinstance(n, str) else repr(n) for n in names} - DEFAULT_PASSES)
    if unknown:
        raise OptimizerError(f"unknown optimiser pass(es) {unknown}. Fix: use names from {list(PASS_NAMES)}.")
    return frozenset(names)


def _context(device_class: str, local_size: Optional[int], hoist_min_loops: int,
             precision: str = "exact", shared_memory_bytes: int = 32768) -> PassContext:
    if local_size is not None and (isinstance(local_size, bool) or not isinstance(local_size, int) or local_size < 0):
        raise OptimizerError(f"local_size={local_size!r} is not a positive whole number of invocations. "
                             "Fix: pass e.g. 64 or 256, or None for the device class's best size.")
    if isinstance(hoist_min_loops, bool) or not isinstance(hoist_min_loops, int):
        raise OptimizerError(f"hoist_min_loops={hoist_min_loops!r} is not a whole number. "
                             "Fix: pass 0 (hoist any invariant work) or 1 (only work with a loop, the default).")
    size = local_size or BEST_LOCAL_SIZE.get(device_class, BEST_LOCAL_SIZE["default"])
    min_wgs, min_local = (1, size) if local_size else MIN_WORKGROUPS.get(device_class, MIN_WORKGROUPS["default"])
    if precision not in ("exact", "fast"):
        raise OptimizerError(f"precision {precision!r} is not 'exact' or 'fast'. Fix: pass one of those.")
    return PassContext(device_class, size, min_wgs, min_local, hoist_min_loops, precision, shared_memory_bytes)


def optimize(program: Program, passes: Union[bool, Iterable[str], None] = True, *,
             device_class: str = "default", local_size: Optional[int] = None,
             hoist_min_loops: int = 1, validated: bool = False,
             precision: str = "exact", shared_memory_bytes: int = 32768) -> tuple[ProgramGraph, list[PassReport]]:
    """Run `passes` (True: all; False/None/empty: none; or an iterable of pass names) on
    `program`, in PASS_ORDER. Returns the graph and one PassReport per pass asked for.

    ``validated=True``: the caller has just validated `program` (the compile front door), so it
    is not validated again. ``precision="fast"`` lets the passes whose ``precision`` is "fast"
    (reassociate) run; in "exact" every pass keeps the reference's bits. ``shared_memory_bytes``: the
    workgroup memory a pass may give a workgroup (the device's limit; compile passes its own). The schedule's stages are validated once at the end (a pass bug
    never reaches the GPU: the program is then returned as written, with a ``schedule`` report
    saying why), or after every pass when :func:`check_each_pass`.

    >>> from vyre_vk.ops import get
    >>> graph, reports = optimize(get("vyre-libs::nn::mlp_backward").build(), ["cse", "dce"])
    >>> [r.name for r in reports], len(graph.stages)
    (['dce', 'cse'], 1)
    """
    chosen = _chosen(passes)
    ctx = _context(device_class, local_size, hoist_min_loops, precision, shared_memory_bytes)
    if not validated:
        validate(program)
    check = check_each_pass()
    stages = [program]
    scratch: list[BufferDecl] = []
    reports: list[PassReport] = []
    for p in PASS_ORDER:
        if p.name not in chosen:
            continue
        stages, new, whys = _run_pass(p, stages, ctx, check)
        scratch += new
        if whys and hasattr(p, "merge"):  # a pass's graph-wide step (tabulate: one pre-pass per table)
            stages, scratch, *why = p.merge(stages, scratch)  # and optionally why it changed the graph
            whys += [w for w in why if w]
        reports.append(PassReport(p.name, bool(whys), "; ".join(whys)))
        if whys:  # e.g. dce after hoisting: lets the main stage no longer reads
            for name in p.tidy:
                if name in chosen:
                    stages, new, _ = _run_pass(PASSES[name], stages, ctx, check)
                    scratch += new
    reports.sort(key=lambda r: PASS_NAMES.index(r.name))
    if not check and stages != [program]:
        bad = next((b for b in (_check("the schedule", st) for st in stages) if b), None)
        if bad:
            return ProgramGraph(program, (program,), ()), [*reports, PassReport("schedule", True, bad)]
    return ProgramGraph(program, tuple(stages), tuple(scratch)), reports


def run_reference(result: Union[ProgramGraph, Program], inputs, grid=None) -> dict[str, np.ndarray]:
    """Reference outputs of a program or of an optimised graph."""
    from ..reference import run
    if isinstance(result, Program):
        return run(result, inputs, grid=grid)
    return result.run_reference(inputs, grid=grid)


__all__ = ["PassReport", "SCHEDULE_KNOBS", "knob_settings", "ProgramGraph", "optimize", "run_reference", "PASS_ORDER", "PASS_NAMES", "PASSES",
           "DEFAULT_PASSES", "MAX_STAGES", "MAX_FISSIONS", "OptimizerError", "coarsen_factor"]
