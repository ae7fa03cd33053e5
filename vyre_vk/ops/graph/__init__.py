"""vyre-libs graph ops (vyre-libs/src/graph over vyre-primitives/src/graph/vast_tree_walk.rs);
importing registers them."""
from . import ast_walk  # noqa: F401
