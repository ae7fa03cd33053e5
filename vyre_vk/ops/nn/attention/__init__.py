"""nn attention (vyre-libs/src/nn/attention); importing registers them."""
from . import attention, flash_attention, gqa_attention, partial_rope, qk_gain, quest, softmax, turboquant  # noqa: F401
