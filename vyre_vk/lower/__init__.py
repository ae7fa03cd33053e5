"""Lowering: vyre IR Program -> GLSL 450 compute shader text (see glsl.py).

Everything GLSL lives here, none of it in the IR: spelling.py (operators, casts, types and
literals keyed by the IR's enums), helpers.py (helper functions, with ffmath.py and ieee.py),
names.py (program names), exprs.py / stmts.py (one method per expression / node kind),
glsl.py (the shader around them).

Example::

    >>> from vyre_vk.lower import lower
    >>> from vyre_vk import ops
    >>> lowered = lower(ops.get("vyre-libs::nn::mlp_backward").build())
    >>> lowered.glsl.startswith("#version 450")
    True
"""
from .glsl import lower
from .names import GlslNames, glsl_names, stem
from .result import TRAP_WORDS, Lowered, LoweringError
from .spelling import f32_literal

__all__ = ["lower", "Lowered", "LoweringError", "TRAP_WORDS", "GlslNames", "glsl_names", "stem", "f32_literal"]
