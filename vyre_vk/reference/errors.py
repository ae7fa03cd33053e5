"""Errors of the reference evaluator (re-exported by vyre_vk.reference and .eval)."""
from __future__ import annotations

from vyre_vk.errors import VyreError


class EvalError(VyreError, RuntimeError):
    """The reference refuses or aborts a dispatch (vyre-reference errors). Message ends with a Fix."""


class TrapError(EvalError):
    """A `Trap` node was reached by an active invocation."""


class StepBudgetConfigError(VyreError, ValueError):
    """`max_steps` or $VYRE_VK_REF_MAX_STEPS is not a step count (a usage error, not an EvalError:
    the fuzzer must not mistake it for a reference trap)."""


class StepBudgetExceeded(EvalError):
    """A loop ran the reference past its step budget (see vyre_vk.reference.budget).

    Attributes: ``where`` (the loop's IR path, e.g. ``entry[0].region.body[2]``), ``loop_var``,
    ``budget`` and ``steps``, a lower bound of what the run needs (charged so far plus the refused
    iteration, or plus the whole remaining loop when it surely runs to its end).
    """

    def __init__(self, where: str, loop_var: str, steps: int, budget: int, unit: str):
        self.where, self.loop_var, self.steps, self.budget = where, loop_var, steps, budget
        what = "Node.forever loop" if loop_var == "__forever__" else f"loop `{loop_var}`"
        super().__init__(
            f"reference step budget exceeded by the {what} at {where}: it needs at least {steps} steps, "
            f"the budget is {budget} ({unit}). Fix: bound the loop (e.g. clamp a bound read from a buffer "
            f"with Expr.min, or give a forever loop a reachable Return), or raise the budget with "
            f"reference.run(..., max_steps=N) or the environment variable VYRE_VK_REF_MAX_STEPS (0 = unlimited).")


__all__ = ["EvalError", "TrapError", "StepBudgetExceeded", "StepBudgetConfigError"]
