"""Differential fuzzing: one program on the reference and on Vulkan, judged, minimised, saved.

What a case asserts (:func:`check_case`), for each compile mode (``optimize=False``: the
program as written; ``optimize=True``: every vyre_vk.opt pass, possibly a multi-kernel
graph -- passes are a source of bugs of their own):

* reference succeeds -> Vulkan must succeed and match: every non-F32 buffer exact, F32
  within vyre's window (:func:`vyre_vk.testing.parity.compare`: 4 ULP for elementary
  ops, 128 ULP when a transcendental appears anywhere in the program).
* reference raises ``EvalError`` (i32 division by zero or ``MIN / -1`` by an active
  invocation, or a reached ``Trap`` node) -> the lowering's contract is that the same
  dispatch sets the trap word, so Vulkan must raise :class:`~vyre_vk.runtime.KernelTrapError`.
  Outputs of a trapping dispatch are not compared (vyre leaves them undefined).
* Vulkan raising anything else (or trapping where the reference did not) is a mismatch.
* reference raises ``StepBudgetExceeded`` (a loop past its step budget, e.g. a bound read
  from a buffer holding 0xFFFFFFFF) -> ``"skipped"``: there is no expected output and the GPU
  would spin as long, so Vulkan is not run.

A mismatch is minimised (:func:`minimise`: statements deleted, nested bodies hoisted,
expressions replaced by literals, while the program stays valid and still fails) and
saved by :func:`save_case` as ``<dir>/<hash>.json`` (the program) plus ``<hash>.npz``
(the inputs); ``tests/reliability/test_corpus.py`` replays every saved entry.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

from vyre_vk.ir import Program, validate
from vyre_vk.ir import expr as E
from vyre_vk.ir import node as N
from vyre_vk.ir.paths import labelled_bodies
from vyre_vk.ir.walk import node_exprs, walk_expr, walk_nodes
from vyre_vk.testing.parity import compare


@dataclass(frozen=True)
class Outcome:
    status: str          # "ok" | "trap" (both trapped) | "mismatch" | "skipped" (reference over budget)
    detail: str = ""
    mode: Optional[bool] = None  # the compile mode (optimize=) that failed

    @property
    def failed(self) -> bool:
        return self.status == "mismatch"


#: The compile modes every case runs in: Device.compile(program, optimize=mode).
MODES = (False, True)


def check_case(program: Program, inputs: Mapping[str, np.ndarray], device,
               modes: Sequence[bool] = MODES, max_steps: Optional[int] = None) -> Outcome:
    """Run ``program`` on the reference and on ``device`` once per compile mode in ``modes``;
    judge as the module doc says. The first failing mode is reported (``[optimize=...]``).
    ``max_steps``: the reference's step budget (None: the environment's or the default)."""
    from vyre_vk import reference
    from vyre_vk.reference import EvalError, StepBudgetExceeded

    try:
        expected = reference.run(program, dict(inputs), max_steps=max_steps)
        ref_error = None
    except StepBudgetExceeded as e:
        return Outcome("skipped", str(e))
    except EvalError as e:
        expected, ref_error = None, e
    status = "ok"
    for mode in modes:
        out = _check_mode(program, inputs, device, mode, expected, ref_error)
        if out.failed:
            return Outcome("mismatch", f"[optimize={mode}] {out.detail}", mode)
        status = out.status
    return Outcome(status)


def _check_mode(program, inputs, device, optimize, expected, ref_error) -> Outcome:
    from vyre_vk.runtime import KernelTrapError

    try:
        got = device.compile(program, optimize=optimize).run(dict(inputs))
        gpu_error = None
    except KernelTrapError as e:
        got, gpu_error = None, e
    except Exception as e:  # noqa: BLE001 -- anything else is a finding, reported with its type
        return Outcome("mismatch", f"Vulkan raised {type(e).__name__}: {e}")
    if ref_error is not None:
        if gpu_error is not None:
            return Outcome("trap")
        return Outcome("mismatch", f"reference raised {type(ref_error).__name__} ({ref_error}); Vulkan did not trap")
    if gpu_error is not None:
        return Outcome("mismatch", f"Vulkan trapped ({gpu_error}); the reference did not")
    report = compare(program, expected, got)
    if report.ok:
        return Outcome("ok")
    return Outcome("mismatch", "; ".join(str(m) for m in report.mismatches))


# ----------------------------------------------------------------------------- minimising
def _replace_body(n: N.Node, label: str, body: tuple) -> N.Node:
    if isinstance(n, N.If):
        return dataclasses.replace(n, then=body) if label == "if.then" else dataclasses.replace(n, otherwise=body)
    return dataclasses.replace(n, body=body)


def _list_variants(nodes: tuple) -> Iterator[tuple]:
    """Smaller versions of a statement list: one statement removed / hoisted / simplified."""
    for i in range(len(nodes)):
        yield nodes[:i] + nodes[i + 1:]
    for i, n in enumerate(nodes):
        for label, body in labelled_bodies(n):
            if not isinstance(n, N.Region):
                yield nodes[:i] + tuple(body) + nodes[i + 1:]
            for smaller in _list_variants(tuple(body)):
                yield nodes[:i] + (_replace_body(n, label, smaller),) + nodes[i + 1:]
        for field in ("value", "index", "cond", "to", "from_"):
            e = getattr(n, field, None)
            if isinstance(e, E.Expr):
                for simpler in _expr_variants(e):
                    if field in ("to", "from_") and not isinstance(simpler, E.LitU32):
                        continue  # `min(x, 5)` -> `x` could make the loop run ~2**32 times
                    yield nodes[:i] + (dataclasses.replace(n, **{field: simpler}),) + nodes[i + 1:]


_LITS = (E.LitU32, E.LitI32, E.LitF32, E.LitBool)


def _expr_variants(e: E.Expr) -> Iterator[E.Expr]:
    """Sub-expressions of the same node (type may differ: validation filters) and zero literals."""
    if isinstance(e, _LITS):
        return
    for f in dataclasses.fields(e):
        sub = getattr(e, f.name)
        if isinstance(sub, E.Expr):
            yield sub
    for lit in (E.Expr.u32(0), E.Expr.i32(0), E.Expr.f32(0.0), E.Expr.bool(False), E.Expr.u32(1)):
        yield lit
    for f in dataclasses.fields(e):
        sub = getattr(e, f.name)
        if isinstance(sub, E.Expr):
            for smaller in _expr_variants(sub):
                try:
                    yield dataclasses.replace(e, **{f.name: smaller})
                except (TypeError, ValueError):
                    continue


def _valid(p: Program) -> bool:
    try:
        validate(p)
        return True
    except Exception:  # noqa: BLE001
        return False


#: Every statement, nested ones included, pre-order (the tree walker's; tests use this name).
_walk_nodes = walk_nodes


def access_pattern(program: Program) -> tuple[dict, int]:
    """({buffer: index expressions of its loads/stores/atomics}, barrier count) for the buffers
    a race could involve: stored-to, workgroup and atomic ones."""
    accesses: dict = {}
    guarded = {b.name for b in program.buffers if b.is_workgroup}
    barriers = 0
    exprs = []
    for n in walk_nodes(program.entry):
        if isinstance(n, N.Store):
            guarded.add(n.buffer)
            accesses.setdefault(n.buffer, set()).add(n.index)
        barriers += isinstance(n, N.Barrier)
        exprs.extend(node_exprs(n))
    for e in exprs:
        for x in walk_expr(e):
            if isinstance(x, E.Atomic):
                guarded.add(x.buffer)
            if isinstance(x, (E.Load, E.Atomic)):
                accesses.setdefault(x.buffer, set()).add(x.index)
    return {b: accesses.get(b, set()) for b in guarded}, barriers


def keeps_race_freedom(original: Program) -> Callable[[Program], bool]:
    """A minimiser guard: a candidate may only access stored-to / workgroup / atomic buffers at
    index expressions the (race-free) original used for them, and keeps every barrier when
    there is workgroup memory. Otherwise minimising `out[own] = f(out[own])` could produce
    `out[0] = f(out[0])`, a race whose reference answer is one legal outcome of several."""
    allowed, barriers = access_pattern(original)
    has_wg = any(b.is_workgroup for b in original.buffers)

    def ok(candidate: Program) -> bool:
        got, n_barriers = access_pattern(candidate)
        if has_wg and n_barriers < barriers:
            return False
        return all(idx <= allowed.get(b, set()) for b, idx in got.items())
    return ok


def minimise(program: Program, fails: Callable[[Program], bool], max_steps: int = 400,
             guard: Optional[Callable[[Program], bool]] = None) -> Program:
    """Greedy: take the first smaller valid variant that still ``fails`` until none does.
    ``guard`` (default :func:`keeps_race_freedom` of ``program``) rejects candidates first."""
    guard = guard or keeps_race_freedom(program)
    steps = 0
    improved = True
    while improved and steps < max_steps:
        improved = False
        for entry in _list_variants(tuple(program.entry)):
            if not entry or not all(isinstance(n, N.Region) for n in entry):
                continue
            cand = dataclasses.replace(program, entry=entry)
            if cand == program or not _valid(cand) or not guard(cand):
                continue
            steps += 1
            if fails(cand):
                program, improved = cand, True
                break
            if steps >= max_steps:
                break
    return program


# ----------------------------------------------------------------------------- corpus
def save_case(directory: Path, program: Program, inputs: Mapping[str, np.ndarray], info: Optional[dict] = None) -> Path:
    """Write ``<hash>.json`` (program + info) and ``<hash>.npz`` (inputs); returns the json path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    key = program.content_hash()[:16]
    path = directory / f"{key}.json"
    path.write_text(json.dumps({"program": json.loads(program.to_json()), "info": info or {}}, indent=1, sort_keys=True))
    np.savez(directory / f"{key}.npz", **{k: np.asarray(v) for k, v in inputs.items()})
    return path


def load_case(path: Path) -> tuple[Program, dict[str, np.ndarray], dict]:
    path = Path(path)
    doc = json.loads(path.read_text())
    program = Program.from_json(json.dumps(doc["program"]))
    with np.load(path.with_suffix(".npz")) as z:
        inputs = {k: z[k] for k in z.files}
    return program, inputs, doc.get("info", {})


def corpus_entries(directory: Path) -> list[Path]:
    return sorted(Path(directory).glob("*.json"))
