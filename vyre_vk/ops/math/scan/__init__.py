"""vyre-libs math scan ops (vyre-libs/src/math/scan); importing registers them."""
from . import prefix_sum  # noqa: F401
