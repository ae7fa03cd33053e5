"""nn activations (vyre-libs/src/nn/activation); importing registers them."""
from . import (cross_entropy, embedding, gelu, leaky_relu_sq, logit_softcap, mlp_4x_leaky_sq,  # noqa: F401
               parallel_residual_block, relu, silu, skip_gate, swiglu)
