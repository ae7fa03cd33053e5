"""Step budget of the reference evaluator (issue 13): a loop whose bound comes from a buffer
holding 0xFFFFFFFF must end in a typed error (StepBudgetExceeded), not run for an hour.

Unit. The evaluator runs every invocation in lock-step, so one loop iteration is one pass of
NumPy calls over arrays as wide as the whole grid (masks narrow who *writes*, not how wide the
arrays are). Its time is about (statements + expression nodes of the body) x (a few us per
NumPy call, roughly flat below a few thousand lanes, linear in the width above). So:

    step = one statement or expression node of a loop body evaluated once, charged once per
           started block of LANES_PER_STEP lanes of the grid.

Measured per step (loaded 2-core box): 2.4 us at 64 lanes, 5 us at 4096, 3.4-3.7 us at 16 Ki and
256 Ki lanes; the registered ops run at 2-7 us per step when stepped.

Charging. Each stepped iteration charges its body's static weight (`body_profile`, computed
once per loop: nested If/Block/Region bodies included -- both arms of an If, an upper bound --
nested loop bodies excluded, as each nested loop charges its own iterations, so nested loops
multiply) times the grid's lane blocks: one integer add and compare per iteration, never per
expression or lane, so the evaluator is not measurably slower. The accumulate fast path does
all iterations in one pass over (iterations x lanes) arrays and is charged for that width.
Atomics run a Python step per active lane: `_Machine._atomic` adds lanes // ATOMIC_LANES_PER_STEP
(checked at the next iteration). Statements outside loops are free: without loops a program's
time is bounded by its size. A loop whose body has no Return, Trap, erroring operator (i32
Div/Mod) or Call surely runs every iteration once entered, so if the rest of it cannot fit
in the budget it fails on entry (the 0xFFFFFFFF case above: ~1 ms) instead of after the
budget's worth of time.

Default. DEFAULT_MAX_STEPS = 20_000_000. The most any reference run of the registered ops
charges: 1,854 steps for their build() vectors (nn::flash_attention), 161,728 for the
tests/ops/test_random.py inputs (nn::attention, seq_len 32 x head_dim 48, 8192 lanes; the
default is 124x that); the largest shape seen elsewhere in tests/ops, nn::top_k with n=400,
k=32 (test_nn2.py), charges 236,416 (85x). Exhausting the default in a loop that cannot fail
on entry takes about 40-140 s of CPU on that loaded box (0.15-0.5 M steps/s), less when idle.

Override: ``reference.run(program, inputs, max_steps=N)`` or the environment variable
``VYRE_VK_REF_MAX_STEPS``; 0 means unlimited. ``max_steps=None`` (the default) reads the
environment, then falls back to DEFAULT_MAX_STEPS.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

from ..ir import expr as E
from ..ir import node as N
from ..ir.optable import BINOPS
from ..ir.paths import labelled_bodies
from ..ir.walk import node_bodies, node_exprs, walk_expr
from .errors import StepBudgetConfigError, StepBudgetExceeded

ENV_VAR = "VYRE_VK_REF_MAX_STEPS"
DEFAULT_MAX_STEPS = 20_000_000
#: Grid width charged as one step per statement/expression node (per-call overhead dominates below it).
LANES_PER_STEP = 4096
#: Active lanes of one atomic charged as one step (the atomic runs a Python loop, ~3-5 us per lane).
ATOMIC_LANES_PER_STEP = 1
#: Stand-in for "unlimited": more steps than any run can take.
UNLIMITED = 1 << 62
UNIT = (f"one step = one statement or expression node of a loop body evaluated once, "
        f"per {LANES_PER_STEP} lanes of the grid")


def resolve_max_steps(max_steps: Optional[int]) -> int:
    """The budget a run uses: `max_steps`, else $VYRE_VK_REF_MAX_STEPS, else the default;
    0 means unlimited (returned as UNLIMITED)."""
    if max_steps is None:
        raw = os.environ.get(ENV_VAR, "").strip()
        if not raw:
            return DEFAULT_MAX_STEPS
        try:
            max_steps = int(raw.replace("_", ""))
        except ValueError:
            raise StepBudgetConfigError(f"{ENV_VAR}={raw!r} is not an integer. Fix: set it to a step count "
                            f"(e.g. {DEFAULT_MAX_STEPS}), 0 for unlimited, or unset it.") from None
        source = ENV_VAR
    else:
        source = "max_steps"
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
        raise StepBudgetConfigError(f"{source}={max_steps!r} is not a step count. Fix: pass an int >= 0 (0 = unlimited).")
    return UNLIMITED if max_steps == 0 else max_steps


def body_profile(loop: N.Loop) -> tuple[int, bool]:
    """(weight, runs_to_end) of `loop`'s body.

    weight: steps one iteration charges per lane block -- statements plus expression nodes,
    nested If/Block/Region bodies included, nested loop bodies excluded (they charge their own
    iterations); at least 1, an empty body still costs a Python iteration.
    runs_to_end: nothing in the body, nested loops included, can end the loop early or raise
    another EvalError first (no Return, Trap, erroring operator such as i32 Div, or Call), so
    once entered every lane runs its whole range and a surely-exceeded budget can fail at once.
    """
    weight, runs_to_end = 0, True
    stack: list[tuple[N.Node, bool]] = [(s, True) for s in loop.body]
    while stack:
        n, charged = stack.pop()
        if isinstance(n, (N.Return, N.Trap)):
            runs_to_end = False
        for e in node_exprs(n):
            for x in walk_expr(e):
                weight += charged
                if isinstance(x, E.Call) or (isinstance(x, E.BinOpExpr) and BINOPS[x.op].error is not None):
                    runs_to_end = False
        weight += charged
        inner = charged and not isinstance(n, N.Loop)  # a nested loop charges its own iterations
        for body in node_bodies(n):
            stack.extend((s, inner) for s in body)
    return max(1, weight), runs_to_end


def loop_path(entry: Sequence[N.Node], chain: Sequence[N.Loop]) -> str:
    """IR path (validate.py's convention, e.g. ``entry[0].region.body[1].loop(i).body[0]``) of
    the innermost loop in `chain`, the loops being executed, outermost first. Nodes are matched
    by identity and nested loops are only entered along `chain`, so a node object shared by
    several places resolves to the place actually running."""
    last = len(chain) - 1

    def find(nodes: Sequence[N.Node], path: str, depth: int) -> Optional[str]:
        for i, n in enumerate(nodes):
            here = f"{path}[{i}]"
            inner = depth
            if isinstance(n, N.Loop):
                if n is not chain[depth]:
                    continue  # not on the running chain
                if depth == last:
                    return here
                inner = depth + 1
            for label, body in labelled_bodies(n):
                found = find(body, f"{here}.{label}", inner)
                if found:
                    return found
        return None

    return find(entry, "entry", 0) or f"<loop `{chain[-1].var}`>"


def budget_error(entry: Sequence[N.Node], chain: Sequence[N.Loop], steps: int, budget: int) -> StepBudgetExceeded:
    return StepBudgetExceeded(loop_path(entry, chain), chain[-1].var, steps, budget, UNIT)


__all__ = ["ENV_VAR", "DEFAULT_MAX_STEPS", "LANES_PER_STEP", "ATOMIC_LANES_PER_STEP", "UNLIMITED",
           "resolve_max_steps", "body_profile", "loop_path", "budget_error", "StepBudgetExceeded",
           "StepBudgetConfigError"]
