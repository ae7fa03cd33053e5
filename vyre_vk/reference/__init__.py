"""NumPy reference evaluator (the oracle every GPU result is checked against).

Example::

    >>> from vyre_vk import reference
    >>> outs = reference.run(program, {"x": x, "w1": w1})   # doctest: +SKIP
"""
from .eval import EvalError, TrapError, dispatch_grid, fma_f32, run

__all__ = ["run", "dispatch_grid", "EvalError", "TrapError", "fma_f32"]
