"""The optimiser: pure IR -> IR passes that keep the reference result bit-identical.

Passes (in the order `optimize` runs them): ``constant_fold``, ``dce``, ``cse``, ``licm``,
``hoist_invariant`` (splits a program into a pre-pass + main program: a graph),
``fission`` (independent loop chains of a pre-pass in separate invocations + a combine),
``workgroup_size`` (free local size per device class), ``coarsen`` (4 elements per
invocation for elementwise programs). See :func:`optimize`.
"""
from .analysis import uses_workgroup_scope
from .cse import cse
from .dce import dce
from .dispatch import BEST_LOCAL_SIZE, coarsen, coarsen_factor, device_class, invocation_total, workgroup_size
from .fission import fission
from .fold import constant_fold
from .hoist import Hoisted, hoist_invariant
from .licm import licm
from .pipeline import DEFAULT_PASSES, PASS_ORDER, PassReport, ProgramGraph, optimize, run_reference

__all__ = ["optimize", "PassReport", "ProgramGraph", "run_reference", "PASS_ORDER", "DEFAULT_PASSES",
           "constant_fold", "cse", "dce", "licm", "hoist_invariant", "Hoisted", "fission", "workgroup_size", "coarsen",
           "coarsen_factor", "device_class", "invocation_total", "BEST_LOCAL_SIZE", "uses_workgroup_scope"]
