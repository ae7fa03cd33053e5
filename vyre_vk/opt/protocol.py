"""The pass protocol: what every optimiser pass declares, and what one run of it returns.

A pass is an object with a ``name`` (what ``optimize(passes=[...])`` selects and what its
:class:`~vyre_vk.opt.pipeline.PassReport` is called), a ``kind``, ``applies(program, ctx)``
(a cheap precondition: False only where ``run`` could not change the program), ``run(program,
ctx)`` (one stage in, a :class:`Rewrite` or None out) and ``explain(rewrite)`` (the one-line
why of the report). The stage-level metadata tells :func:`vyre_vk.opt.optimize` how to drive
it over a graph's stages, so the pipeline needs no per-pass special cases:

* ``kind``: ``"scalar"`` (IR -> IR within one stage), ``"split"`` (one stage -> several plus
  scratch buffers) or ``"schedule"`` (IR -> IR changing how a stage is dispatched or issued);
* ``repeat``: offer the last stage of a split to the pass again;
* ``max_stages`` / ``max_splits``: stop splitting at that many stages in the graph / splits;
* ``tidy``: passes re-run (unreported, when also chosen) after this one changed something.

Each pass is declared next to its implementation (fold.py, dce.py, ...); ``PASS_ORDER`` in
pipeline.py lists them in the order they run.

Example::

    >>> from vyre_vk.opt import PASS_ORDER
    >>> fold = PASS_ORDER[0]
    >>> fold.name, fold.kind, isinstance(fold, Pass)
    ('constant_fold', 'scalar', True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional, Protocol, runtime_checkable

from ..errors import VyreError
from ..ir.program import BufferDecl, Program

PassKind = Literal["scalar", "split", "schedule"]


class OptimizerError(VyreError, ValueError):
    """A bad request to the optimiser (an unknown pass name, a bad knob); the message ends with a Fix."""


@dataclass(frozen=True)
class PassContext:
    """What a pass may depend on besides the stage itself: the device class and the knobs
    :func:`vyre_vk.opt.optimize` was given (local size already resolved for the class)."""
    device_class: str = "default"
    local_size: int = 256
    min_workgroups: int = 1
    min_local: int = 64
    hoist_min_loops: int = 1
    precision: str = "exact"  # "fast": passes with precision = "fast" may reassociate (docs/PRECISION.md)
    shared_memory_bytes: int = 32768  # the device's maxComputeSharedMemorySize (compile's limits)


#: The context the pass functions (constant_fold(p), ...) run their pass object with.
DEFAULT_CONTEXT = PassContext()


@dataclass(frozen=True)
class Rewrite:
    """What a pass made of one stage: the stages that replace it (one for an IR -> IR pass,
    several for a split, run in order), the scratch buffers the split added, and `detail`,
    whatever the pass's ``explain`` needs to say why."""
    stages: tuple[Program, ...]
    scratch: tuple[BufferDecl, ...] = ()
    detail: Any = None


@runtime_checkable
class Pass(Protocol):
    """The shape of an optimiser pass (see the module docstring)."""
    name: str
    kind: PassKind
    repeat: bool
    max_stages: Optional[int]
    max_splits: Optional[int]
    tidy: tuple[str, ...]

    def applies(self, program: Program, ctx: PassContext) -> bool: ...

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]: ...

    def explain(self, rewrite: Rewrite) -> str: ...


class PassBase:
    """Defaults for a :class:`Pass`: a scalar pass that always applies, no stage limits.

    A pass also compares equal to (and hashes like) its name, so code written when
    ``PASS_ORDER`` held names keeps working (``p != "fission"``, ``"cse" in PASS_ORDER``);
    new code should use ``PASS_NAMES`` for names."""
    name: str = ""
    kind: PassKind = "scalar"
    repeat: bool = False
    max_stages: Optional[int] = None
    max_splits: Optional[int] = None
    tidy: tuple[str, ...] = ()
    #: "exact": the reference's bits, in every precision; "fast": runs only in the fast precision
    precision: str = "exact"

    def applies(self, program: Program, ctx: PassContext) -> bool:
        return True

    def run(self, program: Program, ctx: PassContext) -> Optional[Rewrite]:  # pragma: no cover - abstract
        raise NotImplementedError(f"pass {self.name} has no run()")

    def explain(self, rewrite: Rewrite) -> str:
        return "" if rewrite.detail is None else str(rewrite.detail)

    def on(self, program: Program) -> tuple[Program, str]:
        """A scalar pass on one program in the default context: (program, the one-line why)."""
        r = self.run(program, DEFAULT_CONTEXT)
        return r.stages[0], self.explain(r)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{self.kind} pass {self.name}>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return other == self.name
        return other is self

    def __hash__(self) -> int:
        return hash(self.name)


__all__ = ["Pass", "PassBase", "PassContext", "PassKind", "Rewrite", "OptimizerError", "DEFAULT_CONTEXT"]
