"""vyre-libs scan ops (vyre-libs/src/scan/substring); importing registers them."""
from . import substring  # noqa: F401
