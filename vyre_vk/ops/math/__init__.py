"""vyre-libs math ops (vyre-libs/src/math); importing registers them."""
from . import atomic, broadcast, conv, linalg, reduce_variance  # noqa: F401
