"""vyre-libs logical ops (vyre-libs/src/logical); importing registers them."""
from . import binary  # noqa: F401
