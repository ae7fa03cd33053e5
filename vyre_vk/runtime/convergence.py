"""The Vulkan fixpoint driver: the convergence loop of a one-step program runs on the device.

vyre's conform runner drives a ConvergenceContract op from the host, round-tripping every
buffer each round (dispatch, download, compare, upload). Here the buffers are uploaded once and
stay resident; each submission replays ``rounds_per_submit`` rounds recorded once, and between
submissions the host reads back one u32 word, the flag. A round is three dispatches, each
followed by a compute->compute memory barrier:

1. the program, guarded: its entry sits under ``if flag[0] == 0`` (one extra read-only 1-word
   binding), so rounds after the loop has finished change nothing;
2. *compare*: per word, ``if current != next: atomicOr(aux[0], 1)``; then ``current = next``
   (a no-op when they are equal, so copying unconditionally is vyre's "copy unless converged");
3. *finalize* (one invocation): ``aux[1] += 1`` (rounds); if no word differed the flag becomes
   the round count (converged), else if the count reached ``max_iterations`` it becomes
   ``0x80000000 | rounds`` (did not converge); ``aux[0] = 0``.

The loop therefore stops at exactly the round vyre's host loop stops at, whatever the batch size,
and the host learns it from the flag alone; results are downloaded once at the end. Programs
with a Barrier cannot take the guard (a barrier under a load-dependent ``if`` is divergent
control flow, V010) and are refused with a ConvergenceError.

Example::

    >>> from vyre_vk.runtime import Device
    >>> from vyre_vk.runtime.convergence import converge
    >>> e = ops.get("vyre-libs::security::flows_to")                  # doctest: +SKIP
    >>> with Device() as dev:                                         # doctest: +SKIP
    ...     res = converge(dev, e.build(), e.test_inputs()[0], e.id)
    ...     res.outputs["fout"], res.rounds, res.readbacks            # ([15], 4, 1)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..ir import BufferDecl, DataType, Expr, Node, Program, wrap_anonymous
from ..ir.binding import Inputs
from ..ops.convergence import ConvergenceError
from ..reference.convergence import Converged, Target, check_loop_program
from . import kp_bridge
from .buffer import DeviceArray
from .inputs import Binder
from .kernel import KernelTrapError

if TYPE_CHECKING:
    from .device import Device

#: Rounds recorded per submission: the host reads the flag once per this many rounds.
DEFAULT_ROUNDS_PER_SUBMIT = 16
FLAG = "__vyre_fixpoint_flag"
AUX = "__vyre_fixpoint_aux"
_CUR, _NXT = "__vyre_fixpoint_current", "__vyre_fixpoint_next"
EXCEEDED_BIT = 0x80000000
U32 = DataType.U32


def guarded(program: Program) -> Program:
    """`program` with its entry under ``if flag[0] == 0``, the flag a read-only word at a new binding."""
    if any(_has_barrier(n) for n in program.entry):
        raise ConvergenceError("the program has a Barrier, which may not sit under the convergence guard "
                               "(a load-dependent if: V010). Fix: run it with vyre_vk.reference.convergence, or "
                               "split the program at its barriers.")
    binding = 1 + max((b.binding for b in program.buffers if not b.is_workgroup), default=-1)
    flag = BufferDecl.read(FLAG, binding, U32).with_count(1)
    body = [Node.if_then(Expr.eq(Expr.load(FLAG, Expr.u32(0)), Expr.u32(0)), list(program.entry))]
    return Program.wrapped([*program.buffers, flag], program.workgroup_size,
                           [wrap_anonymous("vyre-vk::fixpoint::guard", body)])


def _has_barrier(node: Any) -> bool:
    from ..ir import node as N

    if isinstance(node, N.Barrier):
        return True
    return any(_has_barrier(c) for name in node._body_names for c in getattr(node, name))


def compare_program(words: int) -> Program:
    """Per word: note a difference in ``aux[0]``, then copy next into current (skipped once the flag is set)."""
    t = Expr.gid_x()
    differs = Node.if_then(Expr.ne(Expr.var("c"), Expr.var("n")),
                           [Node.let_bind("_old", Expr.atomic_or(AUX, Expr.u32(0), Expr.u32(1)))])
    body = [Node.if_then(Expr.eq(Expr.load(FLAG, Expr.u32(0)), Expr.u32(0)), [
        Node.if_then(Expr.lt(t, Expr.u32(words)), [
            Node.let_bind("c", Expr.load(_CUR, t)), Node.let_bind("n", Expr.load(_NXT, t)),
            differs, Node.store(_CUR, t, Expr.var("n"))])])]
    buffers = [BufferDecl.read_write(_CUR, 0, U32).with_count(words), BufferDecl.read(_NXT, 1, U32).with_count(words),
               BufferDecl.read(FLAG, 2, U32).with_count(1), BufferDecl.read_write(AUX, 3, U32).with_count(2)]
    return Program.wrapped(buffers, (256, 1, 1), [wrap_anonymous("vyre-vk::fixpoint::compare", body)])


def finalize_program(max_iterations: int) -> Program:
    """One invocation: count the round; set the flag to the round count (converged) or to
    ``EXCEEDED_BIT | rounds`` at the bound; clear the difference word."""
    rounds = Expr.var("rounds")
    # vyre's grid rule gives this program 2 invocations (its largest result has 2 words): only the first acts.
    first = Expr.and_(Expr.eq(Expr.gid_x(), Expr.u32(0)), Expr.eq(Expr.load(FLAG, Expr.u32(0)), Expr.u32(0)))
    body = [Node.if_then(first, [
        Node.let_bind("rounds", Expr.add(Expr.load(AUX, Expr.u32(1)), Expr.u32(1))),
        Node.store(AUX, Expr.u32(1), rounds),
        Node.if_then_else(Expr.eq(Expr.load(AUX, Expr.u32(0)), Expr.u32(0)),
                          [Node.store(FLAG, Expr.u32(0), rounds)],
                          [Node.if_then(Expr.ge(rounds, Expr.u32(max_iterations)),
                                        [Node.store(FLAG, Expr.u32(0), Expr.bitor(rounds, Expr.u32(EXCEEDED_BIT)))])]),
        Node.store(AUX, Expr.u32(0), Expr.u32(0))])]
    buffers = [BufferDecl.read_write(FLAG, 0, U32).with_count(1), BufferDecl.read_write(AUX, 1, U32).with_count(2)]
    return Program.wrapped(buffers, (1, 1, 1), [wrap_anonymous("vyre-vk::fixpoint::finalize", body)])


class _Loop:
    """Tensors, pipelines and the recorded batch of one converge() call (destroyed at its end)."""

    def __init__(self, device: "Device", program: Program, arrays: dict, cur: str, nxt: str,
                 max_iterations: int, rounds_per_submit: int) -> None:
        self.owned: list = []
        self.algorithms: list = []
        self.upload = self.batch = None
        try:
            self._build(device, program, arrays, cur, nxt, max_iterations, rounds_per_submit)
        except BaseException:
            self.destroy()  # what was made so far: nothing leaks until the device closes
            raise

    def _build(self, device: "Device", program: Program, arrays: dict, cur: str, nxt: str,
               max_iterations: int, rounds_per_submit: int) -> None:
        from vyre_vk.lower import TRAP_WORDS

        mgr = device.manager
        self.tensors: dict[str, Any] = {}
        for name, value in arrays.items():
            if isinstance(value, DeviceArray):
                self.tensors[name] = value.tensor_for(device)  # read-only here: never written by the loop
            else:
                self.tensors[name] = self._own(kp_bridge.tensor(mgr, np.ascontiguousarray(value)))
        self.flag = self.tensors[FLAG] = self._own(kp_bridge.tensor(mgr, np.zeros(1, np.uint32)))
        self.aux = self.tensors[AUX] = self._own(kp_bridge.tensor(mgr, np.zeros(2, np.uint32)))
        # element counts as bound (a U8/I8 buffer's are bytes: its tensor holds padded words)
        self.counts = {**{n: int(v.size) for n, v in arrays.items()}, FLAG: 1, AUX: 2}
        words = int(arrays[cur].size)
        self.traps: list = []
        steps = []  # (algorithm, the tensors it binds: its barrier's scope)
        for prog, alias in ((guarded(program), {}), (compare_program(words), {_CUR: cur, _NXT: nxt}),
                            (finalize_program(max_iterations), {})):
            kernel = device.compile(prog, optimize=False)  # as written: one stage, one dispatch
            bound = {b.name: self.tensors[alias.get(b.name, b.name)] for b in kernel.bindings}
            # vyre's grid rule reads only sizes: the bound tensors' element counts.
            sized = {n: np.empty(self.counts[alias.get(n, n)], np.uint32) for n in bound}
            (grid,) = kernel.grids_for(sized)
            if len(kernel.stages) != 1:  # compiled as written: one stage (never split by the optimiser)
                raise ConvergenceError(f"{len(kernel.stages)} stages compiled for a fixpoint round. Fix: report it; "
                                       "the loop records one dispatch per program.")
            st = kernel.stages[0]
            by_binding = {b.binding: bound[b.name] for b in st.lowered.bindings}
            if st.lowered.trap_binding is not None:
                trap = self._own(kp_bridge.tensor(mgr, np.zeros(TRAP_WORDS, np.uint32)))
                by_binding[st.lowered.trap_binding] = trap
                self.traps.append((kernel, trap))
            for slot in range(max(by_binding, default=-1) + 1):  # kp binds tensor k at binding k
                if slot not in by_binding:
                    by_binding[slot] = self._own(kp_bridge.tensor(mgr, np.zeros(1, np.uint32)))
            algo = kp_bridge.algorithm(mgr, [by_binding[s] for s in sorted(by_binding)], st.spirv, grid,
                                       [self.counts[alias.get(n, n)] for n in st.lowered.byte_lengths])
            self.algorithms.append(algo)
            steps.append((algo, list(by_binding.values())))
        self.upload = mgr.sequence()
        self.upload.record(kp_bridge.sync_device([t for t in self.owned]))
        self.batch = mgr.sequence()
        for _ in range(rounds_per_submit):
            for algo, touched in steps:
                self.batch.record(kp_bridge.dispatch(algo))
                self.batch.record(kp_bridge.compute_barrier(touched))
        self.batch.record(kp_bridge.sync_local([self.flag]))
        self.flag_word = self.flag.data()  # mapped host view, made once (kp's data() copies per call)

    def _own(self, t: Any) -> Any:
        self.owned.append(t)
        return t

    def destroy(self) -> None:
        for obj in (self.batch, self.upload, *self.algorithms, *self.owned):
            if obj is not None:
                obj.destroy()


def converge(device: "Device", program: Program, inputs: Inputs, contract: Target = None, *,
             current: Optional[str] = None, next: Optional[str] = None,  # noqa: A002 - vyre's name
             rounds_per_submit: int = DEFAULT_ROUNDS_PER_SUBMIT) -> Converged:
    """Run `program` to its fixpoint on `device`; the same results and round count as
    :func:`vyre_vk.reference.convergence.converge`, with one flag word read per submission."""
    from ..ops.convergence import contract_for

    c = contract_for(contract, program)
    cur, nxt = check_loop_program(program, current, next)
    if not isinstance(rounds_per_submit, int) or isinstance(rounds_per_submit, bool) \
            or not 1 <= rounds_per_submit <= 1024:
        raise ConvergenceError(f"rounds_per_submit={rounds_per_submit!r} is not an integer in 1..1024. "
                               f"Fix: use e.g. {DEFAULT_ROUNDS_PER_SUBMIT}.")
    by_name = {b.name: b for b in program.buffers}
    if by_name[cur].element is not U32:
        raise ConvergenceError(f"frontier `{cur}` is {by_name[cur].element.name}; the device loop compares u32 words. "
                               "Fix: declare the frontiers U32 (vyre's are bitsets of u32 words).")
    device.check_usable()
    program.validate()
    arrays = Binder(program.buffers)(inputs)
    for role, name in (("current", cur), ("next", nxt)):
        if isinstance(arrays[name], DeviceArray):
            raise ConvergenceError(f"the {role} frontier `{name}` was given as a DeviceArray, which the loop would "
                                   "overwrite. Fix: pass it as a NumPy array (the loop keeps its own copy resident).")
    for b in program.buffers:
        if b.is_result and isinstance(arrays.get(b.name), DeviceArray):
            raise ConvergenceError(f"ReadWrite buffer `{b.name}` was given as a DeviceArray, which the loop would "
                                   "overwrite. Fix: pass it as a NumPy array.")
    if arrays[cur].size != arrays[nxt].size:
        raise ConvergenceError(f"`{cur}` holds {arrays[cur].size} elements and `{nxt}` {arrays[nxt].size}: the "
                               "frontiers could never compare equal. Fix: bind both with the same length.")
    with device.lock:
        loop = _Loop(device, program, arrays, cur, nxt, c.max_iterations, rounds_per_submit)
        try:
            loop.upload.eval()
            submits = 0
            while True:
                loop.batch.eval()
                submits += 1
                flag = int(loop.flag_word[0])
                if flag or submits * rounds_per_submit >= c.max_iterations:
                    break
            results = [b.name for b in program.buffers if b.is_result]
            download = device.manager.sequence()
            download.record(kp_bridge.sync_local([loop.tensors[n] for n in results] + [t for _, t in loop.traps]))
            download.eval()
            download.destroy()
            _check_traps(loop)
            outputs = {n: loop.tensors[n].data().copy() for n in results}
            for b in program.buffers:  # a byte buffer's bytes, not its padded words
                if b.name in outputs and b.element.is_byte:
                    outputs[b.name] = kp_bridge.byte_view(outputs[b.name], loop.counts[b.name],
                                                          np.dtype(b.element.numpy)).copy()
        finally:
            loop.destroy()
    if flag == 0 or flag & EXCEEDED_BIT:
        raise ConvergenceError(
            f"`{c.op_id}` did not converge in {c.max_iterations} rounds on {device.name} (`{nxt}` still changes; "
            "vyre's DidNotConverge). Fix: raise the ConvergenceContract's max_iterations or shrink the input "
            "(a frontier over n nodes converges within n + 1 rounds).", rounds=c.max_iterations)
    return Converged(outputs, flag, cur, nxt, readbacks=submits, submits=submits + 2)


def _check_traps(loop: _Loop) -> None:
    for kernel, trap in loop.traps:
        words = trap.data()
        if words[0]:
            st = kernel.stages[0]
            code = int(words[1])
            raise KernelTrapError(0, code, st.lowered.trap_codes.get(code, "unknown trap"), int(words[2]),
                                  int(words[3]), f"invocation {int(words[2])} of a fixpoint round")


__all__ = ["converge", "guarded", "compare_program", "finalize_program", "DEFAULT_ROUNDS_PER_SUBMIT",
           "ConvergenceError"]
