"""`optimize(program, passes=...)`: run the optimiser passes and report what each changed.

The result is a :class:`ProgramGraph`: one or more stage programs run in order over a
shared set of buffers (the original program's, plus device-only scratch buffers that a
pre-pass writes and a later stage reads). A program no pass split is a one-stage graph;
``graph.single`` is then that program.

Example::

    >>> from vyre_vk.opt import optimize
    >>> graph, reports = optimize(program)
    >>> [r.name for r in reports if r.changed]
    ['licm', 'hoist_invariant', 'workgroup_size']
    >>> outputs = graph.run_reference(inputs)      # bit-identical to reference.run(program, inputs)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Union

import numpy as np

from ..ir.program import BufferDecl, Program
from ..ir.validate import ValidationError, validate
from .cse import cse
from .dce import dce
from .dispatch import BEST_LOCAL_SIZE, MIN_WORKGROUPS, coarsen, coarsen_factor, workgroup_size
from .fission import fission
from .fold import constant_fold
from .hoist import hoist_invariant
from .licm import licm
from .unroll import unroll_factor, unroll_loads


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


#: Pass name -> (kind, function). "program" passes map Program -> (Program, why).
PASS_ORDER = ("constant_fold", "dce", "cse", "licm", "hoist_invariant", "fission", "unroll", "workgroup_size",
              "coarsen")
DEFAULT_PASSES = frozenset(PASS_ORDER)
_SCALAR: dict[str, Callable] = {"constant_fold": constant_fold, "dce": dce, "cse": cse, "licm": licm}
MAX_STAGES = 4
MAX_FISSIONS = 2


def _check(name: str, before: Program, after: Program) -> Optional[str]:
    try:
        validate(after)
    except ValidationError as e:  # a pass bug must never reach the GPU: keep the input
        return f"reverted: {name} produced an invalid program ({e})"
    return None


def _apply(name: str, fn, stages: list, whys: list) -> list:
    out = []
    for k, st in enumerate(stages):
        new, why = fn(st)
        if len(stages) > 1 and why:
            why = f"stage {k}: {why}"
        if new != st:
            bad = _check(name, st, new)
            if bad:
                whys.append(bad)
                new = st
            else:
                whys.append(why)
        out.append(new)
    return out


def optimize(program: Program, passes: Union[bool, Iterable[str], None] = True, *,
             device_class: str = "default", local_size: Optional[int] = None,
             hoist_min_loops: int = 1) -> tuple[ProgramGraph, list[PassReport]]:
    """Run `passes` (True: all; False/None/empty: none; or an iterable of pass names) on
    `program`. Returns the graph and one PassReport per pass that was asked for."""
    if passes is True:
        chosen = DEFAULT_PASSES
    elif not passes:
        chosen = frozenset()
    else:
        chosen = frozenset(passes)
        unknown = sorted(chosen - DEFAULT_PASSES)
        if unknown:
            raise ValueError(f"unknown optimiser pass(es) {unknown}. Fix: use names from {list(PASS_ORDER)}.")
    validate(program)
    size = local_size or BEST_LOCAL_SIZE.get(device_class, BEST_LOCAL_SIZE["default"])
    min_wgs, min_local = (1, size) if local_size else MIN_WORKGROUPS.get(device_class, MIN_WORKGROUPS["default"])
    stages = [program]
    scratch: list[BufferDecl] = []
    reports: list[PassReport] = []

    def scalar_round(names, record=True):
        nonlocal stages
        for name in names:
            if name in chosen:
                whys: list = []
                stages = _apply(name, _SCALAR[name], stages, whys)
                if record:
                    reports.append(PassReport(name, bool(whys), "; ".join(whys)))

    scalar_round(("constant_fold", "dce", "cse", "licm"))
    if "hoist_invariant" in chosen:
        whys = []
        while len(stages) < MAX_STAGES:
            main = stages[-1]
            h = hoist_invariant(main, min_loops=hoist_min_loops)
            if h is None:
                break
            bad = _check("hoist_invariant", main, h.prepass) or _check("hoist_invariant", main, h.main)
            if bad:
                whys.append(bad)
                break
            stages = stages[:-1] + [h.prepass, h.main]
            scratch.extend(h.scratch)
            whys.append(f"{', '.join(h.moved)} depend only on `{h.loop_var}` (no invocation id): computed once "
                        f"per `{h.loop_var}` by a pre-pass kernel instead of by every invocation; the main "
                        f"kernel reads {', '.join(h.exported)} from scratch")
        reports.append(PassReport("hoist_invariant", bool(whys), "; ".join(whys)))
        if whys:  # tidy the new stages (e.g. lets the main program no longer reads)
            scalar_round(("dce",), record=False)
    if "fission" in chosen:
        whys, out = [], []
        for k, st in enumerate(stages):
            _, res = fission(st) if len(out) - k < MAX_FISSIONS else (st, None)
            bad = res and (_check("fission", st, res[0]) or _check("fission", st, res[1]))
            if bad:
                whys.append(bad)
            if res is None or bad:
                out.append(st)
                continue
            out += [res[0], res[1]]
            scratch.extend(res[2])
            whys.append(f"stage {k}: {res[3]}" if len(stages) > 1 else res[3])
        stages = out
        reports.append(PassReport("fission", bool(whys), "; ".join(whys)))
    if "unroll" in chosen:
        whys = []
        factor = unroll_factor(device_class)
        stages = _apply("unroll", lambda p: unroll_loads(p, factor), stages, whys)
        reports.append(PassReport("unroll", bool(whys), "; ".join(whys)))
    if "workgroup_size" in chosen:
        whys = []
        stages = _apply("workgroup_size", lambda p: workgroup_size(p, size, min_wgs, min_local), stages, whys)
        reports.append(PassReport("workgroup_size", bool(whys), "; ".join(whys)))
    if "coarsen" in chosen:
        whys = []
        stages = _apply("coarsen", coarsen, stages, whys)
        reports.append(PassReport("coarsen", bool(whys), "; ".join(whys)))
    reports.sort(key=lambda r: PASS_ORDER.index(r.name))
    return ProgramGraph(program, tuple(stages), tuple(scratch)), reports


def run_reference(result: Union[ProgramGraph, Program], inputs, grid=None) -> dict[str, np.ndarray]:
    """Reference outputs of a program or of an optimised graph."""
    from ..reference import run
    if isinstance(result, Program):
        return run(result, inputs, grid=grid)
    return result.run_reference(inputs, grid=grid)


__all__ = ["PassReport", "ProgramGraph", "optimize", "run_reference", "PASS_ORDER", "coarsen_factor"]
