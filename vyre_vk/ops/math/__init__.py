"""vyre-libs math ops (vyre-libs/src/math); importing registers them."""
from . import algebra, atomic, broadcast, conv, fft, linalg, reduce_variance, succinct  # noqa: F401
