"""vyre-libs math::conv (vyre-libs/src/math/conv); importing registers them."""
from . import conv2d, im2col  # noqa: F401
