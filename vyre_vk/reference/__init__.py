"""NumPy reference evaluator (the oracle every GPU result is checked against).

Example::

    >>> from vyre_vk import reference
    >>> outs = reference.run(program, {"x": x, "w1": w1})   # doctest: +SKIP
    >>> outs = reference.run(program, inputs, max_steps=10**6)  # doctest: +SKIP  (loop work bound)

Loops are charged against a step budget (vyre_vk.reference.budget; $VYRE_VK_REF_MAX_STEPS);
past it the run raises StepBudgetExceeded, an EvalError. Inputs are bound, and the grid chosen,
under the runtime's rules (vyre_vk.ir.binding, vyre_vk.ir.grid): an input that does not fit its
buffer (a float64 array for an f32 buffer, ...) is an InputError, as on Vulkan.
"""
from ..errors import InputError
from .budget import DEFAULT_MAX_STEPS, ENV_VAR as MAX_STEPS_ENV
from .errors import EvalError, StepBudgetExceeded, TrapError
from .eval import dispatch_grid, fma_f32, run

__all__ = ["run", "dispatch_grid", "EvalError", "TrapError", "StepBudgetExceeded", "InputError", "fma_f32",
           "DEFAULT_MAX_STEPS", "MAX_STEPS_ENV"]
