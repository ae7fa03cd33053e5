"""nn attention (vyre-libs/src/nn/attention); importing registers them."""
from . import attention, gqa_attention, partial_rope, qk_gain, softmax  # noqa: F401
