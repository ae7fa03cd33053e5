"""CPU oracles of vyre's C VAST passes (vyre-libs/src/parsing/c/parse/vast/ref_*.rs), ported for
the ops' registered vectors and parity tests: kind classification (`classify`) and the
expression-shape rows (`expr_shape`). They read VAST words as plain lists of u32s.

Example::

    >>> from vyre_vk.ops.parsing.c.vast import vast_rows
    >>> typed = reference_classify_vast_node_kinds(vast_rows([1, 20, 1, 16], [0, 2, 4, 5], [1, 1, 1, 1]))
    >>> typed[0::10]
    [1, 7, 1, 0]
"""
from .classify import reference_classify_vast_node_kinds

__all__ = ["reference_classify_vast_node_kinds"]
