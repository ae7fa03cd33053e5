"""Convergence contracts: ops whose program performs ONE step of a fixpoint (port of
vyre-harness/src/lib.rs ``ConvergenceContract`` and the buffer rule of
conform/vyre-conform-runner/src/convergence_lens.rs).

vyre-libs submits ``ConvergenceContract { op_id, max_iterations: 4096 }`` to its own inventory,
next to (not inside) the op's ``OpEntry``; the conform runner then re-dispatches the op until the
frontier stops changing. Here the contract is data in a registry keyed by op id, read by the two
drivers: :func:`vyre_vk.reference.convergence.converge` (NumPy) and
:func:`vyre_vk.runtime.convergence.converge` (Vulkan, buffers resident, loop on the device).

The loop, exactly vyre's (``run_fixpoint_to_convergence``): with ``current`` the program's
read-only frontier and ``next`` its last ReadWrite buffer, per round

1. dispatch the program once; every ReadWrite buffer keeps what the dispatch left in it;
2. if ``current == next`` (byte for byte) stop: converged after this round;
3. else copy ``next`` into ``current`` and go on; after ``max_iterations`` rounds without
   convergence the run fails (:class:`ConvergenceError`, never a silently truncated result).

Example::

    >>> from vyre_vk.ops.convergence import ConvergenceContract, infer_fixpoint_buffers
    >>> from vyre_vk.ops import get
    >>> c = convergence_contract("vyre-libs::security::flows_to")
    >>> c.max_iterations
    4096
    >>> infer_fixpoint_buffers(get(c.op_id).build())
    ('fin', 'fout')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from ..errors import VyreError
from ..ir import BufferAccess, Program

#: vyre-libs' bound for every contract it registers (AUDIT_2026-04-24 F-FT-03 raised it from 64).
DEFAULT_MAX_ITERATIONS = 4096


class ConvergenceError(VyreError, RuntimeError):
    """A fixpoint loop did not converge within its bound, or the program cannot be driven by one.

    ``rounds`` is how many rounds ran (``None`` when the program was refused before running)."""

    def __init__(self, message: str, rounds: Optional[int] = None) -> None:
        self.rounds = rounds
        super().__init__(message)


@dataclass(frozen=True)
class ConvergenceContract:
    """vyre's ``ConvergenceContract``: ``op_id`` must be re-dispatched until its frontier stops
    changing, at most ``max_iterations`` rounds."""

    op_id: str
    max_iterations: int = DEFAULT_MAX_ITERATIONS

    def __post_init__(self) -> None:
        if not isinstance(self.max_iterations, int) or isinstance(self.max_iterations, bool) \
                or not 1 <= self.max_iterations <= 0xFFFFFFF:
            raise ConvergenceError(f"ConvergenceContract for `{self.op_id}`: max_iterations "
                                   f"{self.max_iterations!r} is not an integer in 1..2^28. "
                                   f"Fix: use vyre's bound, {DEFAULT_MAX_ITERATIONS}.")


_CONTRACTS: dict[str, ConvergenceContract] = {}


def register_convergence(op_id: str, max_iterations: int = DEFAULT_MAX_ITERATIONS) -> ConvergenceContract:
    """Declare that `op_id` is one fixpoint step (vyre's ``inventory::submit!{ConvergenceContract}``)."""
    contract = ConvergenceContract(op_id, max_iterations)
    old = _CONTRACTS.get(op_id)
    if old is not None and old != contract:
        raise ConvergenceError(f"op `{op_id}` already has a ConvergenceContract ({old.max_iterations} rounds). "
                               "Fix: register one contract per op id.")
    _CONTRACTS[op_id] = contract
    return contract


def convergence_contract(op_id: str) -> Optional[ConvergenceContract]:
    """The contract registered for `op_id` (op modules loaded first), or None: a one-dispatch op."""
    from .registry import _load_all

    _load_all()
    return _CONTRACTS.get(op_id)


def all_contracts() -> list[ConvergenceContract]:
    """Every registered contract, sorted by op id."""
    from .registry import _load_all

    _load_all()
    return [_CONTRACTS[k] for k in sorted(_CONTRACTS)]


def contract_for(target: Union[str, Program, ConvergenceContract, int, None],
                 program: Optional[Program] = None) -> ConvergenceContract:
    """The contract a driver runs under: given, an op id's, the program's outermost Region
    generator's (what vyre's registry keys on), or an explicit ``max_iterations``."""
    if isinstance(target, ConvergenceContract):
        return target
    if isinstance(target, int) and not isinstance(target, bool):
        name = program.entry[0].generator if program is not None and program.entry and \
            hasattr(program.entry[0], "generator") else "<program>"
        return ConvergenceContract(name, target)
    op_id = target if isinstance(target, str) else None
    if op_id is None and program is not None:
        op_id = program.entry_op_id or next((getattr(n, "generator", None) for n in program.entry[:1]), None)
    contract = convergence_contract(op_id) if op_id else None
    if contract is None:
        known = ", ".join(c.op_id.rpartition("::")[2] for c in all_contracts())
        raise ConvergenceError(f"no ConvergenceContract is registered for `{op_id}`. Fix: pass max_iterations= "
                               f"explicitly, or run one of the contracted ops ({known}).")
    return contract


def _current_score(current: str, nxt: str) -> int:
    # vyre's fixpoint_current_score: `<p>in` pairs with `<p>out`, `current` with `next`; frontier-like
    # names next; graph tables (tags, kinds, offsets) last.
    if nxt.endswith("out") and current == nxt[:-3] + "in":
        return 0
    if "next" in nxt and current == nxt.replace("next", "current"):
        return 0
    if "current" in current or "frontier" in current or current.endswith("in"):
        return 1
    if "tag" in current or "kind" in current or "offset" in current:
        return 8
    return 4


def infer_fixpoint_buffers(program: Program) -> tuple[str, str]:
    """``(current, next)`` as vyre's convergence lens picks them: ``next`` is the last ReadWrite
    buffer; ``current`` the best-scoring ReadOnly buffer of the same element count (first wins ties)."""
    rw = [b for b in program.buffers if b.access is BufferAccess.ReadWrite]
    if not rw:
        raise ConvergenceError("the program has no ReadWrite buffer to hold the fixpoint's next frontier. "
                               "Fix: declare the frontier it grows as ReadWrite (vyre: the last RW buffer).")
    nxt = rw[-1]
    best: Optional[tuple[int, str]] = None
    for b in program.buffers:
        if b.access is BufferAccess.ReadOnly and b.count == nxt.count:
            score = _current_score(b.name, nxt.name)
            if best is None or score < best[0]:
                best = (score, b.name)
    if best is None:
        raise ConvergenceError(f"no ReadOnly buffer has the {nxt.count} elements of `{nxt.name}`, so the loop has "
                               "no current frontier to copy it into. Fix: declare the input frontier ReadOnly with "
                               "the same count as the output frontier.")
    return best[1], nxt.name


__all__ = ["ConvergenceContract", "ConvergenceError", "DEFAULT_MAX_ITERATIONS", "all_contracts", "contract_for",
           "convergence_contract", "infer_fixpoint_buffers", "register_convergence"]
