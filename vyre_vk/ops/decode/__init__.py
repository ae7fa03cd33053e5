"""vyre-libs decode ops (vyre-libs/src/decode); importing registers them."""
from . import base64, encodex, hex, inflate  # noqa: F401
