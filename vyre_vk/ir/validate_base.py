"""Validation's shared pieces: the error classes, the limits, and the checking context.

Part of :mod:`vyre_vk.ir.validate` (which re-exports the public names); the rules live in
validate_shape (workgroup, buffers), validate_expr (expression types), validate_stmt
(statements, scopes, control flow) and validate_subgroup (subgroup uniformity).

Example::

    >>> err = TypeMismatch("entry[0]", "bad.", "fix it.")
    >>> str(err), isinstance(err, ValidationError)
    ('entry[0]: bad. Fix: fix it.', True)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn, Optional

from vyre_vk.errors import VyreError

from .program import BufferDecl, Program
from .types import DataType

U32, I32, F32, BOOL = DataType.U32, DataType.I32, DataType.F32, DataType.Bool

MAX_NODES = 100_000  # V019
MAX_NESTING = 64  # V018
MAX_EXPR_DEPTH = 128  # V033
MAX_WORKGROUP_INVOCATIONS = 1024  # Vulkan maxComputeWorkGroupInvocations on every desktop GPU
UNSUPPORTED = "not supported by the Vulkan backend yet"


class ValidationError(VyreError, ValueError):
    """A program breaks an IR rule. Attributes: path, message, fix."""

    def __init__(self, path: str, message: str, fix: str):
        self.path, self.message, self.fix = path, message, fix
        super().__init__(f"{path}: {message} Fix: {fix}")


class ProgramShapeError(ValidationError):
    """Entry structure, workgroup size or size limits."""


class BufferDeclError(ValidationError):
    """Buffer declarations: names, bindings, counts, element types, output markers."""


class UndeclaredName(ValidationError):
    """A variable or buffer that is not in scope / not declared."""


class ScopeError(ValidationError):
    """Shadowing, duplicate lets, assignment to loop variables."""


class TypeMismatch(ValidationError):
    """Operand, condition, bound, index or value of the wrong type."""


class BufferAccessError(ValidationError):
    """Store to a read-only buffer, atomics on the wrong kind of buffer, bad constant index."""


class UnsupportedFeature(ValidationError):
    """A type, node or expression the Vulkan backend does not implement yet."""


class ControlFlowError(ValidationError):
    """Barriers in divergent control flow, bad orderings, unreachable code, fusion hazards."""


# Subgroup uniformity levels (see validate_subgroup): workgroup-uniform, subgroup-uniform,
# lane-linear, divergent.
SG_U, SG_S, SG_L, SG_D = "u", "s", "l", "d"


@dataclass
class Binding:
    """What validation knows of a variable in scope."""

    type: Optional[DataType]
    loop_var: bool
    divergent: bool
    sg: str = SG_D  # subgroup uniformity level, used only where subgroup ops appear


@dataclass
class Ctx:
    """State of one validation run: the program, its buffers by name, the scopes, counters."""

    program: Program
    buffers: dict[str, BufferDecl]
    scopes: list[dict[str, Binding]] = field(default_factory=list)
    nodes: int = 0
    max_nodes: int = MAX_NODES        # read from vyre_vk.ir.validate at each run (tests lower it)
    sg_ctrl: str = SG_U               # uniformity of the control flow reaching the current statement
    sg_loops_uniform: bool = True     # every enclosing loop has workgroup-uniform bounds
    sg_returned: Optional[str] = None  # path of a Return under invocation-dependent control flow
    has_sg: bool = False              # the program has subgroup collectives (else levels are not tracked)

    def lookup(self, name: str) -> Optional[Binding]:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None


def err(cls: type, path: str, message: str, fix: str) -> NoReturn:
    """Raise `cls` (a ValidationError subclass) for `path`."""
    raise cls(path, message, fix)


def tname(t: Optional[DataType]) -> str:
    return t.value if t is not None else "unknown"


__all__ = ["ValidationError", "ProgramShapeError", "BufferDeclError", "UndeclaredName", "ScopeError", "TypeMismatch",
           "BufferAccessError", "UnsupportedFeature", "ControlFlowError", "MAX_NODES", "MAX_NESTING", "MAX_EXPR_DEPTH",
           "MAX_WORKGROUP_INVOCATIONS", "UNSUPPORTED", "Binding", "Ctx", "err", "tname", "SG_U", "SG_S", "SG_L", "SG_D"]
