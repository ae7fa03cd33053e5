"""nn backward ops (vyre-libs/src/nn/backward); importing registers them."""
from . import (leaky_relu_sq_backward, ln_scale_backward, logit_softcap_backward, mlp_backward,  # noqa: F401
               partial_rope_backward, qk_gain_backward, residual_block_backward, skip_gate_backward)
