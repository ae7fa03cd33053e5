"""vyre-libs math::fft (vyre-libs/src/math/fft); importing registers them."""
from . import convolution, fft4, fft_radix2  # noqa: F401
