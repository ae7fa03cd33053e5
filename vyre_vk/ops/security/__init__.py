"""vyre-libs security ops (vyre-libs/src/security) that run in one dispatch; importing registers them.

The fixpoint ops (flows_to*, taint_flow, taint_pollution, dominator_tree, bounded_by_comparison,
sanitized_by) need the re-dispatch-until-converged runtime and live elsewhere."""
from . import aliases_dataflow, catalog, label_by_family, path_reconstruct  # noqa: F401
from . import fixpoint_hit, fixpoint_reach  # noqa: F401  (ConvergenceContract ops: the convergence helper's)
