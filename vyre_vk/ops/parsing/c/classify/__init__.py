"""`vyre-libs::parsing::c11_classify_vast_node_kinds` (vyre-libs/src/parsing/c/parse/vast/classify):
the typed kind of every VAST row. program.py builds and registers the op; the modules beside it
hold its parts in vyre's order (context: neighbour lets; decl_scans: declaration-prefix scans;
typedef_suffix: typedef fallback and declarator suffix; rules: what a node is; kinds: the kind
chains) and its tables (predicates, catalog)."""
from .program import (OP_ID, c11_classify_annotated_vast_node_kinds_precomputed_context,  # noqa: F401
                      c11_classify_vast_node_kinds, c11_classify_vast_node_kinds_precomputed_context)
