"""vyre-libs representation ops (vyre-libs/src/representation); importing registers them."""
from . import unpack  # noqa: F401
