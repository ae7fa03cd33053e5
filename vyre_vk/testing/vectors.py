"""A registered op's own test vectors, checked on the reference and on Vulkan.

Example:
    >>> from vyre_vk.ops import get
    >>> from vyre_vk.testing.vectors import check_op
    >>> for case in check_op(get("vyre-libs::nn::mlp_backward"), device):   # doctest: +SKIP
    ...     print(case.index, case.reference.ok, case.vulkan.ok)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from vyre_vk.errors import VyreError
from vyre_vk.ops import OpEntry
from vyre_vk.testing.parity import FAST_EXTRA_ULP, ParityReport, compare


class VectorError(VyreError, ValueError):
    """An op's registered test vectors are missing or do not fit its program (a registration bug)."""


@dataclass(frozen=True)
class CaseResult:
    op: str
    index: int
    reference: ParityReport
    vulkan: Optional[ParityReport]  # None when no device was given
    outputs: dict[str, np.ndarray]  # what Vulkan (or, without a device, the reference) produced

    @property
    def ok(self) -> bool:
        return self.reference.ok and (self.vulkan is None or self.vulkan.ok)


def expected_arrays(entry: OpEntry, program, case_bytes: list[bytes]) -> dict[str, np.ndarray]:
    results = [b for b in program.buffers if b.is_result]
    if len(case_bytes) != len(results):
        raise VectorError(f"op `{entry.id}` registers {len(case_bytes)} expected buffers for "
                         f"{len(results)} result buffers. Fix: the registration's expected_output.")
    return {b.name: np.frombuffer(raw, dtype=np.dtype(b.element.numpy).newbyteorder("<"))
            .astype(b.element.numpy) for b, raw in zip(results, case_bytes)}


def check_op(entry: OpEntry, device=None, precision: str = "exact") -> list[CaseResult]:
    """Run every registered case on the reference (and on ``device`` if given, compiled in
    ``precision`` and compared by its bound: testing.parity.compare)."""
    from vyre_vk import reference

    if entry.test_inputs is None or entry.expected_output is None:
        raise VectorError(f"op `{entry.id}` is registered without test vectors. "
                         "Fix: give it test_inputs and expected_output.")
    program = entry.build()
    cases, expected = entry.test_inputs(), entry.expected_output()
    if len(cases) != len(expected):
        raise VectorError(f"op `{entry.id}`: {len(cases)} input cases but {len(expected)} expected outputs. "
                          "Fix: register one expected output per input case.")
    kernel = device.compile(program, precision=precision) if device is not None else None
    out = []
    for i, (inputs, exp_bytes) in enumerate(zip(cases, expected)):
        exp = expected_arrays(entry, program, exp_bytes)
        ref = reference.run(program, inputs)
        ref_report = compare(program, exp, ref, entry.ulp)
        vk_report, got = None, ref
        if kernel is not None:
            got = kernel.run(inputs)
            ulp = entry.ulp if precision == "exact" or entry.ulp is None else entry.ulp + FAST_EXTRA_ULP
            vk_report = compare(program, exp, got, ulp, precision)
        out.append(CaseResult(entry.id, i, ref_report, vk_report, got))
    return out
