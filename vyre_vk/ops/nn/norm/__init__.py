"""nn normalisation (vyre-libs/src/nn/norm); importing registers them."""
from . import layer_norm, layerwise_ln_scale, rms_norm  # noqa: F401
