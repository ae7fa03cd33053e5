"""vyre-libs math ops (vyre-libs/src/math); importing registers them."""
from . import atomic, broadcast, conv, fft, linalg, reduce_variance  # noqa: F401
