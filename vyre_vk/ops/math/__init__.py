"""vyre-libs math ops (vyre-libs/src/math); importing registers them."""
from . import algebra, atomic, broadcast, conv, fft, linalg, reduce_variance, succinct  # noqa: F401
from . import avg_floor, bit_count_ops, clamp_u32, reduce_mean, scan, square, weighted_sum, wrapping_neg  # noqa: F401,E501
