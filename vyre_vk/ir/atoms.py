"""What a field of an IR variant may hold besides another IR object: an *atom* (None, bool, a
bounded int, float, str or enum member), and the error for anything else.

Shared by the expression (expr.py) and statement (node.py) constructors. Validation judges an
atom's value; a constructor only refuses what hashing or JSON cannot take (containers, NumPy
scalars, bytes, ints of thousands of digits) or what could hide another IR tree from the depth caps.

Example::

    >>> is_atom(3), is_atom("x"), is_atom([1])
    (True, True, False)
"""
from __future__ import annotations

import enum
from typing import Any, NoReturn

from .optable import AtomicOp, BinOp, UnOp
from .types import DataType, IRError, MemoryOrdering, show

#: Types an atom may have (ints apart: see is_atom). Read directly by the constructors' hot path.
ATOM_TYPES = frozenset({type(None), bool, float, str, BinOp, UnOp, AtomicOp, DataType, MemoryOrdering})
#: Bound of an atom int: beyond every integer the IR has, far below str()'s 4300-digit limit.
INT_BOUND = 2**64


def is_atom(v: Any) -> bool:
    """A scalar a variant field may hold instead of an IR object (None, bool, int, float, str, enum)."""
    if type(v) is int:
        return -INT_BOUND <= v <= INT_BOUND
    return type(v) in ATOM_TYPES or isinstance(v, enum.Enum)


def refuse_field(obj: Any, name: str, v: Any, want: str) -> NoReturn:
    """Raise the IRError for field `name` of `obj` holding `v` (neither an IR object nor an atom)."""
    raise IRError(f"{type(obj).__name__}.{name} holds a {type(v).__name__} {show(v)}. Fix: pass {want} (the "
                  "helpers, e.g. Expr.u32 / Expr.var / Node.store, check and convert their arguments).")


__all__ = ["ATOM_TYPES", "INT_BOUND", "is_atom", "refuse_field"]
