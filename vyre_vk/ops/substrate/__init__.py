"""vyre-libs substrate ops (vyre-libs/src/substrate_catalog.rs); importing registers them."""
from . import catalog  # noqa: F401
