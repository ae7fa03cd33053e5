"""Lowering: vyre IR Program -> GLSL 450 compute shader text (see glsl.py).

Example::

    >>> from vyre_vk.lower import lower
    >>> from vyre_vk import ops
    >>> lowered = lower(ops.get("vyre-libs::nn::mlp_backward").build())
    >>> lowered.glsl.startswith("#version 450")
    True
"""
from .glsl import TRAP_WORDS, Lowered, LoweringError, assign_names, f32_literal, lower

__all__ = ["lower", "Lowered", "LoweringError", "TRAP_WORDS", "assign_names", "f32_literal"]
