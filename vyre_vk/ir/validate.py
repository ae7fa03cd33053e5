"""Validation: every rule a Program must satisfy before the reference or a GPU runs it.

`validate(program)` raises the first problem found as a :class:`ValidationError` (or a
subclass naming the kind of problem). Each error carries `.path` (the node path, e.g.
``entry[0].region.body[1].if.then[0].loop(j).body[2]``), `.message` (what is wrong) and
`.fix` (how to fix it); ``str(err)`` is ``"<path>: <message> Fix: <fix>"``.

The rules live in validate_shape (workgroup size, buffers), validate_stmt (statements, scopes,
control flow), validate_expr (expression types), validate_subgroup (subgroup collectives) and
validate_hazard (fusion hazards: plain and atomic accesses of a buffer with no barrier between);
validate_base holds the errors, limits and context. This module is the front door and
re-exports their public names.

Example::

    >>> validate(Program.wrapped([], (64, 1, 1), [Node.assign("x", Expr.u32(1))]))
    Traceback (most recent call last):
    ...
    UndeclaredName: entry[0].region.body[0]: assignment to undeclared variable `x`. Fix: ...
"""
from __future__ import annotations

from typing import Optional

from . import node as N
from .program import CODEC, Program
from .types import DataType
from .validate_base import (MAX_EXPR_DEPTH, MAX_NESTING, MAX_NODES, MAX_WORKGROUP_INVOCATIONS, UNSUPPORTED,
                            BufferAccessError, BufferDeclError, ControlFlowError, Ctx, ProgramShapeError, ScopeError,
                            TypeMismatch, UndeclaredName, UnsupportedFeature, ValidationError, err)
from .validate_expr import static_zero as _static_zero  # noqa: F401 (opt/fold.py, testing/strategies.py)
from .validate_hazard import check_hazards
from .validate_shape import check_buffers, check_workgroup
from .validate_stmt import check_list
from .validate_subgroup import has_collective as _has_collective  # (lower/glsl.py)
from .walk import expr_type as _walk_expr_type

# The errors' public home is this module (reprs, pickles and docs name vyre_vk.ir.validate.X).
for _cls in (ValidationError, ProgramShapeError, BufferDeclError, UndeclaredName, ScopeError, TypeMismatch,
             BufferAccessError, UnsupportedFeature, ControlFlowError):
    _cls.__module__ = __name__
del _cls


def validate(program: Program) -> None:
    """Raise a ValidationError (subclass) for the first broken rule; return None if valid."""
    if not isinstance(program, Program):
        err(ProgramShapeError, "program", f"expected a Program, got {type(program).__name__}.",
            "build it with Program.wrapped(buffers, workgroup_size, entry).")
    check_workgroup(program)
    buffers = check_buffers(program)
    ctx = Ctx(program, buffers, max_nodes=MAX_NODES)  # this module's MAX_NODES: tests lower it
    ctx.has_sg = _has_collective(program.entry)
    if not program.entry:
        err(ProgramShapeError, "entry", "program entry has no top-level Region (it is empty).",
            "build the program with Program.wrapped(...), which wraps the body in a Region.")
    for i, n in enumerate(program.entry):
        if not isinstance(n, N.Region):
            err(ProgramShapeError, f"entry[{i}]",
                f"program entry node {i} is `{type(n).__name__}` instead of a Region.",
                "build the program with Program.wrapped(...) or wrap the body with wrap_anonymous(op_id, body).")
    check_list(ctx, program.entry, "entry", depth=0, divergent=False)
    check_hazards(program.entry, "entry")


def expr_type(program: Program, e: object, env: Optional[dict[str, DataType]] = None) -> Optional[DataType]:
    """Static type of `e` in `program` given variable types `env`: :func:`vyre_vk.ir.walk.expr_type`
    (the one expression typer outside validation's checker), with the program's buffers."""
    return _walk_expr_type(e, dict(env or {}), {b.name: b for b in program.buffers})  # type: ignore[arg-type]


__all__ = ["validate", "expr_type", "ValidationError", "ProgramShapeError", "BufferDeclError", "UndeclaredName",
           "ScopeError", "TypeMismatch", "BufferAccessError", "UnsupportedFeature", "ControlFlowError", "MAX_NODES",
           "MAX_NESTING", "MAX_EXPR_DEPTH", "MAX_WORKGROUP_INVOCATIONS", "UNSUPPORTED"]

CODEC["validate"] = validate
