"""nn mixture-of-experts routing (vyre-libs/src/nn/moe); importing registers them."""
from . import gating, softmax_top_k, top_k  # noqa: F401
