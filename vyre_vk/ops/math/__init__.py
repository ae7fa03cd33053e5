"""vyre-libs math ops (vyre-libs/src/math); importing registers them."""
from . import atomic, broadcast, linalg, reduce_variance  # noqa: F401
