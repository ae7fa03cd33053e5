"""Lowering: vyre IR Program -> GLSL 450 compute shader text (see glsl.py).

Example::

    >>> from vyre_vk.lower import lower
    >>> from vyre_vk import ops
    >>> lowered = lower(ops.get("vyre-libs::nn::mlp_backward").build())
    >>> lowered.glsl.startswith("#version 450")
    True
"""
from .glsl import TRAP_WORDS, GlslNames, Lowered, LoweringError, f32_literal, glsl_names, lower, stem

__all__ = ["lower", "Lowered", "LoweringError", "TRAP_WORDS", "GlslNames", "glsl_names", "stem", "f32_literal"]
