"""nn normalisation (vyre-libs/src/nn/norm); importing registers them."""
from . import layer_norm, rms_norm  # noqa: F401
