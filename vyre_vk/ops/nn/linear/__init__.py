"""nn linear layers (vyre-libs/src/nn/linear); importing registers them."""
from . import linear, linear_4bit, relu, rms_norm, silu, tiled  # noqa: F401
