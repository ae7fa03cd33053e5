"""nn linear layers (vyre-libs/src/nn/linear); importing registers them."""
from . import linear, linear_4bit, linear_4bit_affine_grouped, relu, rms_norm, silu, tiled  # noqa: F401
