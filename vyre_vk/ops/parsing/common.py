"""What the parsing ops share: vyre's ``tag_program`` / ``child_phase`` region helpers, the
self-exclusive generator marker, and short IR spellings for the byte-classifier bodies.

Example::

    >>> mark_self_exclusive_region("vyre-libs::parsing::c_lexer")
    'vyre-libs::parsing::c_lexer#self-exclusive'
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from ...ir import Expr, Node, Program, Region, wrap_child
from ...ir import mark_self_exclusive_region, tag_program  # noqa: F401  (kept here for the parsing ops)
from ..registry import OpParamError


def non_composable(p: Program) -> Program:
    """vyre's ``.with_non_composable_with_self(true)``."""
    return dataclasses.replace(p, non_composable_with_self=True)


def with_entry_op_id(p: Program, op_id: str) -> Program:
    return dataclasses.replace(p, entry_op_id=op_id)


def child_phase(parent_op_id: str, phase_op_id: str, body: Sequence[Node]) -> Region:
    """vyre-libs parsing/composition.rs: a phase Region whose source_region names its op."""
    return wrap_child(phase_op_id, parent_op_id, body)


def check_len(op_id: str, name: str, value: int, minimum: int = 0) -> int:
    """`value` as a u32 count >= `minimum`, or OpParamError."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= 0xFFFFFFFF:
        raise OpParamError(f"{op_id}: `{name}` = {value!r} is not a u32 count >= {minimum}. "
                           f"Fix: pass an int {name} in [{minimum}, 2^32).")
    return value


# ---- short spellings (the classifier bodies are long chains of these)
v, u = Expr.var, Expr.u32


def byte_load(buffer: str, index: Expr) -> Expr:
    """The low byte of ``buffer[index]``: each u32 haystack element carries one source byte."""
    return Expr.bitand(Expr.load(buffer, index), u(0xFF))


def ascii(ch: str) -> Expr:
    return u(ord(ch))


def byte_eq(value: Expr, ch: str) -> Expr:
    return Expr.eq(value, ascii(ch))


def between(value: Expr, lo: str, hi: str) -> Expr:
    return Expr.and_(Expr.ge(value, ascii(lo)), Expr.le(value, ascii(hi)))


def is_alpha(value: Expr) -> Expr:
    return Expr.or_(between(value, "a", "z"), between(value, "A", "Z"))


def is_digit(value: Expr) -> Expr:
    return between(value, "0", "9")


def inc(name: str) -> Node:
    """``name = name + 1``."""
    return Node.assign(name, Expr.add(v(name), u(1)))


def flag_is(name: str, value: int) -> Expr:
    return Expr.eq(v(name), u(value))


def is_any(x: Expr, values: Sequence[int]) -> Expr:
    """``x == values[0] || x == values[1] || ...`` (left to right, as vyre folds it).

    >>> type(is_any(Expr.var("t"), [1, 2])).__name__
    'BinOpExpr'
    """
    out = Expr.eq(x, u(values[0]))
    for val in values[1:]:
        out = Expr.or_(out, Expr.eq(x, u(val)))
    return out
