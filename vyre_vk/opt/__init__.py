"""The optimiser: pure IR -> IR passes that keep the reference result bit-identical.

Passes (in the order `optimize` runs them, ``PASS_ORDER``; their names are ``PASS_NAMES``):
``constant_fold``, ``dce``, ``single_invocation`` (a program whose invocations all compute
the same stores runs as invocation 0 alone: single.py), ``split_phases`` (one workgroup's barrier-separated phases as
separate kernels, its workgroup memory as scratch; or every workgroup's phases, each
workgroup's memory a slice of scratch: wgphases.py), ``spread`` (those phases' strided maps as
one invocation per element, their strided folds as chains over many workgroups with the map
part computed first), ``tabulate`` (values that depend on the invocation only through a key,
``id // c``, computed once per key and iteration by pre-passes: keyed.py proves the key,
tables.py keeps one pre-pass per table), ``split_invocations`` (loops that each own one
output column become a grid dimension), ``keychain`` (a loop's carried values that depend on the
invocation only through a key, with what is computed from them, run once per key: a serial kernel
per group of carried values, parallel map kernels between them, tables for the loop: keychain.py,
distribute.py), ``guard_idle`` (workgroups past every effect's bound
exit at once), ``coalesce`` (a loop whose lanes walk rows of a small, re-read buffer reads a column-major copy
made by a pre-pass), ``cse``, ``licm``, ``hoist_invariant`` (splits a program into a
pre-pass + main program: a graph), ``fission`` (independent loop chains of a pre-pass in
separate invocations + a combine), ``split_chains`` and ``reassociate`` (the fast precision only:
long folds cut into pieces over the grid, split-K sums), ``unroll`` (load prefetch in long reduction loops),
``workgroup_size`` (free local size per device class), ``coarsen`` (4 elements per
invocation for elementwise programs). Each is an object of the shape :class:`Pass`
(protocol.py), declared next to its implementation. See :func:`optimize`.
"""
from .analysis import uses_workgroup_scope
from .cse import CSE, cse
from .dce import DCE, dce
from .dispatch import (BEST_LOCAL_SIZE, COARSEN, WORKGROUP_SIZE, coarsen, coarsen_factor, device_class,
                       invocation_total, workgroup_size)
from .fission import FISSION, fission
from .fold import CONSTANT_FOLD, constant_fold
from .hoist import HOIST_INVARIANT, Hoisted, hoist_invariant
from .licm import LICM, licm
from .phases import split_phases
from .wgphases import SPLIT_PHASES
from .pipeline import (DEFAULT_PASSES, MAX_FISSIONS, MAX_STAGES, PASS_NAMES, PASS_ORDER, PASSES, PassReport,
                       ProgramGraph, optimize, run_reference)
from .protocol import OptimizerError, Pass, PassBase, PassContext, Rewrite
from .spread import SPREAD
from .unroll import UNROLL_LOADS, unroll_loads

__all__ = ["optimize", "PassReport", "ProgramGraph", "run_reference", "PASS_ORDER", "PASS_NAMES", "PASSES",
           "DEFAULT_PASSES", "MAX_STAGES", "MAX_FISSIONS", "Pass", "PassBase", "PassContext", "Rewrite",
           "OptimizerError", "constant_fold", "cse", "dce", "licm", "hoist_invariant", "Hoisted", "fission",
           "unroll_loads", "workgroup_size", "coarsen", "CONSTANT_FOLD", "DCE", "CSE", "LICM", "HOIST_INVARIANT",
           "FISSION", "UNROLL_LOADS", "WORKGROUP_SIZE", "COARSEN", "coarsen_factor", "device_class",
           "invocation_total", "BEST_LOCAL_SIZE", "uses_workgroup_scope", "SPLIT_PHASES", "split_phases", "SPREAD"]
