"""The reference fixpoint driver: re-run a one-step program until its frontier stops changing
(vyre's ``run_cpu_fixpoint_to_convergence``, conform/vyre-conform-runner/src/convergence_lens.rs).

Per round: run the program once (:func:`vyre_vk.reference.run`); every ReadWrite buffer keeps its
result; stop when ``current`` and ``next`` hold the same bytes; otherwise copy ``next`` into
``current``. ``current``/``next`` are vyre's inference (:func:`vyre_vk.ops.convergence.infer_fixpoint_buffers`)
unless given. After the contract's ``max_iterations`` rounds without convergence:
:class:`~vyre_vk.ops.convergence.ConvergenceError` (vyre's ``DidNotConverge``), never a truncated result.

Example::

    >>> from vyre_vk import ops
    >>> from vyre_vk.reference.convergence import converge
    >>> e = ops.get("vyre-libs::security::flows_to")
    >>> res = converge(e.build(), e.test_inputs()[0], e.id)   # chain 0 -> 1 -> 2 -> 3 from {0}
    >>> int(res.outputs["fout"][0]), res.rounds
    (15, 4)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np

from ..ir.binding import Binder, Inputs
from ..ir.program import Program
from ..ir.validate import validate as _validate
from ..ops.convergence import ConvergenceContract, ConvergenceError, contract_for, infer_fixpoint_buffers
from .eval import run

Target = Union[str, ConvergenceContract, int, None]


@dataclass
class Converged:
    """What a fixpoint run returns: every result buffer after the last round, and the loop's facts.

    ``rounds``: dispatches of the program (vyre counts the converging round); ``readbacks``: host
    reads of the convergence flag (the Vulkan driver's; the reference reads all state every round,
    reported as ``rounds``); ``submits``: queue submissions (Vulkan only, else 0)."""

    outputs: dict[str, np.ndarray]
    rounds: int
    current: str
    next: str
    readbacks: int = 0
    submits: int = 0


def check_loop_program(program: Program, current: Optional[str], nxt: Optional[str]) -> tuple[str, str]:
    """``(current, next)`` for `program`, checked the way both drivers need them."""
    if current is None or nxt is None:
        cur_guess, nxt_guess = infer_fixpoint_buffers(program)
        current, nxt = current or cur_guess, nxt or nxt_guess
    by_name = {b.name: b for b in program.buffers}
    for role, name in (("current", current), ("next", nxt)):
        if name not in by_name or by_name[name].is_workgroup:
            raise ConvergenceError(f"the {role} frontier `{name}` is not a storage buffer of the program. "
                                   f"Fix: name one of {[b.name for b in program.buffers if not b.is_workgroup]}.")
    if current == nxt or not by_name[nxt].is_result or by_name[current].element is not by_name[nxt].element:
        raise ConvergenceError(f"`{current}` -> `{nxt}` is no fixpoint pair: next must be a distinct ReadWrite "
                               "buffer of current's element type. Fix: pass current= and next= explicitly.")
    ranged = [b.name for b in program.buffers if b.output_byte_range is not None]
    if ranged:
        raise ConvergenceError(f"buffers {ranged} return only a byte range, so a round could not carry their "
                               "whole state into the next. Fix: drop with_output_byte_range for a fixpoint run.")
    return current, nxt


def converge(program: Program, inputs: Inputs, contract: Target = None, *, current: Optional[str] = None,
             next: Optional[str] = None, grid: Optional[Sequence[int]] = None,  # noqa: A002 - vyre's name
             max_steps: Optional[int] = None) -> Converged:
    """Run `program` to its fixpoint on the reference. `contract`: an op id, a
    :class:`ConvergenceContract`, a max_iterations int, or None (the program's Region generator)."""
    c = contract_for(contract, program)
    cur, nxt = check_loop_program(program, current, next)
    _validate(program)
    state = {k: np.array(v) for k, v in Binder(program.buffers)(inputs).items()}  # owned, writable copies
    if state[cur].nbytes != state[nxt].nbytes:
        raise ConvergenceError(f"`{cur}` holds {state[cur].size} elements and `{nxt}` {state[nxt].size}: the "
                               "frontiers could never compare equal. Fix: bind both with the same length.")
    for rounds in range(1, c.max_iterations + 1):
        state.update(run(program, state, grid=grid, validate=False, max_steps=max_steps))
        if np.array_equal(state[cur].view(np.uint8), state[nxt].view(np.uint8)):  # bytes, as vyre (NaN == NaN)
            outputs = {b.name: state[b.name].copy() for b in program.buffers if b.is_result}
            return Converged(outputs, rounds, cur, nxt, readbacks=rounds)
        state[cur] = state[nxt].copy()
    raise ConvergenceError(
        f"`{c.op_id}` did not converge in {c.max_iterations} rounds (`{nxt}` still changes; vyre's "
        "DidNotConverge). Fix: raise the ConvergenceContract's max_iterations or shrink the input "
        "(a frontier over n nodes converges within n + 1 rounds).", rounds=c.max_iterations)


__all__ = ["Converged", "check_loop_program", "converge"]
