"""vyre-libs math::linalg (vyre-libs/src/math/linalg); importing registers them."""
from . import dot, matmul, matmul_strassen, matmul_tiled  # noqa: F401
