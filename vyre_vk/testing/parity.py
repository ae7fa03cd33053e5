"""Reference-vs-Vulkan parity, compared the way vyre's harness compares backends.

Non-F32 buffers must be identical. F32 elements must have equal bits or be within
the ULP budget on a sign-ordered integer line (+0 and -0 are 1 ULP apart; a NaN
matches only the same NaN): 4 ULP for programs of elementary ops, 128 if the
program uses a transcendental (exp, log, sqrt, sin, ...), or what the caller says.

In the fast precision (``precision="fast"``, docs/PRECISION.md) an f32 element's distance is
``|got - expected|`` in ULPs of ``expected``, and never in units below FLT_MIN (a subnormal the
reference flushed to zero is at most 1 ULP away), any NaN matches any NaN, and the window grows by FAST_EXTRA_ULP.

Example:
    >>> from vyre_vk.testing.parity import assert_parity
    >>> assert_parity(program, {"a": a})             # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping, Optional, Sequence

import numpy as np

from vyre_vk.ir import DataType, Program
from vyre_vk.ir.expr import UnOpExpr
from vyre_vk.ir.optable import ELEMENTARY_F32_ULP, TRANSCENDENTAL_UNOPS
from vyre_vk.ir.walk import node_all_exprs

TRANSCENDENTAL_F32_ULP = 128
#: What the fast precision may add to the window (docs/PRECISION.md): a builtin exp within its
#: 128-ULP window and changed rounding orders, room for two builtins in one result's chain.
FAST_EXTRA_ULP = 256
PRECISIONS = ("exact", "fast")
_FLT_MIN = float(np.finfo(np.float32).tiny)


def program_exprs(program: Program) -> Iterator:
    """Every expression of every statement, nested ones included."""
    return node_all_exprs(program.entry)


def ulp_budget(program: Program) -> int:
    """vyre's default f32 window for ``program``."""
    uses_transcendental = any(isinstance(e, UnOpExpr) and e.op in TRANSCENDENTAL_UNOPS
                              for e in program_exprs(program))
    return TRANSCENDENTAL_F32_ULP if uses_transcendental else ELEMENTARY_F32_ULP


def ordered_f32(bits: np.ndarray) -> np.ndarray:
    """Map f32 bit patterns to int64 so adjacent floats differ by 1 (-0 sits just below +0)."""
    u = np.asarray(bits, dtype=np.uint32).astype(np.int64)
    return np.where(u & 0x80000000, -(u & 0x7FFFFFFF) - 1, u)


def ulp_distance(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Per-element ULP distance of two float32 arrays; NaN vs anything but the same NaN is 2**32."""
    e = np.ascontiguousarray(expected, dtype=np.float32).view(np.uint32)
    g = np.ascontiguousarray(got, dtype=np.float32).view(np.uint32)
    d = np.abs(ordered_f32(e) - ordered_f32(g))
    nan = np.isnan(e.view(np.float32)) | np.isnan(g.view(np.float32))
    return np.where(nan & (e != g), np.int64(2**32), np.where(nan, 0, d))


def fast_distance(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """The fast precision's per-element distance (module docstring), in whole ULPs, rounded up."""
    e = np.asarray(expected, dtype=np.float64).reshape(-1)
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    # below FLT_MIN a ULP is FLT_MIN itself: a subnormal against the reference's flushed zero is <= 1
    ulp = np.maximum(np.spacing(np.abs(e).astype(np.float32)).astype(np.float64), _FLT_MIN)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(g - e) / ulp
    nan_e, nan_g = np.isnan(e), np.isnan(g)
    d = np.where(e == g, 0.0, d)  # equal infinities
    d = np.where(nan_e | nan_g, np.where(nan_e & nan_g, 0.0, 2.0 ** 32), d)
    return np.ceil(np.nan_to_num(d, nan=2.0 ** 32, posinf=2.0 ** 32)).astype(np.int64)


@dataclass(frozen=True)
class Mismatch:
    buffer: str
    index: int
    expected: object
    got: object
    ulps: Optional[int]
    count: int  # elements of this buffer outside the window

    def __str__(self) -> str:
        dist = f", {self.ulps} ULP" if self.ulps is not None else ""
        return (f"buffer `{self.buffer}`: {self.count} element(s) differ; worst at [{self.index}]: "
                f"expected {self.expected!r}, got {self.got!r}{dist}")


@dataclass(frozen=True)
class ParityReport:
    ulp: int
    worst_ulps: int                 # over all F32 elements
    mismatches: tuple[Mismatch, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches


def compare(program: Program, expected: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray],
            ulp: Optional[int] = None, precision: str = "exact") -> ParityReport:
    """Compare every result buffer of ``program``; ``ulp`` defaults to :func:`ulp_budget` (plus
    FAST_EXTRA_ULP in the fast precision, whose distance is :func:`fast_distance`)."""
    if precision not in PRECISIONS:
        from vyre_vk.compile import OptionsError

        raise OptionsError(f"precision {precision!r} is not available. Fix: use one of {list(PRECISIONS)}.")
    fast = precision == "fast"
    budget = (ulp_budget(program) + (FAST_EXTRA_ULP if fast else 0)) if ulp is None else int(ulp)
    worst = 0
    bad: list[Mismatch] = []
    for decl in program.buffers:
        if decl.name not in expected:
            continue
        e = np.asarray(expected[decl.name]).reshape(-1)
        if decl.name not in got:
            bad.append(Mismatch(decl.name, -1, f"{e.size} elements", "nothing", None, e.size))
            continue
        g = np.asarray(got[decl.name]).reshape(-1)
        if e.size != g.size:
            bad.append(Mismatch(decl.name, -1, f"{e.size} elements", f"{g.size} elements", None, max(e.size, g.size)))
            continue
        if decl.element is DataType.F32:
            d = fast_distance(e, g) if fast else ulp_distance(e, g)
            if d.size:
                worst = max(worst, int(d.max()))
            over = np.flatnonzero(d > budget)
            if over.size:
                i = int(over[np.argmax(d[over])])
                bad.append(Mismatch(decl.name, i, float(e[i]), float(g[i]), int(d[i]), int(over.size)))
        else:
            diff = np.flatnonzero(e != g)  # integers: equal values are equal bits (an empty result has none)
            if diff.size:
                i = int(diff[0])
                bad.append(Mismatch(decl.name, i, e[i].item(), g[i].item(), None, int(diff.size)))
    return ParityReport(budget, worst, tuple(bad))


def assert_parity(program: Program, inputs, *, ulp: Optional[int] = None, device=None,
                  grid: Optional[Sequence[int]] = None, max_steps: Optional[int] = None,
                  precision: str = "exact") -> ParityReport:
    """Run ``program`` on the reference and on Vulkan; raise AssertionError naming the worst element.

    ``precision="fast"`` compiles in the fast precision and compares by its bound (:func:`compare`);
    integer results must still be equal.

    ``max_steps`` is the reference's step budget (:func:`vyre_vk.reference.run`; None: the
    environment's or the default). A loop past it raises ``StepBudgetExceeded`` before Vulkan runs.
    """
    from vyre_vk import reference
    from vyre_vk.runtime import default_device

    expected = reference.run(program, inputs, grid=grid, max_steps=max_steps)
    got = (device or default_device()).compile(program, precision=precision).run(inputs, grid=grid)
    report = compare(program, expected, got, ulp, precision)
    if not report.ok:
        lines = "\n  ".join(str(m) for m in report.mismatches)
        raise AssertionError(f"Vulkan ({precision}) differs from the reference (f32 window {report.ulp} ULP):\n  {lines}")
    return report
